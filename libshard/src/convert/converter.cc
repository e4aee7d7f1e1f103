// Convert: the conversion's steps in order (converter.h). The encode pipeline
// is encode_pipeline.cc's, DryRun is dry_run.cc's.
#include "libshard/convert/converter.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <map>
#include <optional>

#include "convert/converter_internal.h"
#include "libshard/convert/manifest_io.h"
#include "libshard/convert/output_lock.h"
#include "libshard/io/open_file.h"
#include "libshard/io/writable_file.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/text_escape.h"
#include "libshard/util/sha256.h"
#include "libshard/util/threads.h"
#include "util/catch_status.h"

namespace libshard::convert {
namespace {

using internal::EncodeAndWrite;
using internal::ListInput;
using internal::PlanId;
using internal::RemoveStaleShards;
using internal::ReusableShard;
using internal::ShardSink;
using internal::Work;

// Once the output folder is locked, a file that is missing or refused is
// file-system trouble (another process removed it), not a usage error:
// converter.h keeps kNotFound and kInvalidArgument for what is found before
// anything is written.
Status Started(Status s) {
  if (s.code() == StatusCode::kNotFound || s.code() == StatusCode::kInvalidArgument) return IOError(s.message());
  return s;
}

std::string NowRfc3339() {
  std::time_t t = std::time(nullptr);
  std::tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The checks made before anything is read.
Status CheckOptions(const ConvertOptions& o) {
  if (o.input.empty()) return InvalidArgumentError("no input given");
  if (o.output.empty()) return InvalidArgumentError("no output folder given");
  LIBSHARD_RETURN_IF_ERROR(util::CheckThreadCount(o.threads));
  LIBSHARD_RETURN_IF_ERROR(CheckOutputFolder(o));
  if (o.leak_distance < 0 || o.leak_distance > kMaxLeakDistance) {
    return InvalidArgumentError("leak distance must be in 0.." + std::to_string(kMaxLeakDistance) + ", not " +
                                std::to_string(o.leak_distance));
  }
  if ((o.dedup_within || o.dedup_across) && o.num_tasks > 1) {
    return InvalidArgumentError("--dedup " + DedupName(o) + " needs the whole split in one run, not " +
                                std::to_string(o.num_tasks) + " tasks (shard merge lists the duplicates instead)");
  }
  LIBSHARD_RETURN_IF_ERROR(ValidateAnnotationOptions(o.annotations));
  if (o.annotations.format != AnnotationFormat::kNone && o.annotations.format != AnnotationFormat::kVoc &&
      !o.list.labels_file.empty()) {
    return InvalidArgumentError(std::string("--labels names no classes with --") +
                                AnnotationFormatName(o.annotations.format) + ": the annotations name them");
  }
  return ValidateEncodeOptions(o.encode);
}

// The colour map of o.mask_labels_file (nullopt without one); its classes
// must leave the mask ignore index free.
StatusOr<std::optional<image::MaskColorMap>> ReadMaskLabels(const ConvertOptions& o) {
  if (o.mask_labels_file.empty()) return std::optional<image::MaskColorMap>();
  LIBSHARD_ASSIGN_OR_RETURN(std::string csv, io::ReadFileToString(o.mask_labels_file, 64 << 20));
  StatusOr<image::MaskColorMap> m = image::MaskColorMap::FromCsv(csv);
  if (!m.ok()) return m.status().WithContext(o.mask_labels_file);
  const int ignore = o.encode.mask_options.ignore_index;
  if (ignore < m->size()) {
    return InvalidArgumentError("mask ignore index " + std::to_string(ignore) + " is the index of class '" +
                                EscapeText(m->classes()[ignore].name) + "' in " + o.mask_labels_file + " (" +
                                std::to_string(m->size()) + " classes); choose an index from " +
                                std::to_string(m->size()) + " to 255");
  }
  return std::optional<image::MaskColorMap>(std::move(*m));
}

// Every shard's plan_id by plan position, and all of them (not only this
// task's) as one text: together they fingerprint the whole plan, which all
// tasks of one conversion must share.
struct PlanIds {
  std::map<size_t, std::string> by_shard;
  std::string all;
};

PlanIds MakePlanIds(const std::string& options_bytes, const Listing& listing, const ShardPlan& plan) {
  PlanIds ids;
  for (size_t pos = 0; pos < plan.shards.size(); ++pos) {
    ids.by_shard[pos] = PlanId(options_bytes, listing, plan.shards[pos]);
    ids.all += ids.by_shard[pos] + "\n";
  }
  return ids;
}

// Sorts this task's shards (`mine`) into complete shards of an earlier run,
// kept (their entries appended to *entries), and shards to write, returned in
// plan order; removes what an interrupted or damaged earlier shard left.
std::vector<size_t> KeepOrRedo(const ConvertOptions& o, const ShardPlan& plan, const std::vector<size_t>& mine,
                               const PlanIds& ids, std::vector<ShardEntry>* entries, ConvertResult* result) {
  std::vector<size_t> todo;
  for (size_t pos : mine) {
    const PlannedShard& s = plan.shards[pos];
    const std::string temp = o.output + "/" + kStateDir + "/" + s.file + ".partial";
    ::unlink(temp.c_str());
    ::unlink((temp + ".idx").c_str());
    std::string damaged, retried;
    if (std::optional<ShardEntry> e = ReusableShard(o, s, ids.by_shard.at(pos), &damaged, &retried)) {
      entries->push_back(std::move(*e));
      ++result->shards_reused;
      continue;
    }
    // A shard to redo loses its old file first: its new entry is written
    // before the new shard is renamed into place, and a crash in between
    // must not leave the new entry beside the old bytes (equal sizes would
    // make the next run reuse them).
    ::unlink((o.output + "/" + s.file).c_str());
    ::unlink((o.output + "/" + s.file + ".idx").c_str());
    ::unlink((o.output + "/" + s.file + ".labels").c_str());
    if (!damaged.empty()) result->redone_damaged.push_back(damaged);
    if (!retried.empty()) result->redone_retried.push_back(retried);
    todo.push_back(pos);
  }
  return todo;
}

// The samples of the shards `todo`, in plan order.
std::vector<Work> WorkOf(const ShardPlan& plan, const std::vector<size_t>& todo) {
  std::vector<Work> work;
  for (size_t pos : todo) {
    const PlannedShard& s = plan.shards[pos];
    for (size_t k = 0; k < s.samples.size(); ++k) {
      work.push_back({pos, s.samples[k], k == 0, k + 1 == s.samples.size()});
    }
  }
  return work;
}

std::vector<LabelEntry> LabelEntries(const Listing& listing) {
  std::vector<LabelEntry> labels;
  for (size_t i = 0; i < listing.class_names.size(); ++i) {
    LabelEntry l;
    l.set_label(static_cast<int64_t>(i) + listing.label_offset);
    l.set_name(listing.class_names[i]);
    labels.push_back(l);
  }
  return labels;
}

std::vector<Reject> ListingRejects(const Listing& listing) {
  std::vector<Reject> rejects;
  for (const ListingReject& r : listing.rejects) {
    Reject x;
    x.set_path(EscapeText(r.path));
    x.set_reason(EscapeText(r.reason));
    rejects.push_back(x);
  }
  return rejects;
}

// The colour-mask classes in index order, for manifest.json.
void AddMaskClasses(const image::MaskColorMap& map, Manifest* m) {
  for (int i = 0; i < map.size(); ++i) {
    const image::MaskColorClass& c = map.classes()[i];
    MaskClass* out = m->add_mask_classes();
    out->set_index(i);
    out->set_name(EscapeText(c.name));
    out->set_r(c.r);
    out->set_g(c.g);
    out->set_b(c.b);
  }
}

// The object label map and the annotation counts, for manifest.json.
void AddAnnotations(AnnotationFormat format, const AnnotationSummary& a, Manifest* m) {
  for (const ObjectClass& c : a.classes) {
    LabelEntry* l = m->add_object_labels();
    l->set_label(c.label);
    l->set_name(EscapeText(c.name));
  }
  AnnotationCounts* n = m->mutable_annotations();
  n->set_format(AnnotationFormatName(format));
  n->set_annotated_images(a.annotated_images);
  n->set_unannotated_images(a.unannotated_images);
  n->set_missing_images(a.missing_images);
  n->set_unmatched_annotations(a.unmatched_annotations);
  n->set_boxes(a.boxes);
}

// The run's manifest (a task's partial one for a split run) from the shard
// entries, kept and written; `run` is left to the caller.
StatusOr<Manifest> AssembleRunManifest(const ConvertOptions& o, const ConversionOptions& options_proto,
                                       const Listing& listing, std::vector<ShardEntry> entries, const PlanIds& ids,
                                       const std::optional<image::MaskColorMap>& mask_map) {
  // The label keys are required only when every sample has a label (an
  // empty CSV label writes a record without them).
  bool labeled = !listing.samples.empty(), masks = false;
  for (const SourceSample& s : listing.samples) {
    labeled &= s.label >= 0;
    masks |= !s.mask_path.empty();
  }
  LIBSHARD_ASSIGN_OR_RETURN(Manifest m,
                            AssembleManifest(options_proto, LabelEntries(listing), RecordSchema(o, labeled, masks),
                                             std::move(entries), ListingRejects(listing), o.num_tasks == 1));
  m.set_plan_id(util::Sha256Hex(ids.all));
  if (mask_map) AddMaskClasses(*mask_map, &m);
  if (o.annotations.format != AnnotationFormat::kNone) AddAnnotations(o.annotations.format, listing.annotations, &m);
  return m;
}

// Rejects whose reason carries internal::kRetryNote.
uint64_t CountTransientRejects(const Manifest& m) {
  const std::string_view note = internal::kRetryNote;
  uint64_t n = 0;
  for (const Reject& r : m.rejects()) {
    n +=
        r.reason().size() >= note.size() && r.reason().compare(r.reason().size() - note.size(), note.size(), note) == 0;
  }
  return n;
}

// rejects.tsv (single run) and the manifest, the manifest last.
Status WriteManifestFiles(const ConvertOptions& o, ConvertResult* result) {
  if (o.num_tasks == 1) {
    LIBSHARD_RETURN_IF_ERROR(WriteRejectsTsv(o.output + "/rejects.tsv", result->manifest, o.sync));
    LIBSHARD_RETURN_IF_ERROR(WriteLabelMap(o.output, result->manifest, o.sync));
    DropShardDetails(&result->manifest);  // O(shards + classes): the entries keep them
    result->manifest_path = manifest::ManifestInFolder(o.output);
  } else {
    result->manifest_path = TaskManifestPath(o.output, o.task_index, o.num_tasks);
  }
  return io::WriteFileAtomically(result->manifest_path, manifest::ToJson(result->manifest), o.sync);
}

}  // namespace

StatusOr<ConvertResult> Convert(const ConvertOptions& in, const ProgressFn& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string started = NowRfc3339();
  const ConvertOptions o = Normalized(in);
  LIBSHARD_RETURN_IF_ERROR(CheckOptions(o));
  LIBSHARD_ASSIGN_OR_RETURN(const std::optional<image::MaskColorMap> mask_map, ReadMaskLabels(o));
  EncodeOptions encode = o.encode;
  encode.fingerprint = o.leaks != LeakMode::kOff || o.dedup_within || o.dedup_across;
  encode.features = o.list.features;
  if (mask_map) {
    encode.mask_labels = &*mask_map;
    encode.mask_labels_file = o.mask_labels_file;
  }

  LIBSHARD_ASSIGN_OR_RETURN(Listing listing, ListInput(o));
  LIBSHARD_RETURN_IF_ERROR(internal::CheckDedupSplits(o, listing));
  std::map<int64_t, std::string> object_classes;
  for (const ObjectClass& c : listing.annotations.classes) object_classes[c.label] = c.name;
  encode.object_classes = &object_classes;
  encode.box_min_visible = o.annotations.min_visible;
  encode.object_truncated = o.annotations.format == AnnotationFormat::kVoc;
  LIBSHARD_ASSIGN_OR_RETURN(ShardPlan plan, MakeShardPlan(listing, o.plan));
  LIBSHARD_ASSIGN_OR_RETURN(std::vector<size_t> mine, TaskShards(plan, o.num_tasks, o.task_index));
  if (o.fail_on_error && !listing.rejects.empty()) {
    return FailedPreconditionError(SourceFilePath(listing.root, listing.rejects[0].path) + ": " +
                                   listing.rejects[0].reason);
  }

  // Held until Convert returns: one writer per output folder.
  LIBSHARD_ASSIGN_OR_RETURN(OutputLock lock,
                            OutputLock::Acquire(o.output, o.num_tasks == 1 ? LockMode::kExclusive : LockMode::kTask,
                                                o.task_index, o.num_tasks));
  const ConversionOptions options_proto = ToProto(o);
  const PlanIds ids = MakePlanIds(internal::PlanOptionsBytes(options_proto), listing, plan);

  // Keep complete shards of an earlier run; remove its leftovers and the
  // shards of an earlier plan.
  ConvertResult result;
  result.removed_stale = RemoveStaleShards(o.output, o.plan.prefix, plan);
  result.warnings = listing.warnings;
  result.skipped = listing.skipped;
  result.layout = LayoutSummary(listing);
  result.layout_detail = LayoutOf(listing);
  if (o.on_listed) o.on_listed(result);
  std::vector<ShardEntry> entries;
  const std::vector<size_t> todo = KeepOrRedo(o, plan, mine, ids, &entries, &result);

  const int threads = util::ThreadCount(o.threads);
  ConvertOptions sink_options = o;
  sink_options.encode = encode;
  ShardSink sink(sink_options, plan, listing, ids.by_shard);
  // --dedup: the first pass decides which samples are duplicates.
  std::optional<internal::PreRejects> dropped;
  if ((o.dedup_within || o.dedup_across) && !todo.empty()) {
    StatusOr<internal::PreRejects> d = internal::DecideDuplicates(o, encode, listing, plan, todo, entries, threads);
    if (!d.ok()) return Started(d.status());
    dropped = std::move(*d);
  }
  uint64_t gray_expanded = 0;
  const std::vector<Work> work = WorkOf(plan, todo);
  // The last call's progress, for the leak check's call after the samples.
  Progress last_progress;
  const ProgressFn tracked = !progress ? ProgressFn() : [&](const Progress& p) {
    last_progress = p;
    progress(p);
  };
  LIBSHARD_RETURN_IF_ERROR(Started(EncodeAndWrite(listing, encode, work, todo.size(), threads, o.fail_on_error,
                                                  dropped ? &*dropped : nullptr, tracked, &sink, &gray_expanded)));
  for (ShardEntry& e : sink.entries()) entries.push_back(std::move(e));
  result.shards_written = static_cast<uint32_t>(sink.entries().size());
  if (o.encode.decode.channels == image::ChannelMode::kRgb) result.gray_expanded = gray_expanded;

  StatusOr<Manifest> manifest = AssembleRunManifest(o, options_proto, listing, std::move(entries), ids, mask_map);
  if (!manifest.ok()) return Started(manifest.status());
  result.manifest = std::move(*manifest);
  RunInfo* run = result.manifest.mutable_run();
  run->set_started(started);
  run->set_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  run->set_threads(threads);
  run->set_num_tasks(o.num_tasks);
  run->set_task_index(o.task_index);
  if (o.num_tasks == 1) {  // a task's manifest keeps the fingerprints for shard merge
    if (progress && o.leaks != LeakMode::kOff) {
      Progress p = last_progress;
      for (const SplitEntry& split : result.manifest.splits()) {
        for (const ShardEntry& e : split.shards()) p.leak_check_images += e.image_hashes_size();
      }
      if (p.leak_check_images > 0) {
        LIBSHARD_RETURN_IF_ERROR(Started(util::CatchAsStatus(
            [&] {
              progress(p);
              return Status::OK();
            },
            [] { return std::string("in the progress callback"); })));
      }
    }
    LIBSHARD_RETURN_IF_ERROR(Started(
        CheckLeaks(o.output, o.leaks, o.leak_distance, o.sync, &result.manifest, &result.shards_without_hashes)));
  }
  result.rejected = result.manifest.rejects_size();
  result.transient_rejects = CountTransientRejects(result.manifest);
  LIBSHARD_RETURN_IF_ERROR(Started(WriteManifestFiles(o, &result)));
  return result;
}

}  // namespace libshard::convert

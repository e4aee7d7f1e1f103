#include "libshard/convert/converter.h"

#include <sys/stat.h>
#include <unistd.h>

#include <oneapi/tbb/concurrent_queue.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/task_arena.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "convert/converter_internal.h"
#include "libshard/convert/manifest_io.h"
#include "libshard/convert/output_lock.h"
#include "libshard/io/open_file.h"
#include "libshard/io/writable_file.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/text_escape.h"
#include "libshard/util/sha256.h"
#include "util/catch_status.h"

namespace libshard::convert {
namespace {

using internal::FileSize;
using internal::IsTransient;
using internal::Item;
using internal::kMaxSourceBytes;
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

}  // namespace

StatusOr<DryRunReport> DryRun(const ConvertOptions& in) {
  const ConvertOptions o = Normalized(in);
  LIBSHARD_RETURN_IF_ERROR(ValidateEncodeOptions(o.encode));
  DryRunReport report;
  LIBSHARD_ASSIGN_OR_RETURN(report.listing, ListInput(o));
  LIBSHARD_ASSIGN_OR_RETURN(report.plan, MakeShardPlan(report.listing, o.plan));
  const Listing& l = report.listing;
  std::map<std::pair<std::string, std::string>, uint64_t> counts;
  for (const SourceSample& s : l.samples) {
    ++counts[{s.split, std::string(ClassName(l, s.label))}];
  }
  for (const auto& [k, n] : counts) report.counts.push_back({k.first, k.second, n});

  // Header probes in parallel; 1 MiB covers any JPEG's markers up to SOS
  // in practice (EXIF segments are at most 64 KiB).
  std::vector<std::string> reasons(l.samples.size());
  std::vector<std::string> formats(l.samples.size());
  std::vector<char> gray(l.samples.size(), 0);
  auto probe = [&](size_t i) {
    const std::string path = SourceFilePath(l.root, l.samples[i].path);
    std::string head(1 << 20, '\0');
    auto f = io::OpenForRead(path);  // regular files only: never blocks on a FIFO
    const int64_t n = f.ok() ? io::PreadFull(f->get(), head.data(), head.size(), 0) : 0;
    head.resize(static_cast<size_t>(std::max<int64_t>(n, 0)));
    StatusOr<image::ImageInfo> info = image::ProbeImage(head);
    if (!info.ok()) {
      formats[i] = "unknown";
      reasons[i] = "undecodable: " + info.status().message();
      return;
    }
    formats[i] = image::ImageFormatName(info->format);
    gray[i] = info->channels <= 2;
    std::string r;
    auto add = [&r](const char* what) { r += r.empty() ? what : std::string(", ") + what; };
    if (info->cmyk) add(info->ycck ? "YCCK" : "CMYK");
    if (info->progressive) add(info->format == image::ImageFormat::kPng ? "interlaced" : "progressive");
    if (info->bit_depth == 16) add("16-bit");
    if (info->bit_depth == 12) add("12-bit JPEG (not decodable)");
    if (info->has_alpha) add("alpha");
    if (info->orientation != 1) add(("EXIF-rotated (orientation " + std::to_string(info->orientation) + ")").c_str());
    if (info->arithmetic) add("arithmetic-coded");
    if (info->animated) add("animated WebP (not decodable)");
    const uint64_t pixels = static_cast<uint64_t>(info->width) * static_cast<uint64_t>(info->height);
    if (pixels > o.encode.decode.max_pixels) {  // as image::CheckPixelLimit decides
      add(("over the pixel limit (" + std::to_string(info->width) + "x" + std::to_string(info->height) + " = " +
           std::to_string(pixels) + " pixels > " + std::to_string(o.encode.decode.max_pixels) + "; rejected)")
              .c_str());
    }
    reasons[i] = r;
  };
  tbb::parallel_for(size_t{0}, l.samples.size(), [&](size_t i) {
    Status s = util::CatchAsStatus([&] { probe(i); return Status::OK(); }, [] { return "probing the image"; });
    if (!s.ok()) {
      formats[i] = "unknown";
      reasons[i] = s.message();
    }
  });
  std::map<std::string, uint64_t> fc;
  for (size_t i = 0; i < l.samples.size(); ++i) {
    ++fc[formats[i]];
    if (o.encode.decode.channels == image::ChannelMode::kRgb) report.gray_expanded += gray[i];
    if (!reasons[i].empty()) {
      Reject r;
      r.set_path(l.samples[i].path);
      r.set_reason(reasons[i]);
      report.risky.push_back(r);
    }
  }
  for (const auto& [name, n] : fc) {
    NamedCount c;
    c.set_name(name);
    c.set_count(n);
    report.formats.push_back(c);
  }
  return report;
}

StatusOr<ConvertResult> Convert(const ConvertOptions& in, const ProgressFn& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string started = NowRfc3339();
  const ConvertOptions o = Normalized(in);
  if (o.input.empty()) return InvalidArgumentError("no input given");
  if (o.output.empty()) return InvalidArgumentError("no output folder given");
  if (o.threads < 0 || o.threads > 256) return InvalidArgumentError("threads must be in 0..256 (0: one per core)");
  LIBSHARD_RETURN_IF_ERROR(CheckOutputFolder(o));
  LIBSHARD_RETURN_IF_ERROR(ValidateEncodeOptions(o.encode));

  std::optional<image::MaskColorMap> mask_map;
  EncodeOptions encode = o.encode;
  if (!o.mask_labels_file.empty()) {
    LIBSHARD_ASSIGN_OR_RETURN(std::string csv, io::ReadFileToString(o.mask_labels_file, 64 << 20));
    StatusOr<image::MaskColorMap> m = image::MaskColorMap::FromCsv(csv);
    if (!m.ok()) return m.status().WithContext(o.mask_labels_file);
    const int ignore = o.encode.mask_options.ignore_index;
    if (ignore < m->size()) {
      return InvalidArgumentError("mask ignore index " + std::to_string(ignore) + " is the index of class '" +
                                  EscapeText(m->classes()[ignore].name) + "' in " + o.mask_labels_file +
                                  " (" + std::to_string(m->size()) + " classes); choose an index from " +
                                  std::to_string(m->size()) + " to 255");
    }
    mask_map = std::move(*m);
    encode.mask_labels = &*mask_map;
    encode.mask_labels_file = o.mask_labels_file;
  }

  LIBSHARD_ASSIGN_OR_RETURN(Listing listing, ListInput(o));
  LIBSHARD_ASSIGN_OR_RETURN(ShardPlan plan, MakeShardPlan(listing, o.plan));
  LIBSHARD_ASSIGN_OR_RETURN(std::vector<size_t> mine, TaskShards(plan, o.num_tasks, o.task_index));
  if (o.fail_on_error && !listing.rejects.empty()) {
    return FailedPreconditionError(SourceFilePath(listing.root, listing.rejects[0].path) + ": " +
                                   listing.rejects[0].reason);
  }

  // Held until Convert returns: one writer per output folder.
  LIBSHARD_ASSIGN_OR_RETURN(
      OutputLock lock, OutputLock::Acquire(o.output, o.num_tasks == 1 ? LockMode::kExclusive : LockMode::kTask,
                                           o.task_index, o.num_tasks));
  const ConversionOptions options_proto = ToProto(o);
  const std::string options_bytes = options_proto.SerializeAsString();

  // Keep complete shards of an earlier run; remove its leftovers and the
  // shards of an earlier plan.
  ConvertResult result;
  result.removed_stale = RemoveStaleShards(o.output, o.plan.prefix, plan);
  result.warnings = listing.warnings;
  result.skipped = listing.skipped;
  result.layout = LayoutSummary(listing);
  std::vector<ShardEntry> entries;
  std::vector<size_t> todo;
  std::map<size_t, std::string> plan_ids;
  // Every shard's plan_id, not only this task's: together they fingerprint
  // the whole plan, which all tasks of one conversion must share.
  std::string all_plan_ids;
  for (size_t pos = 0; pos < plan.shards.size(); ++pos) {
    plan_ids[pos] = PlanId(options_bytes, listing, plan.shards[pos]);
    all_plan_ids += plan_ids[pos] + "\n";
  }
  for (size_t pos : mine) {
    const PlannedShard& s = plan.shards[pos];
    const std::string temp = o.output + "/" + kStateDir + "/" + s.file + ".partial";
    ::unlink(temp.c_str());
    ::unlink((temp + ".idx").c_str());
    std::string damaged, retried;
    if (std::optional<ShardEntry> e = ReusableShard(o, s, plan_ids[pos], &damaged, &retried)) {
      entries.push_back(std::move(*e));
      ++result.shards_reused;
    } else {
      // A shard to redo loses its old file first: its new entry is written
      // before the new shard is renamed into place, and a crash in between
      // must not leave the new entry beside the old bytes (equal sizes would
      // make the next run reuse them).
      ::unlink((o.output + "/" + s.file).c_str());
      ::unlink((o.output + "/" + s.file + ".idx").c_str());
      if (!damaged.empty()) result.redone_damaged.push_back(damaged);
      if (!retried.empty()) result.redone_retried.push_back(retried);
      todo.push_back(pos);
    }
  }

  std::vector<Work> work;
  for (size_t pos : todo) {
    const PlannedShard& s = plan.shards[pos];
    if (s.samples.empty()) continue;
    for (size_t k = 0; k < s.samples.size(); ++k) {
      work.push_back({pos, s.samples[k], k == 0, k + 1 == s.samples.size()});
    }
  }

  Progress prog;
  prog.total = work.size();
  prog.shards_total = static_cast<uint32_t>(todo.size());
  ShardSink sink(o, plan, listing, plan_ids);
  // Record buffers handed from the writer back to the encoders (at most as
  // many as the pipeline has samples in flight, plus a few).
  tbb::concurrent_queue<std::string> spare_records;
  Status failure;
  uint64_t gray_expanded = 0;  // the writer stage's (serial)
  std::atomic<bool> stop{false};
  size_t next = 0;
  const int threads = o.threads > 0 ? o.threads : tbb::this_task_arena::max_concurrency();
  tbb::task_arena arena(threads);
  // What escapes a filter (out of memory outside a sample's decode) reaches
  // here through TBB and ends the run with an error.
  Status pipeline = util::CatchAsStatus([&] {
  arena.execute([&] {
    tbb::parallel_pipeline(
        static_cast<size_t>(threads) * 4,
        tbb::make_filter<void, Work*>(
            tbb::filter_mode::serial_in_order,
            [&](tbb::flow_control& fc) -> Work* {
              if (next >= work.size() || stop.load(std::memory_order_relaxed)) {
                fc.stop();
                return nullptr;
              }
              return &work[next++];
            }) &
            tbb::make_filter<Work*, Item*>(
                tbb::filter_mode::parallel,
                [&](Work* w) -> Item* {
                  auto item = std::make_unique<Item>();
                  item->work = w;
                  if (stop.load(std::memory_order_relaxed)) return item.release();
                  const SourceSample& s = listing.samples[w->sample];
                  auto encode_sample = [&]() -> Status {
                    StatusOr<std::string> bytes =
                        io::ReadFileToString(SourceFilePath(listing.root, s.path), kMaxSourceBytes);
                    if (!bytes.ok()) return bytes.status();
                    item->bytes_read = bytes->size();
                    std::string mask;
                    if (!s.mask_path.empty()) {
                      StatusOr<std::string> m = io::ReadFileToString(s.mask_path, kMaxSourceBytes);
                      if (!m.ok()) return m.status().WithContext("mask");
                      mask = std::move(*m);
                    }
                    EncodedSample out;
                    spare_records.try_pop(out.record);  // a written record's buffer, capacity kept
                    LIBSHARD_RETURN_IF_ERROR(
                        EncodeSample(s, ClassName(listing, s.label), *bytes, mask, encode, &out, &item->stats));
                    item->record = std::move(out.record);
                    item->gray_source = out.source.channels <= 2;
                    return Status::OK();
                  };
                  // A huge image (or a low ulimit -v) is a reject, never an abort.
                  Status st = util::CatchAsStatus(encode_sample, [] { return "decoding the image"; });
                  if (!st.ok()) {
                    item->reject = st.message();
                    item->transient = IsTransient(st);
                  }
                  return item.release();
                }) &
            tbb::make_filter<Item*, void>(
                tbb::filter_mode::serial_in_order, [&](Item* raw) {
                  std::unique_ptr<Item> item(raw);
                  if (!failure.ok()) return;
                  // Nothing may escape this stage: an exception here would
                  // cancel the pipeline with the items in flight unowned.
                  failure = util::CatchAsStatus([&]() -> Status {
                    if (!item->reject.empty() && o.fail_on_error) {
                      const SourceSample& s = listing.samples[item->work->sample];
                      return FailedPreconditionError((s.origin.empty() ? "" : s.origin + ": ") +
                                                     SourceFilePath(listing.root, s.path) + ": " + item->reject);
                    }
                    LIBSHARD_RETURN_IF_ERROR(sink.Add(*item));
                    ++prog.done;
                    prog.rejected += item->reject.empty() ? 0 : 1;
                    gray_expanded += item->reject.empty() && item->gray_source ? 1 : 0;
                    prog.bytes_read += item->bytes_read;
                    prog.bytes_written += item->record.size();
                    prog.shards_done += item->work->last ? 1 : 0;
                    if (progress) progress(prog);
                    return Status::OK();
                  }, [] { return "(writing the shards)"; });
                  if (!failure.ok()) {
                    stop = true;
                    return;
                  }
                  // The record's buffer goes back for the next sample: a raw
                  // array's record is ~100 KB+, and a fresh one per sample
                  // cost page faults (a quarter of a raw conversion's time).
                  if (spare_records.unsafe_size() < static_cast<size_t>(threads) * 4) {
                    item->record.clear();
                    spare_records.push(std::move(item->record));
                  }
                }));
  });
  return Status::OK();
  }, [] { return "converting (the shard being written is removed)"; });
  if (failure.ok()) failure = pipeline;
  if (!failure.ok()) {
    sink.Abort();
    return Started(failure);
  }
  for (ShardEntry& e : sink.entries()) entries.push_back(std::move(e));
  result.shards_written = static_cast<uint32_t>(sink.entries().size());
  if (o.encode.decode.channels == image::ChannelMode::kRgb) result.gray_expanded = gray_expanded;

  std::vector<LabelEntry> labels;
  for (size_t i = 0; i < listing.class_names.size(); ++i) {
    LabelEntry l;
    l.set_label(static_cast<int64_t>(i) + listing.label_offset);
    l.set_name(listing.class_names[i]);
    labels.push_back(l);
  }
  std::vector<Reject> listing_rejects;
  for (const ListingReject& r : listing.rejects) {
    Reject x;
    x.set_path(EscapeText(r.path));
    x.set_reason(EscapeText(r.reason));
    listing_rejects.push_back(x);
  }
  // The label keys are required only when every sample has a label (an
  // empty CSV label writes a record without them).
  bool labeled = !listing.samples.empty(), masks = false;
  for (const SourceSample& s : listing.samples) {
    labeled &= s.label >= 0;
    masks |= !s.mask_path.empty();
  }
  const bool single = o.num_tasks == 1;
  StatusOr<Manifest> assembled = AssembleManifest(options_proto, labels, RecordSchema(o, labeled, masks),
                                                  std::move(entries), listing_rejects, single);
  if (!assembled.ok()) return Started(assembled.status());
  result.manifest = std::move(*assembled);
  result.manifest.set_plan_id(util::Sha256Hex(all_plan_ids));
  if (mask_map) AddMaskClasses(*mask_map, &result.manifest);
  RunInfo* run = result.manifest.mutable_run();
  run->set_started(started);
  run->set_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  run->set_threads(threads);
  run->set_num_tasks(o.num_tasks);
  run->set_task_index(o.task_index);
  result.rejected = result.manifest.rejects_size();
  for (const Reject& r : result.manifest.rejects()) {
    const std::string_view note = internal::kRetryNote;
    result.transient_rejects += r.reason().size() >= note.size() &&
                                r.reason().compare(r.reason().size() - note.size(), note.size(), note) == 0;
  }

  if (single) {
    LIBSHARD_RETURN_IF_ERROR(Started(WriteRejectsTsv(o.output + "/rejects.tsv", result.manifest, o.sync)));
    result.manifest_path = o.output + "/" + kManifestName;
  } else {
    result.manifest_path = TaskManifestPath(o.output, o.task_index, o.num_tasks);
  }
  LIBSHARD_RETURN_IF_ERROR(
      Started(io::WriteFileAtomically(result.manifest_path, manifest::ToJson(result.manifest), o.sync)));
  return result;
}

}  // namespace libshard::convert

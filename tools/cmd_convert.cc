// `shard convert INPUT -o OUT`: an image folder (or CSV manifest) to TFRecord
// shards, indices, manifest.json and rejects.tsv. The work is in
// libshard/convert/converter.h; this file maps flags to options, draws the
// progress bar and prints the summary.
#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cli_checks.h"
#include "commands.h"
#include "convert_dry_run.h"
#include "convert_flags.h"
#include "convert_help.h"
#include "json_writer.h"
#include "leak_summary.h"
#include "libshard/convert/converter.h"
#include "libshard/convert/manifest_io.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/remote/remote_convert.h"
#include "libshard/report/report.h"
#include "libshard/store/object_store.h"
#include "libshard/text_escape.h"
#include "libshard/util/byte_size.h"
#include "progress.h"

namespace shard_tool {

namespace convert = libshard::convert;
namespace image = libshard::image;
using libshard::DisplayText;
using libshard::Status;
using libshard::StatusOr;

constexpr int kExitRejected = 3;

struct ConvertFlags {
  convert::ConvertOptions o;
  std::string size, shard_size = "128MiB", resize_mode, filter = "bilinear", format = "jpeg";
  std::string reencode = "auto", on_error = "skip", channels = "rgb", alpha = "composite";
  std::string unknown_color = "error", fill, raw_filter = "none", layout = "auto";
  std::string leaks = "warn", dedup;
  std::string coco, yolo, voc;        // detection annotations (at most one)
  std::vector<std::string> features;  // --feature COLUMN:TYPE
  int mask_ignore_index = 255;
  int quality = 90, zstd_level = -5;
  double progress_interval = 10;
  uint64_t seed = 0;
  bool no_shuffle = false, dry_run = false, json = false, quiet = false, verbose = false;
  bool no_sync = false;
  bool report = false;
  CLI::App* command = nullptr;  // the `convert` subcommand the options are on
  std::optional<uint32_t> num_tasks, task_index;
  std::string staging;   // -o s3://...: the local folder converted into first
  bool recheck = false;  // -o s3://...: kept objects read back on a rerun
};
using Flags = ConvertFlags;

namespace {

// A library parse error with the flag that gave the text: "--size: ...".
template <typename T>
StatusOr<T> ForFlag(const std::string& flag, StatusOr<T> parsed) {
  if (!parsed.ok()) return libshard::InvalidArgumentError(flag + ": " + parsed.status().message());
  return parsed;
}

// A path argument the conversion reads: it must exist and be readable, else
// the run is a usage error (exit 2), not a failure.
Status CheckReadable(const std::string& flag, const std::string& path) {
  if (path.empty()) return Status::OK();
  if (::access(path.c_str(), R_OK) != 0) {
    return libshard::InvalidArgumentError(flag + path + ": cannot read: " + std::strerror(errno));
  }
  return Status::OK();
}

// An output that names an object store: s3:// is uploaded to
// (libshard/remote/remote_convert.h); any other "scheme://" is not a folder, and without this
// check the run would write a local folder named "https:" and exit 0.
Status CheckOutputIsAFolder(const std::string& output) {
  if (output.rfind("s3://", 0) == 0) return libshard::store::ParseLocation(output).status();
  const size_t colon = output.find("://");
  if (colon == std::string::npos || colon == 0) return Status::OK();
  for (size_t i = 0; i < colon; ++i) {
    const char c = output[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') return Status::OK();
  }
  return libshard::InvalidArgumentError("-o " + output +
                                        ": converting into this kind of object storage is not supported; give "
                                        "a local folder or s3://BUCKET/PREFIX");
}

}  // namespace

// --coco / --yolo / --voc: at most one, readable.
Status AnnotationsOf(Flags& f) {
  libshard::convert::AnnotationOptions& a = f.o.annotations;
  int given = 0;
  for (const auto& [flag, value, format] : {std::tuple{"--coco", &f.coco, convert::AnnotationFormat::kCoco},
                                            std::tuple{"--yolo", &f.yolo, convert::AnnotationFormat::kYolo},
                                            std::tuple{"--voc", &f.voc, convert::AnnotationFormat::kVoc}}) {
    if (value->empty()) continue;
    ++given;
    LIBSHARD_RETURN_IF_ERROR(CheckReadable(std::string(flag) + " ", *value));
    a.format = format;
    a.source = *value;
  }
  if (given > 1) return libshard::InvalidArgumentError("give one of --coco, --yolo and --voc");
  return Status::OK();
}

Status BuildConvertOptions(ConvertFlags& f) {
  convert::ConvertOptions& o = f.o;
  LIBSHARD_RETURN_IF_ERROR(CheckOutputIsAFolder(o.output));
  LIBSHARD_RETURN_IF_ERROR(CheckReadable("", o.input));
  LIBSHARD_RETURN_IF_ERROR(CheckReadable("--labels ", o.list.labels_file));
  if (o.list.masks.find("{split}") == std::string::npos) {
    LIBSHARD_RETURN_IF_ERROR(CheckReadable("--masks ", o.list.masks));
  }
  LIBSHARD_RETURN_IF_ERROR(CheckReadable("--mask-labels ", o.mask_labels_file));
  LIBSHARD_RETURN_IF_ERROR(AnnotationsOf(f));
  LIBSHARD_ASSIGN_OR_RETURN(o.list.layout, ForFlag("--layout", convert::ParseFolderLayout(f.layout)));
  o.list.features.clear();
  for (const std::string& spec : f.features) {
    LIBSHARD_ASSIGN_OR_RETURN(convert::CsvFeature feature, convert::ParseCsvFeature(spec));
    o.list.features.push_back(std::move(feature));
  }
  LIBSHARD_ASSIGN_OR_RETURN(o.plan.shard_size_bytes,
                            ForFlag("--shard-size", libshard::util::ParseByteSize(f.shard_size)));
  o.plan.seed = f.seed;
  o.plan.shuffle = !f.no_shuffle;
  image::TransformSpec& t = o.encode.transform;
  if (!f.size.empty()) {
    if (Status s = image::ParseImageSize(f.size, &t.width, &t.height); !s.ok()) {
      return libshard::InvalidArgumentError("--size: " + s.message());
    }
    t.mode = image::ResizeMode::kCenterCrop;
  }
  if (!f.resize_mode.empty()) {
    LIBSHARD_ASSIGN_OR_RETURN(t.mode, image::ParseResizeMode(f.resize_mode));
  }
  if (t.mode != image::ResizeMode::kNone && f.size.empty()) {
    return libshard::InvalidArgumentError("--resize-mode " + f.resize_mode + " needs --size");
  }
  LIBSHARD_ASSIGN_OR_RETURN(t.filter, image::ParseFilter(f.filter));
  LIBSHARD_ASSIGN_OR_RETURN(o.encode.format, image::ParseOutputFormat(f.format));
  LIBSHARD_ASSIGN_OR_RETURN(o.encode.reencode, image::ParseReencodeMode(f.reencode));
  o.encode.jpeg.quality = f.quality;
  o.encode.raw.zstd_level = f.zstd_level;
  LIBSHARD_ASSIGN_OR_RETURN(o.encode.raw.filter, ForFlag("--raw-filter", image::ParseRawFilter(f.raw_filter)));
  LIBSHARD_ASSIGN_OR_RETURN(o.encode.decode.channels, ForFlag("--channels", image::ParseChannelMode(f.channels)));
  LIBSHARD_ASSIGN_OR_RETURN(o.encode.decode.alpha, ForFlag("--alpha", image::ParseAlphaMode(f.alpha)));
  if (!f.fill.empty()) {
    LIBSHARD_ASSIGN_OR_RETURN(t.fill, ForFlag("--fill", image::ParseFillColor(f.fill)));
  }
  o.encode.mask_options.ignore_index = static_cast<uint8_t>(f.mask_ignore_index);
  LIBSHARD_ASSIGN_OR_RETURN(o.encode.mask_options.unknown,
                            ForFlag("--unknown-color", image::ParseUnknownColor(f.unknown_color)));
  if (f.on_error == "fail")
    o.fail_on_error = true;
  else if (f.on_error != "skip")
    return libshard::InvalidArgumentError("--on-error must be skip or fail");
  o.sync = !f.no_sync;
  LIBSHARD_ASSIGN_OR_RETURN(o.leaks, convert::ParseLeakMode(f.leaks));
  if (f.dedup == "within")
    o.dedup_within = true;
  else if (!f.dedup.empty())
    return libshard::InvalidArgumentError("--dedup must be within, not '" + f.dedup + "'");
  LIBSHARD_RETURN_IF_ERROR(convert::ValidateEncodeOptions(o.encode));
  LIBSHARD_RETURN_IF_ERROR(convert::CheckOutputFolder(o));

  // Flags win; the environment (Slurm, Kubernetes) fills in what they leave.
  std::optional<convert::EnvironmentTask> env;
  if (!f.num_tasks || !f.task_index) {
    LIBSHARD_ASSIGN_OR_RETURN(env, convert::TaskFromEnvironment());
  }
  const bool env_count = env && env->num_tasks > 0 && !f.num_tasks;
  const bool env_index = env && !f.task_index;
  if (f.task_index && !f.num_tasks && !env_count) {
    return libshard::InvalidArgumentError("--task-index " + std::to_string(*f.task_index) +
                                          " needs --num-tasks N (the number of tasks the work is split into, "
                                          "or SLURM_ARRAY_TASK_COUNT)");
  }
  if (env_index && !f.num_tasks && env->num_tasks == 0) {
    return libshard::InvalidArgumentError(env->source +
                                          " gives this task's index but not the number of tasks: add "
                                          "--num-tasks N (an Indexed Job's completions)");
  }
  o.num_tasks = f.num_tasks ? *f.num_tasks : env_count ? env->num_tasks : 1;
  o.task_index = f.task_index ? *f.task_index : env_index ? env->task_index : 0;
  if (o.num_tasks == 0) return libshard::InvalidArgumentError("--num-tasks must be at least 1");
  if (o.task_index >= o.num_tasks) {
    const std::string last = std::to_string(o.num_tasks - 1);
    if (env_index) {  // the count is --num-tasks: the environment's own is checked where it is read
      return libshard::InvalidArgumentError("task index " + std::to_string(o.task_index) + " from " + env->source +
                                            " is out of range for --num-tasks " + std::to_string(o.num_tasks) +
                                            " (0.." + last + ")");
    }
    return libshard::InvalidArgumentError("--task-index: task index " + std::to_string(o.task_index) +
                                          " is out of range for " + std::to_string(o.num_tasks) + " tasks" +
                                          (env_count ? " (from " + env->source + ")" : std::string()) + " (0.." + last +
                                          ")");
  }
  if (o.dedup_within && o.num_tasks > 1) {
    return libshard::InvalidArgumentError("--dedup within needs the whole split in one run, not " +
                                          std::to_string(o.num_tasks) + " tasks (shard merge lists duplicates)");
  }
  if (o.num_tasks > 1 && !f.quiet) {
    std::fprintf(stderr, "shard convert: task %u of %u (0-based)%s%s\n", o.task_index, o.num_tasks,
                 env_index || env_count ? ", from " : "", env_index || env_count ? env->source.c_str() : "");
  }
  return Status::OK();
}

namespace {

// What the listing found (ConvertOptions::on_listed, before the long part):
// warnings, the layout, skipped files, an earlier plan's shards removed.
void PrintListed(const Flags& f, const convert::ConvertResult& result) {
  const convert::ConvertResult* r = &result;
  if (f.quiet) return;
  for (const std::string& w : r->warnings) std::fprintf(stderr, "shard convert: warning: %s\n", w.c_str());
  std::fprintf(stderr, "shard convert: %s\n", r->layout.c_str());
  if (const std::string skips = convert::SkipSummary(r->skipped); !skips.empty()) {
    std::fprintf(stderr, "shard convert: %s\n", skips.c_str());
  }
  if (!r->removed_stale.empty()) {
    const size_t n = r->removed_stale.size(), show = f.verbose ? n : std::min<size_t>(n, 5);
    std::string names;
    for (size_t i = 0; i < show; ++i) names += (i ? ", " : "") + r->removed_stale[i];
    if (show < n) names += ", ... (" + std::to_string(n - show) + " more; -v lists all)";
    std::fprintf(stderr,
                 "shard convert: removed %zu shard(s) of an earlier plan from %s (another shard count or "
                 "split), with their index and entry: %s\n",
                 n, f.o.output.c_str(), names.c_str());
  }
  std::fflush(stderr);
}

// What a finished conversion says: redone shards, rejects, the summary line
// (naming `manifest`, the manifest's path or URL), --json, --report; the
// exit code.
int Summarize(Flags& f, convert::ConvertResult& result, const convert::Progress& last, const std::string& manifest) {
  convert::ConvertResult* r = &result;
  if (!f.quiet) {
    for (const std::string& d : r->redone_damaged) {
      std::fprintf(stderr, "shard convert: shard %s of an earlier run did not match its checksum: redone\n", d.c_str());
    }
    for (const std::string& d : r->redone_retried) {
      std::fprintf(stderr, "shard convert: shard %s of an earlier run: redone to retry them\n", d.c_str());
    }
  }
  const libshard::Manifest& m = r->manifest;
  const libshard::DatasetStats& st = m.stats();
  const libshard::RunInfo& run = m.run();
  if (!m.rejects().empty() && !f.quiet) {
    const int show = f.verbose ? m.rejects_size() : std::min(m.rejects_size(), 20);
    for (int i = 0; i < show; ++i) {
      std::fprintf(stderr, "shard convert: rejected %s: %s\n", m.rejects(i).path().c_str(),
                   m.rejects(i).reason().c_str());
    }
    if (show < m.rejects_size()) {
      // A task's rejects are in its own manifest; rejects.tsv is written by the merge.
      std::fprintf(stderr, "shard convert: ... %d more rejects in %s%s\n", m.rejects_size() - show,
                   f.o.num_tasks > 1 ? r->manifest_path.c_str() : f.o.output.c_str(),
                   f.o.num_tasks > 1 ? " (rejects.tsv once shard merge has run)" : "/rejects.tsv");
    }
  }
  if (!f.quiet) {
    const double secs = run.seconds() > 0 ? run.seconds() : 1e-9;
    // `last` counts this run's own samples; the manifest's stats all of them.
    const uint64_t now = last.done - last.rejected;
    const uint64_t kept = st.converted() > now ? st.converted() - now : 0;
    std::string resumed;
    if (r->shards_reused > 0) {
      resumed = "; " + std::to_string(kept) + " kept from an earlier run in " + std::to_string(r->shards_reused) +
                " shard(s), " + std::to_string(st.converted()) + " in all";
    }
    std::fprintf(stderr,
                 "shard convert: %llu converted in this run (%u shards written)%s; %llu passed through, "
                 "%llu rejected; %s; %.1f s (this run: %.0f img/s, %.1f MB/s in) -> %s\n",
                 static_cast<unsigned long long>(now), r->shards_written, resumed.c_str(),
                 static_cast<unsigned long long>(st.passed_through()), static_cast<unsigned long long>(st.rejected()),
                 OutputDescription(f.o).c_str(), run.seconds(), last.done / secs, last.bytes_read / secs / 1e6,
                 manifest.c_str());
  }
  if (r->gray_expanded > 0 && !f.quiet) {
    std::fprintf(stderr, "shard convert: %llu gray source(s) stored as RGB (--channels auto keeps them gray)\n",
                 static_cast<unsigned long long>(r->gray_expanded));
  }
  if (m.has_annotations() && !f.quiet) {
    uint64_t stored = 0, clipped = 0, dropped = 0;
    for (const libshard::BoxCount& b : m.stats().boxes()) {
      stored += b.stored();
      clipped += b.clipped();
      dropped += b.dropped();
    }
    const libshard::AnnotationCounts& a = m.annotations();
    std::fprintf(stderr,
                 "shard convert: boxes (%s, %d classes): %llu stored (%llu clipped), %llu dropped by the crop; "
                 "%llu image(s) without annotations, %llu named but missing, %llu label file(s) without an image -> "
                 "%s/label_map.pbtxt\n",
                 a.format().c_str(), m.object_labels_size(), static_cast<unsigned long long>(stored),
                 static_cast<unsigned long long>(clipped), static_cast<unsigned long long>(dropped),
                 static_cast<unsigned long long>(a.unannotated_images()),
                 static_cast<unsigned long long>(a.missing_images()),
                 static_cast<unsigned long long>(a.unmatched_annotations()), f.o.output.c_str());
  }
  if (r->transient_rejects > 0 && !f.quiet) {
    std::fprintf(stderr,
                 "shard convert: %llu reject(s) were not caused by the file (out of memory, an I/O error): the "
                 "next run of this command retries them\n",
                 static_cast<unsigned long long>(r->transient_rejects));
  }
  if (f.json) std::cout << libshard::manifest::ToJson(m);
  const int leaks = ReportLeaks("shard convert", m, r->shards_without_hashes, f.o.output + "/duplicates.tsv", f.quiet);
  if (st.converted() == 0 && r->rejected > 0) {
    std::fprintf(stderr, "shard convert: nothing converted: all %llu input(s) were rejected (%s names them)\n",
                 static_cast<unsigned long long>(r->rejected),
                 f.o.num_tasks > 1 ? r->manifest_path.c_str() : (f.o.output + "/rejects.tsv").c_str());
    return kExitFailure;
  }
  if (f.report && f.o.num_tasks == 1) {
    std::string page;
    if (Status rs = libshard::report::WriteReport(r->manifest_path, "", {}, &page); !rs.ok()) {
      std::cerr << "shard convert: --report: " << rs.message() << "\n";
      return kExitFailure;
    }
    if (!f.quiet) std::fprintf(stderr, "shard convert: report -> %s\n", page.c_str());
  }
  if (leaks != kExitOk) return leaks;
  return r->rejected > 0 ? kExitRejected : kExitOk;
}

int Run(Flags& f) {
  Status s = BuildConvertOptions(f);
  if (!s.ok()) {
    std::cerr << "shard convert: " << s.message() << "\n";
    return kExitUsage;
  }
  if (f.dry_run) return RunDryRun(f.o, f.json, f.verbose);
  ProgressBar bar(stderr, !f.quiet, "shard convert", f.progress_interval);
  const InterruptMessage interrupt("shard convert", !f.quiet && ::isatty(STDERR_FILENO));
  convert::Progress last;  // this run's own work (shards kept from an earlier run excluded)
  const bool to_rgb = f.o.encode.decode.channels == image::ChannelMode::kRgb;
  auto progress = [&](const convert::Progress& p) {
    if (to_rgb && p.gray_sources > 0 && last.gray_sources == 0 && !f.quiet) {  // the first: said at once
      bar.Finish();
      std::fprintf(stderr,
                   "shard convert: gray sources are stored as RGB (--channels auto keeps them gray); the count "
                   "comes at the end\n");
    }
    last = p;
    bar.Update(p.done, p.total, p.bytes_read, p.rejected);
  };
  f.o.on_listed = [&f](const convert::ConvertResult& listed) { PrintListed(f, listed); };
  // -o s3://BUCKET/PREFIX: converted into a local staging folder, each
  // finished shard sent up as it is written, manifest.json last
  // (libshard/remote/remote_convert.h).
  std::optional<libshard::remote::RemoteConvertResult> remote;
  StatusOr<convert::ConvertResult> r = libshard::InternalError("not run");
  if (libshard::remote::IsRemoteOutput(f.o.output)) {
    libshard::remote::RemoteConvertOptions ro;
    ro.convert = f.o;
    ro.staging = f.staging;
    ro.recheck = f.recheck;
    StatusOr<libshard::remote::RemoteConvertResult> rr = libshard::remote::ConvertToObjectStore(ro, progress);
    if (rr.ok()) {
      remote = std::move(*rr);
      f.o.output = remote->staging;  // the messages below name the staging folder's files
      r = std::move(remote->converted);
    } else {
      r = rr.status();
    }
  } else {
    r = convert::Convert(f.o, progress);
  }
  bar.Finish();
  if (!r.ok()) {
    std::cerr << "shard convert: " << r.status().message() << "\n";
    return ExitCodeFor(r.status());
  }
  // -o s3://: the manifest uploaded, not the staging folder's copy.
  std::string manifest = r->manifest_path;
  if (remote && remote->committed) {
    std::string url = remote->url;
    while (!url.empty() && url.back() == '/') url.pop_back();
    manifest = url + "/manifest.json";
  }
  const int code = Summarize(f, *r, last, manifest);
  if (remote && remote->committed && !f.quiet) {
    std::fprintf(stderr,
                 "shard convert: uploaded %llu objects to %s (%llu already there; staging folder %s), "
                 "manifest.json last -> %s\n",
                 static_cast<unsigned long long>(remote->uploaded), remote->url.c_str(),
                 static_cast<unsigned long long>(remote->skipped), remote->staging.c_str(), manifest.c_str());
  }
  return code;
}

}  // namespace

void RegisterConvert(CLI::App& app, int* exit_code) {
  std::shared_ptr<ConvertFlags> flags = AddConvertOptions(app);
  flags->command->callback([flags, exit_code] { *exit_code = Run(*flags); });
}

const convert::ConvertOptions& ConvertOptionsOf(const ConvertFlags& flags) { return flags.o; }

const std::string& StagingOf(const ConvertFlags& flags) { return flags.staging; }

bool RecheckOf(const ConvertFlags& flags) { return flags.recheck; }

std::shared_ptr<ConvertFlags> AddConvertOptions(CLI::App& app) {
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = flags->command = app.add_subcommand(
      "convert",
      "Convert an image folder or CSV manifest to TFRecord shards, .idx indices, manifest.json "
      "and rejects.tsv. Images are read as PNG, JPEG, still WebP, TIFF (first page), GIF (first frame) or "
      "uncompressed BMP, by content; all but JPEG and PNG are always re-encoded to --format.\n"
      "Exit codes: 0 every input converted, 3 some inputs rejected (the rest converted; see "
      "rejects.tsv), 1 fatal error while converting (nothing half-written is left under a shard's "
      "name) or nothing converted (every input rejected), 2 usage error or an unreadable or invalid argument (a "
      "missing input, a bad CSV, a "
      "bad --prefix), before anything is written.");
  Flags& f = *flags;
  cmd->add_option("input", f.o.input,
                  "folder (CLASS/*, SPLIT/CLASS/*, or flat) or a CSV/TSV manifest "
                  "(path,label[,mask][,split])")
      ->required();
  cmd->add_option("-o,--output", f.o.output,
                  "output folder (created; reruns resume, a rerun with another plan removes the earlier plan's "
                  "shards; one writer at a time), or s3://BUCKET/PREFIX: converted into --staging, each finished "
                  "shard uploaded with its .idx as it completes, then rejects.tsv, manifest.json last; a rerun "
                  "keeps the shards whose objects have their entry's size and CRC-32C without converting them "
                  "again, even without the staging folder (docs/object_storage.md)")
      ->required();
  cmd->add_option("--staging", f.staging,
                  "with -o s3://...: the local folder converted into before the upload; a shard is deleted "
                  "from it once uploaded, so it holds the shards in flight, the entries and the manifest "
                  "(default: $LIBSHARD_CACHE_DIR/staging/BUCKET/PREFIX, else "
                  "~/.cache/libshard/staging/BUCKET/PREFIX)");
  cmd->add_flag("--recheck", f.recheck,
                "with -o s3://...: on a rerun, read every object kept from an earlier run back and check its "
                "bytes against its entry's size and CRC-32C (not the x-amz-meta-crc32c recorded at upload); a "
                "damaged one is converted and uploaded again");
  cmd->add_option("--prefix", f.o.plan.prefix,
                  "shard name prefix (default: input folder name); not empty, no '/', not starting with '.'")
      ->check(CLI::Validator(
          [](std::string& s) { return s.empty() ? std::string("the prefix is empty") : std::string(); }, "NAME"));
  cmd->add_option("--labels", f.o.list.labels_file,
                  "class names, one per line, in label order (a CSV's labels are then all names)");
  cmd->add_option("--label-offset", f.o.list.label_offset,
                  "add N to every label, 0..1000000 (1: TF's build_imagenet_data, 0 = background)")
      ->check(IntegerIn(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--image-root", f.o.list.image_root,
                  "CSV: the folder its image and mask paths resolve from (default: the CSV's folder); "
                  "a path that leaves it is a reject");
  cmd->add_option("--path-col", f.o.list.path_column, "CSV column of the image paths")->capture_default_str();
  cmd->add_option("--label-col", f.o.list.label_column, "CSV column of the labels")->capture_default_str();
  cmd->add_option("--mask-col", f.o.list.mask_column, "CSV column of the mask paths")->capture_default_str();
  cmd->add_option("--split-col", f.o.list.split_column, "CSV column of the split names")->capture_default_str();
  cmd->add_option("--feature", f.features,
                  "COLUMN:TYPE (repeatable): store this CSV column in every record under the key COLUMN (extras= "
                  "reads it back); TYPE int | float | bytes (the text) | int_list | float_list (values separated "
                  "by spaces: \"3 17 42\"; an empty field is an empty list); a field that does not parse is a "
                  "reject naming the CSV line and column");
  cmd->add_option("--layout", f.layout,
                  "how a folder's top level is read: auto (split folders when one is named train/training, "
                  "val/valid/validation/dev or test/testing, any case; else classes, or flat) | class | "
                  "split/class | flat (every file below, unlabeled)")
      ->capture_default_str();
  cmd->add_option("--split", f.o.list.default_split,
                  "split of an input without split folders (or of a CSV row without one)")
      ->capture_default_str();
  cmd->add_option("--val-fraction", f.o.list.val_fraction,
                  "send this fraction to split 'val' by hashing the relative path")
      ->check(NumberIn(0.0, 0.999999));
  cmd->add_option("--masks", f.o.list.masks,
                  "folder of segmentation masks (matched by path/stem); {split} stands for the split "
                  "(CamVid: --masks 'CamVid/{split}_labels')");
  cmd->add_option("--include", f.o.list.include,
                  "GLOB (repeatable): list only the folder's files that match (a glob without '/' matches the "
                  "file name, with '/' the path in the input); they are samples whatever their extension");
  cmd->add_option("--exclude", f.o.list.exclude,
                  "GLOB (repeatable): leave out the folder's files that match (counted in the summary)");
  cmd->add_flag("--keep-empty-classes", f.o.list.keep_empty_classes,
                "keep a class folder that holds files but no image (e.g. annotations/) as a class without "
                "samples; without it such a folder is an error, as it would shift the later classes' labels");
  cmd->add_option("--coco", f.coco,
                  "detection boxes from a COCO instances.json (bbox, categories, iscrowd, area): each record "
                  "gets the TF Object Detection API's image/object/* keys; label_map.pbtxt beside the manifest");
  cmd->add_option("--yolo", f.yolo,
                  "detection boxes from YOLO label files (IMG's labels: its path's last /images/ -> /labels/, "
                  ".txt); class names from this data.yaml (names:) or classes.txt");
  cmd->add_option("--voc", f.voc,
                  "detection boxes from this Pascal VOC Annotations folder (STEM.xml per image; with --labels "
                  "FILE the class list, else the sorted names met)");
  cmd->add_option("--box-min-visible", f.o.annotations.min_visible,
                  "drop a box keeping less than this fraction of its area after the crop (as the TF Object "
                  "Detection API's random_crop_image overlap_thresh)")
      ->check(NumberIn(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--mask-suffix", f.o.list.mask_suffix, "mask name = image stem + this (e.g. _L)");
  cmd->add_option("--mask-labels", f.o.mask_labels_file, "class_dict.csv (name,r,g,b) for colour masks");
  cmd->add_option("--unknown-color", f.unknown_color, "colour-mask colour not in the map: error|ignore")
      ->capture_default_str();
  cmd->add_option("--mask-ignore-index", f.mask_ignore_index,
                  "mask index of padding and (with --unknown-color ignore) unknown colours, 0..255; not a class index")
      ->check(IntegerIn(0, 255))
      ->capture_default_str();
  cmd->add_option("--shard-size", f.shard_size, "target shard size (e.g. 128MiB, 1G)")->capture_default_str();
  cmd->add_option("--records-per-shard", f.o.plan.records_per_shard,
                  "at most N inputs planned per shard, 1..4294967295 (overrides --shard-size): a split of n inputs "
                  "gets ceil(n/N) shards of floor or ceil of n/that inputs each; a rejected input leaves its shard "
                  "one record short")
      ->check(IntegerIn(1, 4294967295));
  cmd->add_option("--seed", f.seed, "shuffle seed, 0..2^64-1")->check(Uint64Any())->capture_default_str();
  cmd->add_flag("--no-shuffle", f.no_shuffle, "keep the sorted order");
  cmd->add_option("--size", f.size, "output size N (NxN) or WxH; implies --resize-mode center-crop");
  cmd->add_option("--resize-mode", f.resize_mode,
                  "stretch|center-crop|keep-ratio|letterbox|crop-or-pad|shorter-side (shorter side = --size N, "
                  "aspect kept, no crop: torchvision's Resize(N))");
  cmd->add_option("--fill", f.fill, "R,G,B[,A] 0..255: padding of letterbox and crop-or-pad (default 0,0,0,255)");
  cmd->add_option("--filter", f.filter, "nearest|box|bilinear|bicubic|lanczos3")->capture_default_str();
  cmd->add_option("--format", f.format, "jpeg|png|raw (raw = zstd array unless --zstd-level 0)")->capture_default_str();
  cmd->add_option("--quality", f.quality, "JPEG quality 1..100")->check(IntegerIn(1, 100))->capture_default_str();
  cmd->add_option("--zstd-level", f.zstd_level, "raw arrays: 0 stored, 1..22 zstd, -1..-131072 zstd's fast levels")
      ->check(IntegerIn(-131072, 22))
      ->capture_default_str();
  cmd->add_option("--raw-filter", f.raw_filter,
                  "raw arrays: none (raw.zst) | up (each row minus the row above, then zstd: raw.up.zst; smallest "
                  "with --zstd-level 1)")
      ->capture_default_str();
  cmd->add_option("--reencode", f.reencode, "auto (copy JPEGs that need no change) | always")->capture_default_str();
  cmd->add_option("--channels", f.channels, "rgb|gray|auto (auto keeps gray sources gray)")->capture_default_str();
  cmd->add_option("--alpha", f.alpha, "composite (over white) | keep")->capture_default_str();
  cmd->add_option("--tiff-page", f.o.encode.decode.tiff_page,
                  "the page of a multi-page TIFF to store, from 0 (a TIFF with fewer pages is a reject)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--on-error", f.on_error, "skip (reject and go on) | fail (stop at the first bad input)")
      ->capture_default_str();
  cmd->add_option("--threads", f.o.threads,
                  "worker threads, 0..256 (0 = one per core); the output is the same for any value")
      ->check(IntegerIn(0, kMaxThreads));
  cmd->add_option("--num-tasks", f.num_tasks,
                  "split the work into N tasks, 1..99999 (default: from SLURM_ARRAY_TASK_COUNT)")
      ->check(IntegerIn(1, kMaxShards));
  cmd->add_option(
         "--task-index", f.task_index,
         "this task, 0..N-1 (default: (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN) / SLURM_ARRAY_TASK_STEP, or "
         "JOB_COMPLETION_INDEX with --num-tasks)")
      ->check(IntegerIn(0, kMaxShards - 1));
  cmd->add_option("--leaks", f.leaks,
                  "leak check (duplicates.tsv): warn (print the pairs' count) | fail (exit 1 when an image of one "
                  "split is in another) | off (no image fingerprints)")
      ->capture_default_str();
  cmd->add_option("--leak-distance", f.o.leak_distance,
                  "largest Hamming distance of two 64-bit perceptual hashes counted as duplicates, 0..16")
      ->check(IntegerIn(0, libshard::convert::kMaxLeakDistance))
      ->capture_default_str();
  cmd->add_option("--dedup", f.dedup,
                  "within: keep the first image of each group of duplicates in a split; the rest are rejects "
                  "\"duplicate of FILE\" (single task only)");
  cmd->add_flag("--dry-run", f.dry_run, "write nothing; print counts, formats, the shard plan and risky inputs");
  cmd->add_flag("--json", f.json, "with --dry-run: the report as JSON; else print the manifest to stdout");
  cmd->add_flag(
      "--report", f.report,
      "also write report.html (shard report) beside manifest.json; with --num-tasks run shard report after merge");
  cmd->add_flag("--no-sync", f.no_sync,
                "skip every fsync (of shards, entries, manifest, folders): faster, unsafe on power loss");
  cmd->add_flag("-q,--quiet", f.quiet, "no progress bar or summary");
  cmd->add_option("--progress-interval", f.progress_interval,
                  "seconds between progress lines when stderr is not a terminal")
      ->check(NumberIn(0.001, 86400))
      ->capture_default_str();
  cmd->add_flag("-v,--verbose", f.verbose, "list every reject and risky input");
  GroupConvertOptions(cmd);
  return flags;
}

}  // namespace shard_tool

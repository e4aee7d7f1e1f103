// The converter behind `shard convert`: listing -> plan -> a oneTBB pipeline
// (read -> decode/transform/encode in parallel -> write in order) -> shards,
// indices, manifest.
//
// Output folder layout (docs/convert.md):
//   PREFIX-SPLIT-NNNNN-of-MMMMM.tfrecord      the shards
//   PREFIX-SPLIT-NNNNN-of-MMMMM.tfrecord.idx  DALI index, written as records land
//   manifest.json                             written last (single run)
//   rejects.tsv                               path <TAB> reason, every reject
//   .libshard/manifest.task-IIIII-of-NNNNN.json  a task's partial manifest
//   duplicates.tsv                            the leak check's pairs (duplicates.h)
//   .libshard/<shard>.json                    each finished shard's entry
//   .libshard/<shard>.partial[.idx]           a shard being written
//
// Safety: a shard is written under .libshard/, fsynced, and renamed into
// place only when complete, after its entry; a killed run leaves at most
// .partial files, which the next run deletes. Run again with the same
// options, a conversion keeps every shard whose entry is present, whose size
// and CRC-32C match the entry and whose plan_id (what decides its bytes) is
// unchanged, and redoes the rest (a damaged one named in
// ConvertResult::redone_damaged): the result is byte-identical to an uninterrupted run.
// Run again with another plan (another shard count, a split gone), it first
// removes the earlier plan's shards of this prefix (ConvertResult::
// removed_stale), so the folder holds exactly the shards its manifest lists.
// Rejects: an input whose content is bad is a final reject, kept with its
// shard; one rejected for another cause (out of memory, an I/O error reading
// it) is noted as such in its reason, and the next run redoes its shard.
// Determinism: shards are byte-identical for any thread count; statistics
// are exact integer sums.
// Memory: bounded by the tokens in flight (4 per thread), not the dataset.
//
//   ConvertOptions o;
//   o.input = "OCT2017/train";
//   o.output = "shards";
//   o.encode.transform = {... 224x224 centre crop ...};
//   StatusOr<ConvertResult> r = Convert(o, [](const Progress& p) { ... });
//
// Errors: a bad option or unreadable input is kInvalidArgument/kNotFound
// before anything is written (and only then: once the output folder is
// locked, a missing file, say one another process removed, is kIOError); an
// I/O error (a full disk) stops the run with the file named; with
// fail_on_error the first rejected input stops the run (kFailedPrecondition
// naming the file). Rejected inputs are
// not errors: they are in ConvertResult and manifest.json.
// Thread-safety: one writer per output folder, enforced (output_lock.h): a
// single-task Convert holds OUT/.libshard/lock exclusively for its whole
// run, and a second one (another process or thread) fails at once with
// kFailedPrecondition naming the folder; the tasks of a split run share the
// folder, each task exclusive to itself.
#ifndef LIBSHARD_CONVERT_CONVERTER_H_
#define LIBSHARD_CONVERT_CONVERTER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/convert/annotations.h"
#include "libshard/convert/duplicates.h"
#include "libshard/convert/sample_encoder.h"
#include "libshard/convert/shard_plan.h"
#include "libshard/convert/source_listing.h"
#include "libshard/manifest.pb.h"
#include "libshard/status.h"

namespace libshard::convert {

struct ConvertResult;

struct ConvertOptions {
  // A folder (class per sub-folder, optional split folders) or a CSV/TSV
  // manifest file. Default: "" (required).
  std::string input;
  // Output folder, created if missing. Default: "" (required).
  std::string output;
  // Labels file, val split, masks. Default: ListOptions{}.
  ListOptions list;
  // Prefix (empty: the input folder's name), shard size, seed, shuffle.
  // Default: PlanOptions{}.
  PlanOptions plan;
  // Decode/transform/encode. Default: EncodeOptions{}.
  EncodeOptions encode;
  // class_dict.csv for colour masks (name,r,g,b). Default: "" (index masks).
  std::string mask_labels_file;
  // Stop at the first rejected input instead of skipping it. Default: false.
  bool fail_on_error = false;
  // Worker threads, 0..256; 0 = one per core (util::ThreadCount, as verify
  // and the BatchLoader take it; manifest.json's run.threads says how many).
  // Does not change the output. Default: 0.
  int threads = 0;
  // Task split: this run writes the shards of task task_index only.
  // Default: 1 task.
  uint32_t num_tasks = 1;
  // Default: 0.
  uint32_t task_index = 0;
  // Lists the input instead of the file system: `shard convert
  // s3://BUCKET/PREFIX/` (remote/object_input.h sets it). Returns the
  // listing, its Listing::source reading the samples. Called once per
  // Convert or DryRun, on the calling thread, before anything is written.
  // Default: none (`input` is a folder, a CSV or a sample pack).
  std::function<StatusOr<Listing>(const ConvertOptions&)> list_input;
  // fsync shards, entries, rejects.tsv and manifest.json before renaming
  // them, and their folders after. false: no fsync at all (a killed run still
  // leaves only complete files; a power loss may not). Default: true.
  bool sync = true;
  // Shards kept somewhere else once written: `shard convert -o s3://` uploads
  // each finished shard and deletes it from `output` (its staging folder).
  // Asked about each shard of this run whose file is not in `output`: the
  // shard's entry when a complete copy is elsewhere (the copy and its index
  // have the entry's size and checksum), and the shard is then kept as one
  // of an earlier run (if the entry is of this plan), not converted again.
  // nullopt redoes it, with *why set when a copy is there but does not match
  // (reported in ConvertResult::redone_damaged). Called on the thread that
  // calls Convert, before any shard is written. Default: none (only files in
  // `output` count).
  std::function<std::optional<ShardEntry>(const std::string& file, std::string* why)> shard_elsewhere;
  // Told of each shard this run finishes, once it is complete under its
  // final name in `output` (its entry, index and shard renamed into place):
  // `shard convert -o s3://` hands it to the uploader (remote/uploader.h)
  // instead of watching the folder. Called from the pipeline's serial writer
  // stage (one call at a time, on a oneTBB worker thread; it holds up the
  // writer: hand the work on, do not do it there). An error it returns stops
  // the conversion (Convert returns it; the shard stays complete). Default:
  // none.
  std::function<Status(const ShardEntry&)> on_shard_written;
  // Told once the input is listed and the shards are planned, before any
  // shard is checked or converted: what the listing found, so that `shard
  // convert` prints the layout and the warnings before the long part. The
  // ConvertResult it gets has warnings, skipped, layout and removed_stale
  // set, nothing else. Called on the thread that calls Convert, at most once
  // (not when the listing or the plan fails). Default: none.
  std::function<void(const ConvertResult&)> on_listed;
  // The leak check (duplicates.h, docs/convert.md): every stored image's
  // fingerprints go into its shard entry, and a complete run (or `shard
  // merge`) writes OUT/duplicates.tsv and manifest.json's `duplicates`.
  // kOff takes no fingerprints. kWarn and kFail differ only in the exit code
  // the CLI gives. Not part of the plan: switching warn <-> fail reuses the
  // shards. Default: kWarn.
  LeakMode leaks = LeakMode::kWarn;
  // Largest Hamming distance of two perceptual hashes counted as a pair,
  // 0..kMaxLeakDistance. Default: kDefaultLeakDistance.
  int leak_distance = kDefaultLeakDistance;
  // --dedup (docs/convert.md, "Leak check"): duplicates are dropped before
  // they are stored, as rejects "duplicate of FILE (exact: equal pixels)" or
  // "(near: perceptual hashes N bits apart)" naming the stored copy, by the
  // leak check's definition (equal keys, or NearDistance within
  // leak_distance). The decisions are taken in the listing's canonical order
  // (split, then relative path, byte-wise), never the plan's: the same images
  // are kept for every seed and thread count. It costs a first pass that
  // fingerprints every image this run converts (decode, transform, encode,
  // as the conversion does) before the shards are written. Part of the plan
  // (another mode redoes every shard). Single-task runs only (num_tasks 1).
  //
  // dedup_within: of each group of duplicates in one split, the first in
  // the listing's order is kept (each later image is dropped when it
  // duplicates an image kept before it). Afterwards the leak check finds no
  // pair within a split. Default: false.
  bool dedup_within = false;
  // dedup_across: every image of the split named "train" is kept (with
  // dedup_within, train's kept ones), and an image of any other split that
  // duplicates one is dropped, "duplicate of FILE in train (...)" naming the
  // first such train image. Done before dedup_within in those splits.
  // Afterwards the leak check finds no pair of train and another split;
  // pairs between two other splits (val and test) stay listed. Convert
  // fails with kInvalidArgument, before anything is written, when the
  // listing has no split named train. Default: false.
  bool dedup_across = false;
  // Detection boxes from COCO, YOLO or VOC annotations (annotations.h): the
  // images become unlabeled, each record carries image/object/* keys, the
  // manifest the object label map (object_labels) and per-class box counts
  // (stats.boxes), and label_map.pbtxt is written beside it. With kVoc, a
  // `list.labels_file` is the object class list. Default: none.
  AnnotationOptions annotations;
};

struct Progress {
  uint64_t done = 0;   // samples finished by this run (written or rejected)
  uint64_t total = 0;  // samples this run has to do
  uint64_t rejected = 0;
  uint64_t bytes_read = 0;  // source bytes
  uint64_t bytes_written = 0;
  uint32_t shards_done = 0;
  uint32_t shards_total = 0;  // shards this run writes (reused ones excluded)
  // Of `done`, the gray sources written (stored as RGB under
  // ChannelMode::kRgb: ConvertResult::gray_expanded at the end).
  uint64_t gray_sources = 0;
  // Non-zero in one last call: the leak check starts, over this many
  // images' fingerprints (the other fields as in the call before).
  uint64_t leak_check_images = 0;
};
// Progress callback contract:
//   - Called once per finished sample (written or rejected), in plan order,
//     and once more when the leak check starts (leak_check_images),
//     from the pipeline's serial writer stage: never two calls at once, but
//     on a oneTBB worker thread, not necessarily the thread that called
//     Convert (guard anything it shares with that thread).
//   - The Progress it gets is valid only during the call.
//   - It holds up the writer while it runs: keep it short (the CLI redraws its
//     line at most every 250 ms); it must not call Convert or DryRun.
//   - A std::exception it throws stops the conversion: Convert returns
//     INTERNAL (RESOURCE_EXHAUSTED for bad_alloc) with the exception's text,
//     and the shard being written is removed.
using ProgressFn = std::function<void(const Progress&)>;

struct ConvertResult {
  Manifest manifest;  // what was written (partial for a task)
  std::string manifest_path;
  uint32_t shards_written = 0;
  uint32_t shards_reused = 0;  // complete shards kept from an earlier run
  uint64_t rejected = 0;       // every reject, the reused shards' included
  // Of those, rejects not caused by the file's content (out of memory, an
  // I/O error reading it): their reason ends in " (not caused by the file:
  // retried on the next run)", and the next run redoes their shards.
  uint64_t transient_rejects = 0;
  // Shards of an earlier plan removed from the folder (another shard count
  // for a split, or a split this plan does not have), with their index,
  // entry and temporary files; sorted.
  std::vector<std::string> removed_stale;
  // Shards of an earlier run with the plan's entry and size whose bytes no
  // longer had the entry's CRC-32C: redone. "FILE (crc32c:..., its entry
  // says crc32c:...)", in plan order.
  std::vector<std::string> redone_damaged;
  // Shards of an earlier run redone because their entry held rejects not
  // caused by the file (out of memory, an I/O error): "FILE (N reject(s) not
  // caused by the file)", in plan order.
  std::vector<std::string> redone_retried;
  std::vector<std::string> warnings;  // the listing's (Listing::warnings)
  ListingSkips skipped;               // the listing's (Listing::skipped)
  std::string layout;                 // LayoutSummary of the listing
  ListingLayout layout_detail;        // the same as data (LayoutOf)
  // Gray sources this run converted to RGB (ChannelMode::kRgb only).
  uint64_t gray_expanded = 0;
  // Leak check: shards with records but no fingerprints (kept from a run
  // with --leaks off or an older libshard): their images were not checked.
  uint64_t shards_without_hashes = 0;
};

// Runs the conversion (docs/convert.md). `progress`, when set, is called as
// ProgressFn says. Thread-safety: one Convert per output folder at a time
// (a second one fails at once on the folder's lock, naming it); Converts of
// different folders may run concurrently.
StatusOr<ConvertResult> Convert(const ConvertOptions& options, const ProgressFn& progress = {});

// kInvalidArgument when the output folder is the input folder (the same
// folder under any spelling). An output folder inside the input is left out
// of the listing (ListOptions::exclude_dir), and refused there when it holds
// anything but shard convert's output. Convert checks this
// first; the CLI calls it to report a usage error.
Status CheckOutputFolder(const ConvertOptions& options);

// What a conversion would do, without writing anything.
struct DryRunReport {
  Listing listing;
  ShardPlan plan;
  // (split, class or "", count), sorted.
  struct ClassCount {
    std::string split, class_name;
    uint64_t count = 0;
  };
  std::vector<ClassCount> counts;
  std::vector<NamedCount> formats;  // by content: jpeg, png, unknown
  // Inputs worth a look: CMYK/YCCK, progressive, 16-bit, alpha,
  // EXIF-rotated, undecodable (header does not probe). path -> reasons.
  std::vector<Reject> risky;
  // Gray sources (1 or 2 channels as stored) that --channels rgb (the
  // default) will store as RGB; 0 under gray or auto.
  uint64_t gray_expanded = 0;
};
StatusOr<DryRunReport> DryRun(const ConvertOptions& options);

// --dedup's text: "within", "across" or both, comma-separated in either
// order ("within,across"); "" for none. Sets options->dedup_within and
// dedup_across; kInvalidArgument naming the choices for anything else (an
// unknown or repeated word, an empty one).
Status ParseDedup(std::string_view text, ConvertOptions* options);
// "within", "across", "within,across", or "" for none: what manifest.json's
// options.dedup says.
std::string DedupName(const ConvertOptions& options);

// The options as written to the manifest (everything that shapes the output).
ConvertOptions Normalized(const ConvertOptions& options);
ConversionOptions ToProto(const ConvertOptions& options);

// The keys every record carries (and optional ones), for the manifest.
std::vector<FeatureSpec> RecordSchema(const ConvertOptions& options, bool labeled, bool masks);

// The engine's task defaults, from the environment.
struct EnvironmentTask {
  uint32_t num_tasks = 0;  // 0: the variables do not say (JOB_COMPLETION_INDEX)
  uint32_t task_index = 0;
  // The variables used with their values, for messages:
  // "SLURM_ARRAY_TASK_ID=14, SLURM_ARRAY_TASK_MIN=10, SLURM_ARRAY_TASK_STEP=2,
  // SLURM_ARRAY_TASK_COUNT=5".
  std::string source;
};
// Slurm: task index (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN) /
// SLURM_ARRAY_TASK_STEP (MIN 0 and STEP 1 when unset), SLURM_ARRAY_TASK_COUNT
// tasks, so --array=0-9:2 and --array=10-19 map onto tasks 0..COUNT-1;
// else Kubernetes' JOB_COMPLETION_INDEX (the index only; the count must be
// given). nullopt when none is set. kInvalidArgument naming the variables
// and their values when they are not numbers, COUNT is missing, or the ID is
// not one of the array's tasks (a list such as --array=1,5,9 has no step).
StatusOr<std::optional<EnvironmentTask>> TaskFromEnvironment();

}  // namespace libshard::convert

#endif  // LIBSHARD_CONVERT_CONVERTER_H_

// The table of `shard convert`'s flags (remote/convert_flags.h). The help
// texts are the program's --help; the order is its --help order.
#include "libshard/remote/convert_flags.h"

#include <climits>
#include <cstdlib>

#include "libshard/convert/converter.h"
#include "libshard/util/number_text.h"
#include "libshard/util/threads.h"

namespace libshard::remote {
namespace {

using V = ConvertFlagValues;
using T = std::string;

// Every subcommand's thread cap (tools/cli_checks.h kMaxThreads), and the
// most tasks: the most shards a split may have (five-digit shard numbers,
// convert/shard_plan.cc).
constexpr double kMaxThreads = util::kMaxThreads;
constexpr double kMaxTasks = 99999;

constexpr const char* kInput = "Input (a folder, or a CSV manifest's columns)";
constexpr const char* kMasks = "Masks and detection boxes";
constexpr const char* kOutput = "Output";
constexpr const char* kImage = "Image (decode, resize, encode)";
constexpr const char* kLeaks = "Leak check and duplicates";
constexpr const char* kObjects = "Object storage (-o s3://BUCKET/PREFIX)";
constexpr const char* kTasks = "Tasks and threads";
constexpr const char* kRun = "Run";

constexpr FlagArity kSwitch = FlagArity::kSwitch;
constexpr FlagArity kValue = FlagArity::kValue;
constexpr FlagArity kRepeated = FlagArity::kRepeated;
constexpr FlagArity kPositional = FlagArity::kPositional;

constexpr FlagCheck kAny{};
constexpr FlagCheck Integer(double lo, double hi) { return {FlagCheck::kInteger, lo, hi}; }
constexpr FlagCheck Number(double lo, double hi) { return {FlagCheck::kNumber, lo, hi}; }

// The text has passed the flag's check, so it converts.
long long Int(const T& t) { return std::strtoll(t.c_str(), nullptr, 10); }
unsigned long long U64(const T& t) { return std::strtoull(t.c_str(), nullptr, 10); }
double Num(const T& t) { return std::strtod(t.c_str(), nullptr); }
bool On(const T& t) { return t == "true"; }

convert::ConvertOptions& O(V& v) { return v.request.convert; }

std::vector<ConvertFlag> MakeTable() {
  return {
      {"input", "input", kPositional, true, "TEXT", nullptr, kAny, nullptr,
       "folder (CLASS/*, SPLIT/CLASS/*, or flat), a CSV/TSV manifest (path,label[,mask][,split]), "
       "s3://BUCKET/PREFIX/ (its objects as such a folder's files: LIST, then a GET of each) or s3://.../X.csv "
       "(a CSV naming keys beside it), or a sample pack "
       "(libshard.write_samples' folder: docs/convert.md, \"Inputs from programs\")",
       [](V& v, const T& t) { O(v).input = t; }},
      {"-o,--output", "output", kValue, true, "TEXT", nullptr, kAny, kOutput,
       "output folder (created; reruns resume, a rerun with another plan removes the earlier plan's shards; one "
       "writer at a time), or s3://BUCKET/PREFIX: converted into --staging, each finished shard uploaded with its "
       ".idx as it completes, then rejects.tsv, manifest.json last; a rerun keeps the shards whose objects have "
       "their entry's size and CRC-32C without converting them again, even without the staging folder "
       "(docs/object_storage.md)",
       [](V& v, const T& t) { O(v).output = t; }},
      {"--staging", "staging", kValue, false, "TEXT", nullptr, kAny, kObjects,
       "with -o s3://...: the local folder converted into before the upload; a shard is deleted from it once "
       "uploaded, so it holds the shards in flight, the entries and the manifest (default: "
       "$LIBSHARD_CACHE_DIR/staging/BUCKET/PREFIX, else ~/.cache/libshard/staging/BUCKET/PREFIX)",
       [](V& v, const T& t) { v.request.staging = t; }},
      {"--recheck", "recheck", kSwitch, false, "", nullptr, kAny, kObjects,
       "with -o s3://...: on a rerun, read every object kept from an earlier run back and check its bytes against "
       "its entry's size and CRC-32C (not the x-amz-meta-crc32c recorded at upload); a damaged one is converted "
       "and uploaded again",
       [](V& v, const T& t) { v.request.recheck = On(t); }},
      {"--prefix",
       "prefix",
       kValue,
       false,
       "TEXT",
       nullptr,
       {FlagCheck::kPrefix},
       kOutput,
       "shard name prefix (default: input folder name); not empty, no '/', not starting with '.'",
       [](V& v, const T& t) { O(v).plan.prefix = t; }},
      {"--labels", "labels", kValue, false, "TEXT", nullptr, kAny, kInput,
       "class names, one per line, in label order (a CSV's labels are then all names)",
       [](V& v, const T& t) { O(v).list.labels_file = t; }},
      {"--label-offset", "label-offset", kValue, false, "INT", "0", Integer(0, 1000000), kInput,
       "add N to every label, 0..1000000 (1: TF's build_imagenet_data, 0 = background)",
       [](V& v, const T& t) { O(v).list.label_offset = static_cast<int>(Int(t)); }},
      {"--image-root", "image-root", kValue, false, "TEXT", nullptr, kAny, kInput,
       "CSV: the folder its image and mask paths resolve from (default: the CSV's folder); a path that leaves it "
       "is a reject",
       [](V& v, const T& t) { O(v).list.image_root = t; }},
      {"--path-col", "path-col", kValue, false, "TEXT", "path", kAny, kInput, "CSV column of the image paths",
       [](V& v, const T& t) { O(v).list.path_column = t; }},
      {"--label-col", "label-col", kValue, false, "TEXT", "label", kAny, kInput, "CSV column of the labels",
       [](V& v, const T& t) { O(v).list.label_column = t; }},
      {"--mask-col", "mask-col", kValue, false, "TEXT", "mask", kAny, kInput, "CSV column of the mask paths",
       [](V& v, const T& t) { O(v).list.mask_column = t; }},
      {"--split-col", "split-col", kValue, false, "TEXT", "split", kAny, kInput, "CSV column of the split names",
       [](V& v, const T& t) { O(v).list.split_column = t; }},
      {"--feature", "feature", kRepeated, false, "TEXT", nullptr, kAny, kInput,
       "COLUMN:TYPE (repeatable): store this CSV column in every record under the key COLUMN (extras= reads it "
       "back); TYPE int | float | bytes (the text) | int_list | float_list (values separated by spaces: \"3 17 "
       "42\"; an empty field is an empty list); a field that does not parse is a reject naming the CSV line and "
       "column",
       [](V& v, const T& t) { v.features.push_back(t); }},
      {"--layout", "layout", kValue, false, "TEXT", "auto", kAny, kInput,
       "how a folder's top level is read: auto (split folders when one is named train/training, "
       "val/valid/validation/dev or test/testing, any case; else classes, or flat) | class | split/class | flat "
       "(every file below, unlabeled)",
       [](V& v, const T& t) { v.layout = t; }},
      {"--split", "split", kValue, false, "TEXT", "train", kAny, kInput,
       "split of an input without split folders (or of a CSV row without one)",
       [](V& v, const T& t) { O(v).list.default_split = t; }},
      {"--val-fraction", "val-fraction", kValue, false, "FLOAT", nullptr, Number(0.0, 0.999999), kInput,
       "send this fraction to split 'val' by hashing the relative path",
       [](V& v, const T& t) { O(v).list.val_fraction = Num(t); }},
      {"--masks", "masks", kValue, false, "TEXT", nullptr, kAny, kMasks,
       "folder of segmentation masks (matched by path/stem); {split} stands for the split (CamVid: --masks "
       "'CamVid/{split}_labels')",
       [](V& v, const T& t) { O(v).list.masks = t; }},
      {"--include", "include", kRepeated, false, "TEXT", nullptr, kAny, kInput,
       "GLOB (repeatable): list only the folder's files that match (a glob without '/' matches the file name, "
       "with '/' the path in the input); they are samples whatever their extension",
       [](V& v, const T& t) { O(v).list.include.push_back(t); }},
      {"--exclude", "exclude", kRepeated, false, "TEXT", nullptr, kAny, kInput,
       "GLOB (repeatable): leave out the folder's files that match (counted in the summary)",
       [](V& v, const T& t) { O(v).list.exclude.push_back(t); }},
      {"--keep-empty-classes", "keep-empty-classes", kSwitch, false, "", nullptr, kAny, kInput,
       "keep a class folder that holds files but no image (e.g. annotations/) as a class without samples; without "
       "it such a folder is an error, as it would shift the later classes' labels",
       [](V& v, const T& t) { O(v).list.keep_empty_classes = On(t); }},
      {"--coco", "coco", kValue, false, "TEXT", nullptr, kAny, kMasks,
       "detection boxes from a COCO instances.json (bbox, categories, iscrowd, area): each record gets the TF "
       "Object Detection API's image/object/* keys; label_map.pbtxt beside the manifest",
       [](V& v, const T& t) { v.coco = t; }},
      {"--yolo", "yolo", kValue, false, "TEXT", nullptr, kAny, kMasks,
       "detection boxes from YOLO label files (IMG's labels: its path's last /images/ -> /labels/, .txt); class "
       "names from this data.yaml (names:) or classes.txt",
       [](V& v, const T& t) { v.yolo = t; }},
      {"--voc", "voc", kValue, false, "TEXT", nullptr, kAny, kMasks,
       "detection boxes from this Pascal VOC Annotations folder (the XML of IMG is Annotations/SPLIT/REL/STEM.xml, "
       "else REL/STEM.xml in its split, else STEM.xml; one two images share is refused for both; with --labels FILE "
       "the class list, else the sorted names met)",
       [](V& v, const T& t) { v.voc = t; }},
      {"--box-min-visible", "box-min-visible", kValue, false, "FLOAT", "0.3", Number(0.0, 1.0), kMasks,
       "drop a box keeping less than this fraction of its area after the crop (as the TF Object Detection API's "
       "random_crop_image overlap_thresh)",
       [](V& v, const T& t) { O(v).annotations.min_visible = std::strtof(t.c_str(), nullptr); }},
      {"--mask-suffix", "mask-suffix", kValue, false, "TEXT", nullptr, kAny, kMasks,
       "mask name = image stem + this (e.g. _L)", [](V& v, const T& t) { O(v).list.mask_suffix = t; }},
      {"--mask-labels", "mask-labels", kValue, false, "TEXT", nullptr, kAny, kMasks,
       "class_dict.csv (name,r,g,b) for colour masks", [](V& v, const T& t) { O(v).mask_labels_file = t; }},
      {"--unknown-color", "unknown-color", kValue, false, "TEXT", "error", kAny, kMasks,
       "colour-mask colour not in the map: error|ignore", [](V& v, const T& t) { v.unknown_color = t; }},
      {"--mask-ignore-index", "mask-ignore-index", kValue, false, "INT", "255", Integer(0, 255), kMasks,
       "mask index of padding and (with --unknown-color ignore) unknown colours, 0..255; not a class index",
       [](V& v, const T& t) { v.mask_ignore_index = static_cast<int>(Int(t)); }},
      {"--shard-size", "shard-size", kValue, false, "TEXT", "128MiB", kAny, kOutput,
       "target shard size (e.g. 128MiB, 1G)", [](V& v, const T& t) { v.shard_size = t; }},
      {"--records-per-shard", "records-per-shard", kValue, false, "UINT", nullptr, Integer(1, 4294967295.0), kOutput,
       "at most N inputs planned per shard, 1..4294967295 (overrides --shard-size): a split of n inputs gets "
       "ceil(n/N) shards of floor or ceil of n/that inputs each; a rejected input leaves its shard one record short",
       [](V& v, const T& t) { O(v).plan.records_per_shard = U64(t); }},
      {"--seed",
       "seed",
       kValue,
       false,
       "UINT",
       "0",
       {FlagCheck::kUint64},
       kOutput,
       "shuffle seed, 0..2^64-1",
       [](V& v, const T& t) { v.seed = U64(t); }},
      {"--no-shuffle", "no-shuffle", kSwitch, false, "", nullptr, kAny, kOutput, "keep the sorted order",
       [](V& v, const T& t) { v.no_shuffle = On(t); }},
      {"--size", "size", kValue, false, "TEXT", nullptr, kAny, kImage,
       "output size N (NxN) or WxH; implies --resize-mode center-crop", [](V& v, const T& t) { v.size = t; }},
      {"--resize-mode", "resize-mode", kValue, false, "TEXT", nullptr, kAny, kImage,
       "stretch|center-crop|keep-ratio|letterbox|crop-or-pad|shorter-side (shorter side = --size N, aspect kept, "
       "no crop: torchvision's Resize(N))",
       [](V& v, const T& t) { v.resize_mode = t; }},
      {"--fill", "fill", kValue, false, "TEXT", nullptr, kAny, kImage,
       "R,G,B[,A] 0..255: padding of letterbox and crop-or-pad (default 0,0,0,255)",
       [](V& v, const T& t) { v.fill = t; }},
      {"--filter", "filter", kValue, false, "TEXT", "bilinear", kAny, kImage, "nearest|box|bilinear|bicubic|lanczos3",
       [](V& v, const T& t) { v.filter = t; }},
      {"--format", "format", kValue, false, "TEXT", "jpeg", kAny, kImage,
       "jpeg|png|raw (raw = zstd array unless --zstd-level 0)", [](V& v, const T& t) { v.format = t; }},
      {"--quality", "quality", kValue, false, "INT", "90", Integer(1, 100), kImage, "JPEG quality 1..100",
       [](V& v, const T& t) { v.quality = static_cast<int>(Int(t)); }},
      {"--zstd-level", "zstd-level", kValue, false, "INT", "-5", Integer(-131072, 22), kImage,
       "raw arrays: 0 stored, 1..22 zstd, -1..-131072 zstd's fast levels",
       [](V& v, const T& t) { v.zstd_level = static_cast<int>(Int(t)); }},
      {"--raw-filter", "raw-filter", kValue, false, "TEXT", "none", kAny, kImage,
       "raw arrays: none (raw.zst) | up (each row minus the row above, then zstd: raw.up.zst; smallest with "
       "--zstd-level 1)",
       [](V& v, const T& t) { v.raw_filter = t; }},
      {"--reencode", "reencode", kValue, false, "TEXT", "auto", kAny, kImage,
       "auto (copy JPEGs that need no change) | always", [](V& v, const T& t) { v.reencode = t; }},
      {"--channels", "channels", kValue, false, "TEXT", "rgb", kAny, kImage,
       "rgb|gray|auto (auto keeps gray sources gray)", [](V& v, const T& t) { v.channels = t; }},
      {"--alpha", "alpha", kValue, false, "TEXT", "composite", kAny, kImage, "composite (over white) | keep",
       [](V& v, const T& t) { v.alpha = t; }},
      {"--tiff-page",
       "tiff-page",
       kValue,
       false,
       "INT",
       "0",
       {FlagCheck::kNonNegative},
       kImage,
       "the page of a multi-page TIFF to store, from 0 (a TIFF with fewer pages is a reject)",
       [](V& v, const T& t) { O(v).encode.decode.tiff_page = static_cast<int>(Int(t)); }},
      {"--on-error", "on-error", kValue, false, "TEXT", "skip", kAny, kRun,
       "skip (reject and go on) | fail (stop at the first bad input)", [](V& v, const T& t) { v.on_error = t; }},
      {"--threads", "threads", kValue, false, "INT", nullptr, Integer(0, kMaxThreads), kTasks,
       "worker threads, 0..256 (0 = one per core); the output is the same for any value",
       [](V& v, const T& t) { O(v).threads = static_cast<int>(Int(t)); }},
      {"--num-tasks", "num-tasks", kValue, false, "UINT", nullptr, Integer(1, kMaxTasks), kTasks,
       "split the work into N tasks, 1..99999 (default: from SLURM_ARRAY_TASK_COUNT)",
       [](V& v, const T& t) { v.num_tasks = static_cast<uint32_t>(Int(t)); }},
      {"--task-index", "task-index", kValue, false, "UINT", nullptr, Integer(0, kMaxTasks - 1), kTasks,
       "this task, 0..N-1 (default: (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN) / SLURM_ARRAY_TASK_STEP, or "
       "JOB_COMPLETION_INDEX with --num-tasks)",
       [](V& v, const T& t) { v.task_index = static_cast<uint32_t>(Int(t)); }},
      {"--leaks", "leaks", kValue, false, "TEXT", "warn", kAny, kLeaks,
       "leak check (duplicates.tsv): warn (print the pairs' count) | fail (exit 1 when an image of one split is in "
       "another) | off (no image fingerprints)",
       [](V& v, const T& t) { v.leaks = t; }},
      {"--leak-distance", "leak-distance", kValue, false, "INT", "6", Integer(0, convert::kMaxLeakDistance), kLeaks,
       "largest Hamming distance of two 64-bit perceptual hashes counted as duplicates, 0..16",
       [](V& v, const T& t) { O(v).leak_distance = static_cast<int>(Int(t)); }},
      {"--dedup", "dedup", kValue, false, "TEXT", nullptr, kAny, kLeaks,
       "drop duplicates (exact or near, as the leak check finds them) before they are stored, as rejects "
       "\"duplicate of FILE\" naming the kept copy: within (of each group in a split, keep the first in path "
       "order) | across (keep every train image, drop its copies from the other splits; needs a split named "
       "train) | within,across (both); the same images whatever --seed; a first pass fingerprints every image "
       "(single task only)",
       [](V& v, const T& t) { v.dedup = t; }},
      {"--dry-run", "dry-run", kSwitch, false, "", nullptr, kAny, kRun,
       "write nothing; print counts, formats, the shard plan and risky inputs",
       [](V& v, const T& t) { v.dry_run = On(t); }},
      {"--json", "json", kSwitch, false, "", nullptr, kAny, kOutput,
       "with --dry-run: the report as JSON; else print the manifest to stdout",
       [](V& v, const T& t) { v.json = On(t); }},
      {"--report", "report", kSwitch, false, "", nullptr, kAny, kOutput,
       "also write report.html (shard report) beside manifest.json; with --num-tasks run shard report after merge",
       [](V& v, const T& t) { v.report = On(t); }},
      {"--no-sync", "no-sync", kSwitch, false, "", nullptr, kAny, kOutput,
       "skip every fsync (of shards, entries, manifest, folders): faster, unsafe on power loss",
       [](V& v, const T& t) { v.no_sync = On(t); }},
      {"-q,--quiet", "quiet", kSwitch, false, "", nullptr, kAny, kRun, "no progress bar or summary",
       [](V& v, const T& t) { v.quiet = On(t); }},
      {"--progress-interval", "progress-interval", kValue, false, "FLOAT", "10", Number(0.001, 86400), kRun,
       "seconds between progress lines when stderr is not a terminal",
       [](V& v, const T& t) { v.progress_interval = Num(t); }},
      {"-v,--verbose", "verbose", kSwitch, false, "", nullptr, kAny, kRun, "list every reject and risky input",
       [](V& v, const T& t) { v.verbose = On(t); }},
  };
}

}  // namespace

const std::vector<ConvertFlag>& ConvertFlagTable() {
  static const std::vector<ConvertFlag> table = MakeTable();
  return table;
}

const ConvertFlag* FindConvertFlag(std::string_view name) {
  for (const ConvertFlag& f : ConvertFlagTable()) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

std::string ConvertFlagOptionName(const ConvertFlag& flag) {
  return flag.arity == FlagArity::kPositional ? std::string(flag.name) : "--" + std::string(flag.name);
}

std::string CheckFlagText(const FlagCheck& check, const std::string& text) {
  switch (check.kind) {
    case FlagCheck::kNone:
      return std::string();
    case FlagCheck::kInteger:
      return util::CheckIntegerText(text, static_cast<int64_t>(check.lo), static_cast<int64_t>(check.hi));
    case FlagCheck::kUint64:
      return util::CheckUint64Text(text);
    case FlagCheck::kNumber:
      return util::CheckNumberText(text, check.lo, check.hi);
    case FlagCheck::kNonNegative:
      return util::CheckIntegerText(text, 0, INT_MAX);
    case FlagCheck::kPrefix:
      return text.empty() ? "the prefix is empty" : std::string();
  }
  return std::string();
}

std::string FlagCheckDescription(const FlagCheck& check) {
  switch (check.kind) {
    case FlagCheck::kNone:
      return std::string();
    case FlagCheck::kInteger:
      return util::IntegerRangeText(static_cast<int64_t>(check.lo), static_cast<int64_t>(check.hi));
    case FlagCheck::kUint64:
      return "0..2^64-1";
    case FlagCheck::kNumber:
      return util::NumberRangeText(check.lo, check.hi);
    case FlagCheck::kNonNegative:
      return "NONNEGATIVE";
    case FlagCheck::kPrefix:
      return "NAME";
  }
  return std::string();
}

Status SetConvertFlag(const ConvertFlag& flag, const std::string& text, ConvertFlagValues* v) {
  if (flag.arity == FlagArity::kSwitch && text != "true" && text != "false") {
    return InvalidArgumentError(ConvertFlagOptionName(flag) + ": a switch is true or false, not '" + text + "'");
  }
  if (std::string e = CheckFlagText(flag.check, text); !e.empty()) {
    return InvalidArgumentError(ConvertFlagOptionName(flag) + ": " + e);
  }
  flag.set(*v, text);
  return Status::OK();
}

}  // namespace libshard::remote

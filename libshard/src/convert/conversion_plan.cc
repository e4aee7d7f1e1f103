// The conversion's options as data: defaults filled in, the options proto
// recorded in every manifest, plan ids, the record schema, the task from the
// environment, and where the samples come from (converter.h, converter_internal.h).
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "convert/converter_internal.h"
#include "libshard/convert/sample_pack.h"
#include "libshard/example/image_keys.h"
#include "libshard/example/schema_kind.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/util/sha256.h"

namespace libshard::convert {

namespace fs = std::filesystem;

namespace internal {

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

uint64_t FileSize(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : UINT64_MAX;
}

// The default shard prefix: the input's name, "." and ".." resolved (so
// `shard convert . -o ../out` names the shards after the current folder).
static std::string Basename(std::string path) {
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(path, ec).lexically_normal();
  if (!ec) path = abs.string();
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = base.rfind('.');
  // A CSV's name without its extension: a local file, or an object (s3://.../labels.csv).
  const std::string ext = dot == std::string::npos ? "" : base.substr(dot);
  const bool object_csv = path.find(":/") != std::string::npos && (ext == ".csv" || ext == ".tsv");
  if ((IsRegularFile(path) || object_csv) && dot != std::string::npos && dot > 0) base = base.substr(0, dot);
  return base;
}

StatusOr<Listing> ListInput(const ConvertOptions& o) {
  ListOptions list = o.list;
  list.exclude_dir = o.output;                // output inside the input: not listed
  list.ignore.push_back(o.mask_labels_file);  // CamVid keeps class_dict.csv beside its folders
  const bool boxes = o.annotations.format != AnnotationFormat::kNone;
  if (boxes) {
    list.keep_empty_classes = true;  // a labels/ or Annotations/ folder beside the images is no class
    list.ignore.push_back(o.annotations.source);
  }
  if (o.list_input) {
    if (boxes) return InvalidArgumentError(o.input + ": detection annotations are read with a local input");
    LIBSHARD_ASSIGN_OR_RETURN(Listing listing, o.list_input(o));
    if (listing.samples.empty() && listing.rejects.empty()) {
      return FailedPreconditionError(o.input + ": found no images (" + SkipSummary(listing.skipped) +
                                     "); nothing to convert");
    }
    return listing;
  }
  if (IsSamplePack(o.input)) {
    if (boxes) return InvalidArgumentError(o.input + ": a sample pack carries no detection boxes");
    return ListSamplePack(o.input, o.list);
  }
  StatusOr<Listing> listing = IsRegularFile(o.input) ? ReadSourceCsv(o.input, o.list) : ListFolder(o.input, list);
  if (listing.ok() && boxes) {
    StatusOr<AnnotationSummary> summary = AttachAnnotations(o.annotations, &*listing);
    if (!summary.ok()) return summary.status();
    listing->annotations = std::move(*summary);
  }
  if (!listing.ok() || !listing->samples.empty() || !listing->rejects.empty()) return listing;
  // Nothing to convert and nothing rejected: an empty dataset must not pass
  // for a converted one (a failed mount, a wrong folder).
  std::string found = SkipSummary(listing->skipped);
  if (found.empty()) {
    found = IsRegularFile(o.input) ? "the CSV lists no rows"
            : listing->class_names.empty()
                ? "the folder is empty"
                : "only " + std::to_string(listing->class_names.size()) + " empty class folder(s)";
  }
  return FailedPreconditionError(o.input + ": found no images (" + found + "); nothing to convert");
}

// The estimated output bytes per sample, for the shard count.
static std::function<uint64_t(const SourceSample&)> Estimator(const EncodeOptions& e) {
  const int w = e.transform.width, h = e.transform.height;
  const bool sized = e.transform.mode != image::ResizeMode::kNone && w > 0 && h > 0;
  const uint64_t pixels = static_cast<uint64_t>(w) * static_cast<uint64_t>(h);
  const image::OutputFormat f = e.format;
  return [=](const SourceSample& s) -> uint64_t {
    if (!sized) return s.size;
    switch (f) {
      case image::OutputFormat::kRaw:
        return pixels * 3;
      case image::OutputFormat::kPng:
        return pixels * 2;
      // Photos at quality 90, 4:2:0, come to about 0.3 bytes per pixel
      // (0.26 measured on 10,000 224x224 crops of samples/photos).
      case image::OutputFormat::kJpeg:
        return std::min<uint64_t>(s.size, pixels * 3 / 10);
    }
    return s.size;
  };
}

// What decides a shard's bytes, hashed.
// A sample's objects as text, for its shard's plan_id: a changed
// annotation redoes the shard.
static std::string ObjectsText(const SampleObjects& objs) {
  std::string t = std::to_string(objs.width) + "x" + std::to_string(objs.height) + (objs.normalised ? "n" : "") +
                  " " + objs.source_id;
  char buf[160];
  for (const ObjectBox& b : objs.objects) {
    std::snprintf(buf, sizeof(buf), ";%.17g,%.17g,%.17g,%.17g,%lld,%.17g,%d%d%d", b.xmin, b.ymin, b.xmax, b.ymax,
                  static_cast<long long>(b.label), b.area, b.is_crowd, b.difficult, b.truncated);
    t += buf;
  }
  return t;
}

// A sample's CSV feature values as text, for its shard's plan_id: a changed
// value redoes the shard. Floats exactly (%a); bytes with their length.
static std::string FeaturesText(const std::vector<FeatureValue>& values) {
  std::string t;
  char buf[64];
  for (const FeatureValue& v : values) {
    t += "[";
    for (int64_t i : v.ints) t += std::to_string(i) + ",";
    for (float x : v.floats) {
      std::snprintf(buf, sizeof(buf), "%a,", static_cast<double>(x));
      t += buf;
    }
    t += std::to_string(v.bytes.size()) + ":" + v.bytes + "]";
  }
  return t;
}

std::string PlanId(const std::string& options_bytes, const Listing& listing, const PlannedShard& shard) {
  std::string text = std::string(LIBSHARD_VERSION) + "\n" + options_bytes + "\n" + shard.file;
  for (uint32_t i : shard.samples) {
    const SourceSample& s = listing.samples[i];
    text += "\n" + s.path + "\t" + std::to_string(s.label) + "\t" + std::to_string(s.size) + "\t" +
            fs::path(s.mask_path).filename().string();
    if (const std::string_view name = ClassName(listing, s.label); !name.empty()) text += "\t" + std::string(name);
    if (s.objects != nullptr) text += "\t" + ObjectsText(*s.objects);
    if (!s.features.empty()) text += "\t" + FeaturesText(s.features);
  }
  return util::Sha256Hex(text);
}

std::string PlanOptionsBytes(const ConversionOptions& options) {
  ConversionOptions p = options;
  if (p.leaks() == "fail") p.set_leaks("warn");
  if (p.dedup().empty()) {
    p.clear_leak_distance();
    return p.SerializeAsString();
  }
  // Before the listing-order rule, --dedup within kept the first copy in plan
  // order under the same options: those shards are not this rule's.
  return p.SerializeAsString() + "\ndedup in listing order";
}

}  // namespace internal

using internal::Basename;
using internal::Estimator;
using internal::IsRegularFile;

Status CheckOutputFolder(const ConvertOptions& o) {
  struct stat in, out;
  if (o.input.empty() || o.output.empty() || ::stat(o.input.c_str(), &in) != 0 || !S_ISDIR(in.st_mode)) {
    return Status::OK();
  }
  std::error_code ec1, ec2;
  const bool same = ::stat(o.output.c_str(), &out) == 0
                        ? out.st_dev == in.st_dev && out.st_ino == in.st_ino
                        : fs::weakly_canonical(o.output, ec1) == fs::weakly_canonical(o.input, ec2);
  if (same) {
    return InvalidArgumentError("output folder " + o.output + " is the input folder " + o.input +
                                "; write the shards to another folder (one inside the input that holds only "
                                "shards is left out of the listing)");
  }
  return Status::OK();
}

ConvertOptions Normalized(const ConvertOptions& in) {
  ConvertOptions o = in;
  if (o.plan.prefix.empty()) {
    // A pack's name, or the input's (a pack with a broken marker is refused by its listing).
    StatusOr<std::string> pack = IsSamplePack(o.input) ? SamplePackName(o.input) : StatusOr<std::string>("");
    o.plan.prefix = pack.ok() && !pack->empty() ? *pack : Basename(o.input);
  }
  if (!o.plan.estimate) o.plan.estimate = Estimator(o.encode);
  // VOC names no classes of its own: --labels lists them.
  if (o.annotations.format == AnnotationFormat::kVoc && o.annotations.class_names_file.empty()) {
    o.annotations.class_names_file = o.list.labels_file;
    o.list.labels_file.clear();
  }
  return o;
}

ConversionOptions ToProto(const ConvertOptions& o) {
  ConversionOptions p;
  const bool csv = IsRegularFile(o.input);
  p.set_input(o.input);
  if (csv) p.set_manifest_csv(o.input);
  p.set_masks(o.list.masks);
  p.set_mask_labels(o.mask_labels_file);
  p.set_labels_file(o.list.labels_file.empty() ? o.annotations.class_names_file : o.list.labels_file);
  p.set_annotations(AnnotationFormatName(o.annotations.format));
  p.set_annotation_source(o.annotations.source);
  if (o.annotations.format != AnnotationFormat::kNone) p.set_box_min_visible(o.annotations.min_visible);
  p.set_prefix(o.plan.prefix);
  p.set_val_fraction(o.list.val_fraction);
  p.set_shard_size_bytes(o.plan.shard_size_bytes);
  p.set_records_per_shard(o.plan.records_per_shard);
  p.set_seed(o.plan.seed);
  p.set_shuffle(o.plan.shuffle);
  p.set_width(o.encode.transform.width);
  p.set_height(o.encode.transform.height);
  p.set_resize_mode(image::ResizeModeName(o.encode.transform.mode));
  p.set_filter(image::FilterName(o.encode.transform.filter));
  p.set_format(image::OutputFormatName(o.encode.format));
  p.set_quality(o.encode.jpeg.quality);
  p.set_zstd_level(o.encode.raw.zstd_level);
  p.set_raw_filter(image::RawFilterName(o.encode.raw.filter));
  p.set_reencode(image::ReencodeModeName(o.encode.reencode));
  p.set_on_error(o.fail_on_error ? "fail" : "skip");
  p.set_label_offset(o.list.label_offset);
  p.set_unknown_color(o.encode.mask_options.unknown == image::UnknownColor::kIgnore ? "ignore" : "error");
  // Every other option that changes a byte of output (tests/convert/
  // converter_test.cc EveryOutputOptionIsInThePlan flips each one).
  const image::DecodeOptions& d = o.encode.decode;
  p.set_channels(d.channels == image::ChannelMode::kRgb    ? "rgb"
                 : d.channels == image::ChannelMode::kGray ? "gray"
                                                           : "auto");
  p.set_alpha(d.alpha == image::AlphaMode::kKeep ? "keep" : "composite");
  p.set_tiff_page(d.tiff_page);
  for (const CsvFeature& f : o.list.features) p.add_features(CsvFeatureText(f));
  p.set_mask_suffix(o.list.mask_suffix);
  p.set_png_level(o.encode.png.compression_level);
  p.set_jpeg_subsampling(o.encode.jpeg.subsampling == image::ChromaSubsampling::k444 ? "4:4:4" : "4:2:0");
  p.set_jpeg_progressive(o.encode.jpeg.progressive);
  p.set_jpeg_optimize_huffman(o.encode.jpeg.optimize_huffman);
  auto join = [](std::initializer_list<int> v) {
    std::string s;
    for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
    return s;
  };
  p.set_background(join({d.background[0], d.background[1], d.background[2]}));
  const auto& fill = o.encode.transform.fill;
  p.set_fill(join({fill[0], fill[1], fill[2], fill[3]}));
  if (const auto& c = o.encode.transform.crop) p.set_crop(join({c->x, c->y, c->width, c->height}));
  p.set_max_pixels(d.max_pixels);
  p.set_apply_orientation(d.apply_orientation);
  p.set_strict_jpeg(d.strict_jpeg);
  p.set_mask_ignore_index(o.encode.mask_options.ignore_index);
  p.set_leaks(LeakModeName(o.leaks));
  p.set_leak_distance(o.leak_distance);
  p.set_dedup(DedupName(o));
  // Paths that are not UTF-8 as the manifest's text shows them: the plan's
  // bytes are a serialization, whose strings hold UTF-8.
  manifest::EscapeInvalidUtf8(&p);
  return p;
}

std::vector<FeatureSpec> RecordSchema(const ConvertOptions& o, bool labeled, bool masks) {
  std::vector<FeatureSpec> schema;
  using example::FeatureKind;
  auto add = [&](const char* key, FeatureKind kind, bool required, bool list = false) {
    FeatureSpec f;
    f.set_key(key);
    f.set_kind(example::SchemaKindName(kind));
    f.set_required(required);
    f.set_list(list);
    schema.push_back(f);
  };
  add(keys::kEncoded, FeatureKind::kBytes, true);
  add(keys::kFormat, FeatureKind::kBytes, true);
  add(keys::kHeight, FeatureKind::kInt64, true);
  add(keys::kWidth, FeatureKind::kInt64, true);
  add(keys::kChannels, FeatureKind::kInt64, true);
  add(keys::kColorspace, FeatureKind::kBytes, true);
  const bool raw = o.encode.format == image::OutputFormat::kRaw;
  add(keys::kShape, FeatureKind::kInt64, raw);
  add(keys::kDtype, FeatureKind::kBytes, raw);
  add(keys::kLabel, FeatureKind::kInt64, labeled);
  add(keys::kText, FeatureKind::kBytes, labeled);
  add(keys::kFilename, FeatureKind::kBytes, true);
  add(keys::kSha256, FeatureKind::kBytes, true);
  add(keys::kMaskEncoded, FeatureKind::kBytes, masks);
  add(keys::kMaskFormat, FeatureKind::kBytes, masks);
  for (const CsvFeature& f : o.list.features) {
    const bool ints = f.type == FeatureType::kInt || f.type == FeatureType::kIntList;
    const bool floats = f.type == FeatureType::kFloat || f.type == FeatureType::kFloatList;
    const bool list = f.type == FeatureType::kIntList || f.type == FeatureType::kFloatList;
    add(f.column.c_str(), ints ? FeatureKind::kInt64 : floats ? FeatureKind::kFloat : FeatureKind::kBytes, true, list);
  }
  if (o.annotations.format != AnnotationFormat::kNone) {
    add(keys::kSourceId, FeatureKind::kBytes, true);
    for (const char* k : {keys::kObjectXmin, keys::kObjectXmax, keys::kObjectYmin, keys::kObjectYmax})
      add(k, FeatureKind::kFloat, true, true);
    add(keys::kObjectLabel, FeatureKind::kInt64, true, true);
    add(keys::kObjectText, FeatureKind::kBytes, true, true);
    add(keys::kObjectArea, FeatureKind::kFloat, true, true);
    add(keys::kObjectIsCrowd, FeatureKind::kInt64, true, true);
    add(keys::kObjectDifficult, FeatureKind::kInt64, true, true);
    if (o.annotations.format == AnnotationFormat::kVoc) add(keys::kObjectTruncated, FeatureKind::kInt64, true, true);
  }
  return schema;
}

StatusOr<std::optional<EnvironmentTask>> TaskFromEnvironment() {
  // Unset or empty: nullopt; set: its value, or an error naming it.
  auto get = [](const char* name) -> StatusOr<std::optional<uint64_t>> {
    const char* s = std::getenv(name);
    if (s == nullptr || *s == '\0') return std::optional<uint64_t>();
    char* end = nullptr;
    errno = 0;
    const uint64_t v = std::strtoull(s, &end, 10);
    if (*end != '\0' || errno != 0 || *s == '-' || *s == '+' || *s == ' ') {
      return InvalidArgumentError(std::string(name) + "='" + s + "' is not a task number");
    }
    return std::optional<uint64_t>(v);
  };
  LIBSHARD_ASSIGN_OR_RETURN(std::optional<uint64_t> id, get("SLURM_ARRAY_TASK_ID"));
  if (id) {
    LIBSHARD_ASSIGN_OR_RETURN(std::optional<uint64_t> count, get("SLURM_ARRAY_TASK_COUNT"));
    LIBSHARD_ASSIGN_OR_RETURN(std::optional<uint64_t> min, get("SLURM_ARRAY_TASK_MIN"));
    LIBSHARD_ASSIGN_OR_RETURN(std::optional<uint64_t> step, get("SLURM_ARRAY_TASK_STEP"));
    const uint64_t lo = min.value_or(0), by = step.value_or(1);
    std::string source = "SLURM_ARRAY_TASK_ID=" + std::to_string(*id);
    if (min) source += ", SLURM_ARRAY_TASK_MIN=" + std::to_string(*min);
    if (step) source += ", SLURM_ARRAY_TASK_STEP=" + std::to_string(*step);
    if (count) source += ", SLURM_ARRAY_TASK_COUNT=" + std::to_string(*count);
    if (!count) {
      return InvalidArgumentError(source +
                                  ": SLURM_ARRAY_TASK_COUNT is not set, so the number of tasks is "
                                  "unknown; give --num-tasks N and --task-index I");
    }
    if (by == 0 || *id < lo || (*id - lo) % by != 0 || (*id - lo) / by >= *count || *count > 99999) {
      return InvalidArgumentError(
          source + ": not one of the array's " + std::to_string(*count) + " tasks (MIN + k * STEP, k in 0.." +
          std::to_string(*count == 0 ? 0 : *count - 1) +
          "); an array given as a list (--array=1,5,9) has no step: give --num-tasks N and --task-index I");
    }
    EnvironmentTask t;
    t.task_index = static_cast<uint32_t>((*id - lo) / by);
    t.num_tasks = static_cast<uint32_t>(*count);
    t.source = source;
    return std::optional<EnvironmentTask>(t);
  }
  LIBSHARD_ASSIGN_OR_RETURN(std::optional<uint64_t> index, get("JOB_COMPLETION_INDEX"));
  if (index) {
    if (*index > 99998) {
      return InvalidArgumentError("JOB_COMPLETION_INDEX=" + std::to_string(*index) + " is not in 0..99998");
    }
    EnvironmentTask t;
    t.task_index = static_cast<uint32_t>(*index);
    t.source = "JOB_COMPLETION_INDEX=" + std::to_string(*index);
    return std::optional<EnvironmentTask>(t);
  }
  return std::optional<EnvironmentTask>();
}

}  // namespace libshard::convert

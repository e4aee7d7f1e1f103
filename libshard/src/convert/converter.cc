#include "libshard/convert/converter.h"

#include <sys/stat.h>
#include <unistd.h>

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

#include "libshard/convert/manifest_io.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/convert/output_lock.h"
#include "libshard/crc32c.h"
#include "libshard/example/image_keys.h"
#include "libshard/io/shard_paths.h"
#include "libshard/io/mapped_file.h"
#include "libshard/io/writable_file.h"
#include "libshard/record/record_writer.h"
#include "libshard/text_escape.h"
#include "util/catch_status.h"

namespace libshard::convert {
namespace {

namespace fs = std::filesystem;

// Largest source file read (an image bigger than this is rejected).
constexpr uint64_t kMaxSourceBytes = uint64_t{1} << 30;

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
std::string Basename(std::string path) {
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(path, ec).lexically_normal();
  if (!ec) path = abs.string();
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = base.rfind('.');
  if (IsRegularFile(path) && dot != std::string::npos && dot > 0) base = base.substr(0, dot);
  return base;
}

StatusOr<Listing> ListInput(const ConvertOptions& o) {
  if (IsRegularFile(o.input)) return ReadManifestCsv(o.input, o.list);
  ListOptions list = o.list;
  list.exclude_dir = o.output;  // output inside the input: not listed
  list.ignore.push_back(o.mask_labels_file);  // CamVid keeps class_dict.csv beside its folders
  return ListFolder(o.input, list);
}

// The estimated output bytes per sample, for the shard count.
std::function<uint64_t(const SourceSample&)> Estimator(const EncodeOptions& e) {
  const int w = e.transform.width, h = e.transform.height;
  const bool sized = e.transform.mode != image::ResizeMode::kNone && w > 0 && h > 0;
  const uint64_t pixels = static_cast<uint64_t>(w) * static_cast<uint64_t>(h);
  const image::OutputFormat f = e.format;
  return [=](const SourceSample& s) -> uint64_t {
    if (!sized) return s.size;
    switch (f) {
      case image::OutputFormat::kRaw: return pixels * 3;
      case image::OutputFormat::kPng: return pixels * 2;
      // Photos at quality 90, 4:2:0, come to about 0.3 bytes per pixel
      // (0.26 measured on 10,000 224x224 crops of samples/photos).
      case image::OutputFormat::kJpeg: return std::min<uint64_t>(s.size, pixels * 3 / 10);
    }
    return s.size;
  };
}

std::string NowRfc3339() {
  std::time_t t = std::time(nullptr);
  std::tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// What decides a shard's bytes, hashed.
std::string PlanId(const std::string& options_bytes, const Listing& listing,
                   const PlannedShard& shard) {
  std::string text = std::string(LIBSHARD_VERSION) + "\n" + options_bytes + "\n" + shard.file;
  for (uint32_t i : shard.samples) {
    const SourceSample& s = listing.samples[i];
    text += "\n" + s.path + "\t" + std::to_string(s.label) + "\t" + std::to_string(s.size) +
            "\t" + fs::path(s.mask_path).filename().string();
    if (const std::string_view name = ClassName(listing, s.label); !name.empty()) text += "\t" + std::string(name);
  }
  return Sha256Hex(text);
}

// Forwards to a file and keeps the CRC-32C of everything appended, so the
// shard's whole-file checksum costs no second read.
class Crc32cFile : public io::WritableFile {
 public:
  Crc32cFile(std::unique_ptr<io::WritableFile> file, uint32_t* crc)
      : file_(std::move(file)), crc_(crc) {}
  Status Append(std::string_view data) override {
    *crc_ = crc32c::Extend(*crc_, data.data(), data.size());
    return file_->Append(data);
  }
  Status Flush() override { return file_->Flush(); }
  Status Sync() override { return file_->Sync(); }
  Status Close() override { return file_->Close(); }
  const std::string& name() const override { return file_->name(); }

 private:
  std::unique_ptr<io::WritableFile> file_;
  uint32_t* crc_;
};

struct Work {
  size_t shard;     // position in plan.shards
  uint32_t sample;  // index into listing.samples
  bool first = false, last = false;
};

struct Item {
  const Work* work = nullptr;
  std::string record;
  std::string reject;  // non-empty: the reason this input was rejected
  StatsAccumulator stats;
  uint64_t bytes_read = 0;
};

// Writes the shards in order: a temporary file per shard, renamed when done.
class ShardSink {
 public:
  ShardSink(const ConvertOptions& o, const ShardPlan& plan, const Listing& listing,
            const std::map<size_t, std::string>& plan_ids)
      : o_(o), plan_(plan), listing_(listing), plan_ids_(plan_ids) {}
  ~ShardSink() { Abort(); }

  Status Add(Item& item) {
    const Work& w = *item.work;
    if (w.first) LIBSHARD_RETURN_IF_ERROR(Begin(w.shard));
    if (item.reject.empty()) {
      LIBSHARD_RETURN_IF_ERROR(writer_->Write(item.record));
      stats_.Merge(item.stats);
    } else {
      Reject* r = entry_.add_rejects();
      const SourceSample& s = listing_.samples[w.sample];
      r->set_path(EscapeText(s.path));
      r->set_reason(EscapeText(s.origin.empty() ? item.reject : s.origin + ": " + item.reject));
      stats_.AddRejected();
    }
    if (w.last) return Finish();
    return Status::OK();
  }

  // Removes the shard being written, if any (also one whose entry or
  // renames failed).
  void Abort() {
    if (writer_ != nullptr) (void)writer_->Close();
    writer_.reset();
    if (temp_.empty()) return;
    ::unlink(temp_.c_str());
    ::unlink((temp_ + ".idx").c_str());
    temp_.clear();
  }

  std::vector<ShardEntry>& entries() { return entries_; }

 private:
  Status Begin(size_t pos) {
    const PlannedShard& s = plan_.shards[pos];
    temp_ = o_.output + "/" + kStateDir + "/" + s.file + ".partial";
    record::WriterOptions wo;
    wo.write_index = true;
    wo.sync_on_close = o_.sync;
    crc_ = 0;
    LIBSHARD_ASSIGN_OR_RETURN(auto data, io::NewPosixWritableFile(temp_));
    LIBSHARD_ASSIGN_OR_RETURN(auto index, io::NewPosixWritableFile(temp_ + ".idx"));
    writer_ = std::make_unique<record::RecordWriter>(
        std::make_unique<Crc32cFile>(std::move(data), &crc_), std::move(index), wo);
    entry_.Clear();
    entry_.set_file(s.file);
    entry_.set_split(s.split);
    entry_.set_index(s.index);
    entry_.set_count(s.count);
    entry_.set_index_file(s.file + ".idx");
    entry_.set_planned(s.samples.size());
    entry_.set_plan_id(plan_ids_.at(pos));
    stats_ = StatsAccumulator();
    return Status::OK();
  }

  Status Finish() {
    entry_.set_records(writer_->records_written());
    LIBSHARD_RETURN_IF_ERROR(writer_->Close());
    writer_.reset();
    entry_.set_bytes(FileSize(temp_));
    entry_.set_checksum(manifest::FormatChecksum(crc_));
    stats_.ToProto(entry_.mutable_stats());
    const std::string dir = o_.output + "/";
    const std::string state = dir + kStateDir + "/";
    // The entry first, then the index, then the shard: a shard under its
    // final name always has its entry and index beside it.
    LIBSHARD_RETURN_IF_ERROR(
        WriteFileAtomically(state + entry_.file() + ".json", ShardEntryToJson(entry_), o_.sync));
    LIBSHARD_RETURN_IF_ERROR(io::RenameFile(temp_ + ".idx", dir + entry_.index_file(), o_.sync));
    LIBSHARD_RETURN_IF_ERROR(io::RenameFile(temp_, dir + entry_.file(), o_.sync));
    temp_.clear();
    entries_.push_back(entry_);
    return Status::OK();
  }

  const ConvertOptions& o_;
  const ShardPlan& plan_;
  const Listing& listing_;
  const std::map<size_t, std::string>& plan_ids_;
  std::unique_ptr<record::RecordWriter> writer_;
  std::string temp_;
  uint32_t crc_ = 0;
  ShardEntry entry_;
  StatsAccumulator stats_;
  std::vector<ShardEntry> entries_;
};

// A complete shard from an earlier run with the same plan, or nothing.
std::optional<ShardEntry> ReusableShard(const ConvertOptions& o, const PlannedShard& s,
                                        const std::string& plan_id) {
  const std::string path = o.output + "/" + s.file;
  const std::string entry_path = o.output + "/" + kStateDir + "/" + s.file + ".json";
  if (!IsRegularFile(path) || !IsRegularFile(entry_path)) return std::nullopt;
  StatusOr<ShardEntry> e = ReadShardEntry(entry_path);
  if (!e.ok() || e->plan_id() != plan_id || e->bytes() != FileSize(path) ||
      FileSize(o.output + "/" + e->index_file()) == UINT64_MAX) {
    return std::nullopt;
  }
  return *e;
}

// Shards of an earlier run into this folder under another plan (another
// shard count, a split this plan no longer has) are removed with everything
// of theirs: a shard is stale when it is not in this plan and either is named
// PREFIX-SPLIT-NNNNN-of-MMMMM.tfrecord for a split of this plan, or has an
// entry in .libshard/ that this prefix names. Returns the removed shard names.
std::vector<std::string> RemoveStaleShards(const std::string& out, const std::string& prefix,
                                           const ShardPlan& plan) {
  std::set<std::string> planned, splits;
  for (const PlannedShard& s : plan.shards) {
    planned.insert(s.file);
    splits.insert(s.split);
  }
  const std::string state = out + "/" + kStateDir;
  // Shard names with a file of theirs here: the shard, its index, its entry,
  // its temporary files.
  std::set<std::string> candidates;
  auto collect = [&candidates](const std::string& folder, std::initializer_list<const char*> suffixes) {
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      for (std::string_view suffix : suffixes) {
        if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
          candidates.insert(name.substr(0, name.size() - suffix.size()));
          break;
        }
      }
    }
  };
  collect(out, {".idx", ""});
  collect(state, {".json", ".json.tmp", ".partial", ".partial.idx"});
  std::vector<std::string> removed;
  for (const std::string& name : candidates) {
    if (planned.count(name) || name.size() < 9 || name.compare(name.size() - 9, 9, ".tfrecord") != 0) continue;
    bool stale = false;
    const std::optional<io::ShardNumbering> numbered = io::ParseShardNumbering(name);
    for (const std::string& split : splits) {
      if (numbered && numbered->tail == ".tfrecord" && numbered->head == prefix + "-" + split) {
        stale = true;
      }
    }
    if (!stale && IsRegularFile(state + "/" + name + ".json")) {
      StatusOr<ShardEntry> e = ReadShardEntry(state + "/" + name + ".json");
      stale = e.ok() && e->file() == name && name == ShardFileName(prefix, e->split(), e->index(), e->count());
    }
    if (!stale) continue;
    for (const std::string& path :
         {out + "/" + name, out + "/" + name + ".idx", state + "/" + name + ".json",
          state + "/" + name + ".json.tmp", state + "/" + name + ".partial", state + "/" + name + ".partial.idx"}) {
      ::unlink(path.c_str());
    }
    removed.push_back(name);
  }
  return removed;
}

// The colour-mask classes in index order, for manifest.json.
void AddMaskClasses(const image::LabelMap& map, Manifest* m) {
  for (int i = 0; i < map.size(); ++i) {
    const image::LabelClass& c = map.classes()[i];
    MaskClass* out = m->add_mask_classes();
    out->set_index(i);
    out->set_name(EscapeText(c.name));
    out->set_r(c.r);
    out->set_g(c.g);
    out->set_b(c.b);
  }
}

}  // namespace

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
                                "; write the shards to another folder (one inside the input is fine: it is "
                                "left out of the listing)");
  }
  return Status::OK();
}

ConvertOptions Normalized(const ConvertOptions& in) {
  ConvertOptions o = in;
  if (o.plan.prefix.empty()) o.plan.prefix = Basename(o.input);
  if (!o.plan.estimate) o.plan.estimate = Estimator(o.encode);
  return o;
}

ConversionOptions ToProto(const ConvertOptions& o) {
  ConversionOptions p;
  const bool csv = IsRegularFile(o.input);
  p.set_input(o.input);
  if (csv) p.set_manifest_csv(o.input);
  p.set_masks(o.list.masks);
  p.set_mask_labels(o.mask_labels_file);
  p.set_labels_file(o.list.labels_file);
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
  p.set_unknown_color(o.encode.mask_options.unknown == image::UnknownColor::kIgnore ? "ignore"
                                                                                     : "error");
  // Every other option that changes a byte of output (tests/convert/
  // converter_test.cc EveryOutputOptionIsInThePlan flips each one).
  const image::DecodeOptions& d = o.encode.decode;
  p.set_channels(d.channels == image::ChannelMode::kRgb    ? "rgb"
                 : d.channels == image::ChannelMode::kGray ? "gray"
                                                           : "auto");
  p.set_alpha(d.alpha == image::AlphaMode::kKeep ? "keep" : "composite");
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
  return p;
}

std::vector<FeatureSpec> RecordSchema(const ConvertOptions& o, bool labeled, bool masks) {
  std::vector<FeatureSpec> schema;
  auto add = [&](const char* key, const char* kind, bool required) {
    FeatureSpec f;
    f.set_key(key);
    f.set_kind(kind);
    f.set_required(required);
    schema.push_back(f);
  };
  add(keys::kEncoded, "bytes", true);
  add(keys::kFormat, "bytes", true);
  add(keys::kHeight, "int64", true);
  add(keys::kWidth, "int64", true);
  add(keys::kChannels, "int64", true);
  add(keys::kColorspace, "bytes", true);
  const bool raw = o.encode.format == image::OutputFormat::kRaw;
  add(keys::kShape, "int64", raw);
  add(keys::kDtype, "bytes", raw);
  add(keys::kLabel, "int64", labeled);
  add(keys::kText, "bytes", labeled);
  add(keys::kFilename, "bytes", true);
  add(keys::kSha256, "bytes", true);
  add(keys::kMaskEncoded, "bytes", masks);
  add(keys::kMaskFormat, "bytes", masks);
  return schema;
}

bool TaskFromEnvironment(uint32_t* num_tasks, uint32_t* task_index, std::string* source) {
  auto get = [](const char* name, uint64_t* v) {
    const char* s = std::getenv(name);
    if (s == nullptr || *s == '\0') return false;
    char* end = nullptr;
    *v = std::strtoull(s, &end, 10);
    return *end == '\0';
  };
  uint64_t id, count, min = 0;
  if (get("SLURM_ARRAY_TASK_ID", &id) && get("SLURM_ARRAY_TASK_COUNT", &count)) {
    get("SLURM_ARRAY_TASK_MIN", &min);
    *task_index = static_cast<uint32_t>(id - min);
    *num_tasks = static_cast<uint32_t>(count);
    *source = "SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_COUNT";
    return true;
  }
  if (get("JOB_COMPLETION_INDEX", &id)) {
    *task_index = static_cast<uint32_t>(id);
    *source = "JOB_COMPLETION_INDEX";
    return true;
  }
  return false;
}

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

  std::optional<image::LabelMap> mask_map;
  EncodeOptions encode = o.encode;
  if (!o.mask_labels_file.empty()) {
    LIBSHARD_ASSIGN_OR_RETURN(std::string csv, io::ReadFileToString(o.mask_labels_file, 64 << 20));
    StatusOr<image::LabelMap> m = image::LabelMap::FromCsv(csv);
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
    if (std::optional<ShardEntry> e = ReusableShard(o, s, plan_ids[pos])) {
      entries.push_back(std::move(*e));
      ++result.shards_reused;
    } else {
      // A shard to redo loses its old file first: its new entry is written
      // before the new shard is renamed into place, and a crash in between
      // must not leave the new entry beside the old bytes (equal sizes would
      // make the next run reuse them).
      ::unlink((o.output + "/" + s.file).c_str());
      ::unlink((o.output + "/" + s.file + ".idx").c_str());
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
  Status failure;
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
                    LIBSHARD_RETURN_IF_ERROR(
                        EncodeSample(s, ClassName(listing, s.label), *bytes, mask, encode, &out, &item->stats));
                    item->record = std::move(out.record);
                    return Status::OK();
                  };
                  // A huge image (or a low ulimit -v) is a reject, never an abort.
                  Status st = util::CatchAsStatus(encode_sample, [] { return "decoding the image"; });
                  if (!st.ok()) item->reject = st.message();
                  return item.release();
                }) &
            tbb::make_filter<Item*, void>(
                tbb::filter_mode::serial_in_order, [&](Item* raw) {
                  std::unique_ptr<Item> item(raw);
                  if (!failure.ok()) return;
                  if (!item->reject.empty() && o.fail_on_error) {
                    const SourceSample& s = listing.samples[item->work->sample];
                    failure = FailedPreconditionError((s.origin.empty() ? "" : s.origin + ": ") +
                                                      SourceFilePath(listing.root, s.path) + ": " + item->reject);
                  } else {
                    failure = sink.Add(*item);
                  }
                  if (!failure.ok()) {
                    stop = true;
                    return;
                  }
                  ++prog.done;
                  prog.rejected += item->reject.empty() ? 0 : 1;
                  prog.bytes_read += item->bytes_read;
                  prog.bytes_written += item->record.size();
                  prog.shards_done += item->work->last ? 1 : 0;
                  if (progress) progress(prog);
                }));
  });
  return Status::OK();
  }, [] { return "converting (the shard being written is removed)"; });
  if (failure.ok()) failure = pipeline;
  if (!failure.ok()) {
    sink.Abort();
    return failure;
  }
  for (ShardEntry& e : sink.entries()) entries.push_back(std::move(e));
  result.shards_written = static_cast<uint32_t>(sink.entries().size());

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
  LIBSHARD_ASSIGN_OR_RETURN(
      result.manifest, AssembleManifest(options_proto, labels, RecordSchema(o, labeled, masks),
                                        std::move(entries), listing_rejects, single));
  result.manifest.set_plan_id(Sha256Hex(all_plan_ids));
  if (mask_map) AddMaskClasses(*mask_map, &result.manifest);
  RunInfo* run = result.manifest.mutable_run();
  run->set_started(started);
  run->set_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  run->set_threads(threads);
  run->set_num_tasks(o.num_tasks);
  run->set_task_index(o.task_index);
  result.rejected = result.manifest.rejects_size();

  if (single) {
    LIBSHARD_RETURN_IF_ERROR(WriteRejectsTsv(o.output + "/rejects.tsv", result.manifest, o.sync));
    result.manifest_path = o.output + "/" + kManifestName;
  } else {
    result.manifest_path = TaskManifestPath(o.output, o.task_index, o.num_tasks);
  }
  LIBSHARD_RETURN_IF_ERROR(
      WriteFileAtomically(result.manifest_path, ManifestToJson(result.manifest), o.sync));
  return result;
}

}  // namespace libshard::convert

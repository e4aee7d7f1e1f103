// Sample packs (sample_pack.h): the parts' writer, the pack's listing and
// the source that reads its samples' bytes.
#include "libshard/convert/sample_pack.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "convert/listing_internal.h"
#include "libshard/example/example_builder.h"
#include "libshard/example/example_view.h"
#include "libshard/io/contained_path.h"
#include "libshard/io/open_file.h"
#include "libshard/io/open_file_cache.h"
#include "libshard/manifest.pb.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/record/format.h"
#include "libshard/record/record_reader.h"
#include "libshard/record/record_writer.h"
#include "libshard/text_escape.h"

namespace libshard::convert {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kMaxParts = 100000;
// The keys of a .samples record.
constexpr char kKey[] = "key";
constexpr char kSplit[] = "split";
constexpr char kLabel[] = "label";
constexpr char kClass[] = "class";
constexpr char kOffset[] = "offset";
constexpr char kSize[] = "size";
constexpr char kMaskOffset[] = "mask_offset";
constexpr char kMaskSize[] = "mask_size";

std::string PartName(uint32_t part, uint32_t parts) {
  char name[48];
  std::snprintf(name, sizeof name, "part-%05u-of-%05u", part, parts);
  return name;
}

Status WriteMarker(const std::string& folder, const std::string& name) {
  const std::string marker = folder + "/" + kSamplePackMarker;
  if (IsSamplePack(folder)) {
    LIBSHARD_ASSIGN_OR_RETURN(std::string have, SamplePackName(folder));
    if (have != name) {
      return InvalidArgumentError(marker + " names the pack '" + have + "', not '" + name +
                                  "': one pack holds the partitions of one dataset");
    }
    return Status::OK();
  }
  SamplePackInfo info;
  info.set_format(kSamplePackFormat);
  info.set_name(name);
  LIBSHARD_ASSIGN_OR_RETURN(auto file, io::FileBeneath::Create(folder, kSamplePackMarker));
  LIBSHARD_RETURN_IF_ERROR(file->file().Append(manifest::ToJson(info) + "\n"));
  return file->Commit();
}

// Reads samples' image records from the parts' data files.
class PackSource : public SampleSource {
 public:
  // `ids`: each part's data file as listed (a file replaced since is refused).
  PackSource(std::string folder, uint32_t parts, std::vector<io::FileIdentity> ids)
      : folder_(std::move(folder)), parts_(parts), ids_(std::move(ids)), files_(64) {}

  StatusOr<std::string> Read(const SourceSample& s, uint64_t max_bytes) const override {
    return RecordAt(s, s.offset, s.size, "sample " + s.path, max_bytes);
  }
  StatusOr<std::string> ReadMask(const SourceSample& s, uint64_t max_bytes) const override {
    return RecordAt(s, s.mask_offset, s.mask_size, "the mask of sample " + s.path, max_bytes);
  }

 private:
  // The data of the record at `offset` of `s`'s part, `size` bytes, its CRC
  // checked.
  StatusOr<std::string> RecordAt(const SourceSample& s, uint64_t offset, uint64_t size, const std::string& what,
                                 uint64_t max_bytes) const {
    const std::string path = folder_ + "/" + PartName(s.part, parts_) + ".tfrecord";
    if (size > max_bytes) {
      return InvalidArgumentError(path + ": " + what + " is " + std::to_string(size) + " bytes, over the limit of " +
                                  std::to_string(max_bytes));
    }
    LIBSHARD_ASSIGN_OR_RETURN(std::shared_ptr<const io::ScopedFd> fd, files_.Get(s.part, path, ids_[s.part], 0));
    std::string buf(record::kFramingOverhead + size, '\0');
    const int64_t n = io::PreadFull(fd->get(), buf.data(), buf.size(), offset);
    if (n < 0) return IOError(path + ": reading " + what + " at byte " + std::to_string(offset));
    buf.resize(static_cast<size_t>(n));
    record::RecordView rec;
    record::FramingError error;
    if (record::DecodeRecordAt(buf, 0, {}, &rec, &error) != record::RecordFault::kNone) {
      error.offset += offset;
      return FramingStatus(error, path).WithContext(what);
    }
    if (rec.data.size() != size) {
      return DataLossError(path + ": the record at byte " + std::to_string(offset) + " holds " +
                           std::to_string(rec.data.size()) + " bytes; " + what + " is listed with " +
                           std::to_string(size));
    }
    buf.erase(0, record::kHeaderSize);  // the image in place: no second copy of its bytes
    buf.resize(size);
    return buf;
  }

  const std::string folder_;
  const uint32_t parts_;
  const std::vector<io::FileIdentity> ids_;
  // Keyed by partition. Get() reopens a file evicted meanwhile.
  mutable io::OpenFileCache files_;
};

// One part's .samples records appended to *rows, each with its part.
Status ReadPartSamples(const std::string& path, uint32_t part, std::vector<SourceSample>* rows,
                       std::vector<std::string>* class_of, bool* named, bool* numbered) {
  LIBSHARD_ASSIGN_OR_RETURN(std::string bytes, io::ReadFileToString(path, uint64_t{1} << 34));
  record::RecordReader reader(bytes);
  uint64_t row = 0;
  record::RecordView rec;
  Status st;
  while ((st = reader.Next(&rec)).ok()) {
    const std::string at = path + ": record at byte " + std::to_string(rec.offset) + ": ";
    StatusOr<example::ExampleView> ex = example::ExampleView::Parse(rec.data);
    if (!ex.ok()) return InvalidArgumentError(at + ex.status().message());
    example::FeatureView key, split, label, cls, offset, size;
    if (!ex->Find(kKey, &key) || key.size() != 1 || !ex->Find(kOffset, &offset) || offset.size() != 1 ||
        !ex->Find(kSize, &size) || size.size() != 1) {
      return InvalidArgumentError(at + "not a sample of a pack (key, offset and size are required)");
    }
    SourceSample s;
    s.path = std::string(key.bytes(0));
    LIBSHARD_RETURN_IF_ERROR(io::CheckRelativeName(s.path, "key").WithContext(at));
    if (ex->Find(kSplit, &split) && split.size() == 1) s.split = std::string(split.bytes(0));
    const bool has_label = ex->Find(kLabel, &label) && label.size() == 1;
    const bool has_class = ex->Find(kClass, &cls) && cls.size() == 1;
    if (has_label && label.int64(0) < 0) return InvalidArgumentError(at + "negative label");
    if (has_label) s.label = label.int64(0);
    *numbered |= has_label;
    *named |= has_class;
    if (offset.int64(0) < 0 || size.int64(0) < 0) return InvalidArgumentError(at + "negative offset or size");
    s.part = part;
    s.offset = static_cast<uint64_t>(offset.int64(0));
    s.size = static_cast<uint64_t>(size.int64(0));
    example::FeatureView mask_offset, mask_size;
    if (ex->Find(kMaskOffset, &mask_offset) && mask_offset.size() == 1 && ex->Find(kMaskSize, &mask_size) &&
        mask_size.size() == 1) {
      if (mask_offset.int64(0) < 0 || mask_size.int64(0) < 1) return InvalidArgumentError(at + "bad mask offset or size");
      s.mask_offset = static_cast<uint64_t>(mask_offset.int64(0));
      s.mask_size = static_cast<uint64_t>(mask_size.int64(0));
      s.mask_path = s.path + " (mask)";
    }
    s.origin = path + ":" + std::to_string(++row);
    rows->push_back(std::move(s));
    class_of->push_back(has_class ? std::string(cls.bytes(0)) : std::string());
  }
  if (st.code() != StatusCode::kOutOfRange) return st.WithContext(path);
  return Status::OK();
}

}  // namespace

struct SamplePartWriter::Files {
  std::unique_ptr<io::FileBeneath> data, samples;
  uint64_t offset = 0;
  bool sync = true;
  std::string record;
};

bool IsSamplePack(const std::string& folder) {
  struct stat st;
  return ::stat((folder + "/" + kSamplePackMarker).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

StatusOr<std::string> SamplePackName(const std::string& folder) {
  SamplePackInfo info;
  LIBSHARD_RETURN_IF_ERROR(manifest::ReadJsonFile(folder + "/" + kSamplePackMarker, &info));
  if (info.format() != kSamplePackFormat) {
    return InvalidArgumentError(folder + "/" + kSamplePackMarker + ": format '" + info.format() + "', not " +
                                kSamplePackFormat);
  }
  LIBSHARD_RETURN_IF_ERROR(ValidateNamePart("pack name", info.name()).WithContext(folder + "/" + kSamplePackMarker));
  return info.name();
}

StatusOr<std::unique_ptr<SamplePartWriter>> SamplePartWriter::Create(const std::string& folder,
                                                                     const std::string& name, uint32_t part,
                                                                     uint32_t parts, bool sync) {
  if (parts == 0 || parts > kMaxParts || part >= parts) {
    return InvalidArgumentError("partition " + std::to_string(part) + " of " + std::to_string(parts) +
                                ": the partition must be in 0..count-1 and the count in 1.." +
                                std::to_string(kMaxParts));
  }
  LIBSHARD_RETURN_IF_ERROR(ValidateNamePart("pack name", name));
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) return IOError("making " + folder + ": " + ec.message());
  LIBSHARD_RETURN_IF_ERROR(WriteMarker(folder, name));
  std::unique_ptr<SamplePartWriter> w(new SamplePartWriter());
  w->files_ = std::make_unique<Files>();
  w->files_->sync = sync;
  const std::string base = PartName(part, parts);
  // An earlier attempt of this partition killed mid-way left its
  // temporaries (io::FileBeneath's ".NAME.libshard-partial-N"): they go. (A
  // speculative attempt still writing one then fails at its rename; this one
  // commits.)
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string leaf = it->path().filename().string();
    if (leaf.rfind("." + base + ".", 0) == 0 && leaf.find(".libshard-partial-") != std::string::npos) {
      std::error_code rm;
      fs::remove(it->path(), rm);
    }
  }
  LIBSHARD_ASSIGN_OR_RETURN(w->files_->data, io::FileBeneath::Create(folder, base + ".tfrecord"));
  LIBSHARD_ASSIGN_OR_RETURN(w->files_->samples, io::FileBeneath::Create(folder, base + ".samples.tfrecord"));
  w->samples_path_ = w->files_->samples->path();
  return w;
}

SamplePartWriter::~SamplePartWriter() = default;

Status SamplePartWriter::Add(const PackedSample& sample, std::string_view image, std::string_view mask) {
  if (files_ == nullptr || files_->data == nullptr) {
    return FailedPreconditionError(samples_path_ + ": the partition is committed or failed");
  }
  const std::string at = "sample " + std::to_string(samples_) + " (key '" + EscapeText(sample.key) + "')";
  LIBSHARD_RETURN_IF_ERROR(io::CheckRelativeName(sample.key, "key").WithContext(at));
  if (!IsValidUtf8(sample.key)) return InvalidArgumentError(at + ": the key is not valid UTF-8");
  if (!sample.split.empty()) LIBSHARD_RETURN_IF_ERROR(ValidateNamePart("split name", sample.split).WithContext(at));
  if (sample.label < -1) return InvalidArgumentError(at + ": negative label " + std::to_string(sample.label));
  if (sample.label >= 0 && !sample.class_name.empty()) {
    return InvalidArgumentError(at + ": a label and a class name: give one of them");
  }
  if (!sample.class_name.empty() && !IsValidUtf8(sample.class_name)) {
    return InvalidArgumentError(at + ": the class name is not valid UTF-8");
  }
  labels_named_ |= !sample.class_name.empty();
  labels_numbered_ |= sample.label >= 0;
  if (labels_named_ && labels_numbered_) {
    return InvalidArgumentError(at + ": labels mix integers and class names in one partition");
  }
  if (image.size() > kMaxPackSampleBytes || mask.size() > kMaxPackSampleBytes) {
    return InvalidArgumentError(at + ": " + std::to_string(std::max(image.size(), mask.size())) +
                                " bytes, over the limit of " + std::to_string(kMaxPackSampleBytes));
  }
  example::ExampleBuilder b;
  b.AddBytes(kKey, sample.key);
  if (!sample.split.empty()) b.AddBytes(kSplit, sample.split);
  if (sample.label >= 0) b.AddInt64(kLabel, sample.label);
  if (!sample.class_name.empty()) b.AddBytes(kClass, sample.class_name);
  b.AddInt64(kOffset, static_cast<int64_t>(files_->offset));
  b.AddInt64(kSize, static_cast<int64_t>(image.size()));
  const uint64_t mask_offset = files_->offset + record::kFramingOverhead + image.size();
  if (!mask.empty()) {
    b.AddInt64(kMaskOffset, static_cast<int64_t>(mask_offset));
    b.AddInt64(kMaskSize, static_cast<int64_t>(mask.size()));
  }
  files_->record.clear();  // (SerializeTo appends; the buffer is kept for its capacity)
  b.SerializeTo(&files_->record);
  Status st = record::AppendFramedRecord(files_->data->file(), image);
  if (st.ok() && !mask.empty()) st = record::AppendFramedRecord(files_->data->file(), mask);
  if (st.ok()) st = record::AppendFramedRecord(files_->samples->file(), files_->record);
  if (!st.ok()) {
    files_.reset();  // the temporaries go
    return st;
  }
  files_->offset = mask_offset + (mask.empty() ? 0 : record::kFramingOverhead + mask.size());
  ++samples_;
  return Status::OK();
}

Status SamplePartWriter::Commit() {
  if (files_ == nullptr || files_->data == nullptr) {
    return FailedPreconditionError(samples_path_ + ": the partition is committed or failed");
  }
  Status st;
  if (files_->sync) st = files_->data->file().Sync();
  if (st.ok()) st = files_->data->Commit();
  if (st.ok() && files_->sync) st = files_->samples->file().Sync();
  if (st.ok()) st = files_->samples->Commit();
  files_.reset();
  return st;
}

StatusOr<Listing> ListSamplePack(const std::string& folder, const ListOptions& options) {
  if (!options.masks.empty() || !options.features.empty()) {
    return InvalidArgumentError(folder + ": a sample pack carries its own masks and no CSV features (no --masks, "
                                         "no --feature)");
  }
  LIBSHARD_RETURN_IF_ERROR(SamplePackName(folder).status());
  // The parts: every .samples file, all of one count, none missing.
  std::map<uint32_t, std::set<uint32_t>> by_count;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string leaf = it->path().filename().string();
    unsigned part = 0, parts = 0;
    char tail[32] = {0};
    if (std::sscanf(leaf.c_str(), "part-%5u-of-%5u%31s", &part, &parts, tail) == 3 &&
        std::string(tail) == ".samples.tfrecord" && leaf == PartName(part, parts) + ".samples.tfrecord") {
      by_count[parts].insert(part);
    }
  }
  if (ec) return IOError("listing " + folder + ": " + ec.message());
  if (by_count.empty()) return FailedPreconditionError(folder + ": the pack has no committed partition");
  if (by_count.size() > 1) {
    std::string counts;
    for (const auto& [n, parts] : by_count) counts += (counts.empty() ? "" : ", ") + std::to_string(n);
    return InvalidArgumentError(folder + ": partitions of " + counts +
                                " parts: a pack holds one run's partitions (write the pack anew)");
  }
  const uint32_t parts = by_count.begin()->first;
  for (uint32_t p = 0; p < parts; ++p) {
    if (by_count.begin()->second.count(p) == 0) {
      return FailedPreconditionError(folder + ": partition " + std::to_string(p) + " of " + std::to_string(parts) +
                                     " is missing (" + PartName(p, parts) +
                                     ".samples.tfrecord): run that partition again");
    }
  }
  Listing listing;
  listing.root = folder;
  std::vector<std::string> class_of;
  bool named = false, numbered = false;
  std::vector<io::FileIdentity> ids(parts);
  for (uint32_t p = 0; p < parts; ++p) {
    const size_t first = listing.samples.size();
    LIBSHARD_RETURN_IF_ERROR(ReadPartSamples(folder + "/" + PartName(p, parts) + ".samples.tfrecord", p,
                                             &listing.samples, &class_of, &named, &numbered));
    // Its data file holds every record it lists (the record itself is
    // checked when read).
    const std::string data = folder + "/" + PartName(p, parts) + ".tfrecord";
    LIBSHARD_RETURN_IF_ERROR(io::OpenForRead(data, &ids[p]).status());
    for (size_t i = first; i < listing.samples.size(); ++i) {
      const SourceSample& s = listing.samples[i];
      const bool mask_outside = !s.mask_path.empty() && (s.mask_offset > ids[p].size ||
                                                          s.mask_size + record::kFramingOverhead >
                                                              ids[p].size - s.mask_offset);
      if (mask_outside || s.offset > ids[p].size || s.size + record::kFramingOverhead > ids[p].size - s.offset) {
        return InvalidArgumentError(s.origin + ": sample " + s.path + " at byte " + std::to_string(s.offset) +
                                    " (" + std::to_string(s.size) + " bytes) lies past the end of " + data +
                                    " (" + std::to_string(ids[p].size) + " bytes)");
      }
    }
  }
  if (named && numbered) {
    return InvalidArgumentError(folder + ": labels mix integers and class names across partitions");
  }
  bool has_split = false;
  for (const SourceSample& s : listing.samples) has_split |= !s.split.empty();
  if (named || !options.labels_file.empty()) {
    std::set<std::string> seen;
    for (const std::string& c : class_of) {
      if (!c.empty()) seen.insert(c);
    }
    LIBSHARD_ASSIGN_OR_RETURN(auto index, internal::LabelIndex(options, seen, &listing.class_names));
    std::vector<SourceSample> kept;
    kept.reserve(listing.samples.size());
    for (size_t i = 0; i < listing.samples.size(); ++i) {
      SourceSample& s = listing.samples[i];
      if (!class_of[i].empty()) {
        auto it = index.find(class_of[i]);
        if (it == index.end()) {
          listing.rejects.push_back({s.path, s.origin + ": class '" + class_of[i] + "' is not in " +
                                                 options.labels_file});
          continue;
        }
        s.label = it->second;
      }
      kept.push_back(std::move(s));
    }
    listing.samples = std::move(kept);
  }
  for (SourceSample& s : listing.samples) {
    if (s.split.empty()) s.split = options.default_split;
  }
  listing.layout = "pack";
  LIBSHARD_RETURN_IF_ERROR(internal::FinishListing(options, has_split, &listing));
  // Each key once: after the canonical sort, equal keys of a split are neighbours.
  for (size_t i = 1; i < listing.samples.size(); ++i) {
    const SourceSample &a = listing.samples[i - 1], &b = listing.samples[i];
    if (a.split == b.split && a.path == b.path) {
      return InvalidArgumentError(folder + ": key '" + a.path + "' is in " + a.origin + " and " + b.origin +
                                  ": each sample once");
    }
  }
  // Rejects name the key alone, as a folder's do: the same rejects.tsv for
  // any partition count.
  for (SourceSample& s : listing.samples) s.origin.clear();
  listing.source = std::make_shared<PackSource>(folder, parts, std::move(ids));
  return listing;
}

}  // namespace libshard::convert

#include "libshard/reader/dataset.h"


#include <algorithm>
#include <filesystem>
#include <iterator>
#include <set>

#include "libshard/io/mapped_file.h"
#include "libshard/manifest.pb.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/io/shard_paths.h"
#include "libshard/store/object_store.h"

namespace libshard::reader {
namespace {


bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

Status Dataset::AddShard(const std::string& path, int64_t expected_records) {
  LIBSHARD_ASSIGN_OR_RETURN(auto shard, ShardReader::Open(path, options_.shard));
  if (expected_records >= 0 && shard->size() != static_cast<uint64_t>(expected_records)) {
    return DataLossError(path + ": " + std::to_string(shard->size()) + " records, the manifest says " +
                         std::to_string(expected_records));
  }
  if (starts_.empty()) starts_.push_back(0);
  starts_.push_back(starts_.back() + shard->size());
  shards_.push_back(std::move(shard));
  return Status::OK();
}

namespace {

// "train, test" for messages.
std::string SplitNames(const libshard::Manifest& m) {
  std::string out;
  for (const auto& split : m.splits()) out += (out.empty() ? "" : ", ") + split.name();
  return out.empty() ? "none" : out;
}

}  // namespace

StatusOr<std::vector<const libshard::ShardEntry*>> Dataset::SelectShards(const std::string& src,
                                                                          const libshard::Manifest& m) const {
  const std::string& want = options_.split;
  if (want.empty() && m.splits_size() > 1) {
    return InvalidArgumentError(src + ": the manifest has splits " + SplitNames(m) +
                                "; pick one (split=NAME, or \"*\" for all)");
  }
  std::vector<const libshard::ShardEntry*> out;
  bool found_split = want.empty() || want == "*";
  for (const auto& split : m.splits()) {
    if (!found_split && split.name() != want) continue;
    if (split.name() == want) found_split = true;
    for (const auto& sh : split.shards()) out.push_back(&sh);
    if (split.name() == want) break;
  }
  if (!found_split) {
    return InvalidArgumentError(src + ": no split named \"" + want + "\" (the manifest has " + SplitNames(m) + ")");
  }
  return out;
}

Status Dataset::AddManifest(const std::string& src) {
  LIBSHARD_ASSIGN_OR_RETURN(libshard::Manifest m, manifest::ReadManifest(src));
  LIBSHARD_ASSIGN_OR_RETURN(std::vector<const libshard::ShardEntry*> shards, SelectShards(src, m));
  const std::filesystem::path dir = std::filesystem::path(src).parent_path();
  for (const libshard::ShardEntry* sh : shards) {
    LIBSHARD_RETURN_IF_ERROR(AddShard((dir / sh->file()).string(), static_cast<int64_t>(sh->records())));
  }
  AddManifestMetadata(m);
  return Status::OK();
}

void Dataset::AddManifestMetadata(const libshard::Manifest& m) {
  if (labels_.empty()) {
    for (const auto& l : m.labels()) labels_.push_back({l.label(), l.name()});
  }
  std::set<std::string> keys;  // required ones: every record has them
  for (const auto& f : m.schema()) {
    if (f.required()) keys.insert(f.key());
  }
  if (m.schema_size() == 0) {
    schema_known_ = false;  // an older manifest without a schema
  } else if (!schema_seen_) {
    schema_ = std::move(keys);
    schema_seen_ = true;
  } else {
    std::set<std::string> both;
    std::set_intersection(schema_.begin(), schema_.end(), keys.begin(), keys.end(),
                          std::inserter(both, both.begin()));
    schema_ = std::move(both);
  }
}

StatusOr<std::unique_ptr<Dataset>> Dataset::Open(const std::vector<std::string>& sources,
                                                 const DatasetOptions& options) {
  std::unique_ptr<Dataset> ds(new Dataset());
  ds->options_ = options;
  if (sources.empty()) return InvalidArgumentError("no shards given");
  if (options.max_open_files < 1) return InvalidArgumentError("max_open_files must be at least 1");
  if (options.shard.io == IoMode::kPread && options.shard.open_files == nullptr) {
    ds->options_.shard.open_files = std::make_shared<io::OpenFileCache>(options.max_open_files);
  }
  std::vector<std::string> plain;
  auto flush_plain = [&]() -> Status {
    if (plain.empty()) return Status::OK();
    LIBSHARD_ASSIGN_OR_RETURN(std::vector<std::string> files, io::ExpandPaths(plain));
    plain.clear();
    for (const auto& f : files) LIBSHARD_RETURN_IF_ERROR(ds->AddShard(f, -1));
    return Status::OK();
  };
  bool any_manifest = false;
  for (const std::string& src : sources) {
    std::string manifest;
    std::error_code ec;
    if (store::IsObjectUrl(src)) {  // s3://, https://: remote_dataset.cc
      any_manifest = true;
      LIBSHARD_RETURN_IF_ERROR(flush_plain());
      LIBSHARD_RETURN_IF_ERROR(ds->AddRemote(src));
      continue;
    }
    if (EndsWith(src, ".json")) {
      manifest = src;
    } else if (std::filesystem::is_directory(src, ec) &&
               std::filesystem::is_regular_file(std::filesystem::path(src) / "manifest.json", ec)) {
      manifest = (std::filesystem::path(src) / "manifest.json").string();  // the converter's output folder
    }
    if (manifest.empty()) {
      plain.push_back(src);
      ds->schema_known_ = false;
      continue;
    }
    any_manifest = true;
    LIBSHARD_RETURN_IF_ERROR(flush_plain());
    LIBSHARD_RETURN_IF_ERROR(ds->AddManifest(manifest));
  }
  if (!options.split.empty() && !any_manifest) {
    return InvalidArgumentError("split \"" + options.split +
                                "\" needs a manifest.json (or a folder holding one); the sources are plain shards");
  }
  LIBSHARD_RETURN_IF_ERROR(flush_plain());
  if (ds->starts_.empty()) ds->starts_.push_back(0);
  if (!any_manifest) ds->schema_known_ = false;
  return ds;
}

std::optional<bool> Dataset::HasFeature(const std::string& key) const {
  if (!schema_known_) return std::nullopt;
  return schema_.count(key) > 0;
}

Dataset::Location Dataset::Locate(uint64_t sample) const {
  // starts_ is sorted; find the last start <= sample among non-empty shards.
  auto it = std::upper_bound(starts_.begin(), starts_.end(), sample);
  size_t shard = static_cast<size_t>(it - starts_.begin()) - 1;
  return {shard, static_cast<size_t>(sample - starts_[shard])};
}

Status Dataset::ReadRecord(uint64_t sample, RecordBuffer* buf, std::string_view* out) const {
  if (sample >= size()) {
    return OutOfRangeError("sample " + std::to_string(sample) + " of a dataset of " + std::to_string(size()));
  }
  const Location loc = Locate(sample);
  return shards_[loc.shard]->ReadCopy(loc.record, buf, out);
}

}  // namespace libshard::reader

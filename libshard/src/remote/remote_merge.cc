// remote::MergeTarget: a local folder merged where it is, an s3:// prefix
// merged in place (remote/remote_merge.h).
#include "libshard/remote/remote_merge.h"

#include <filesystem>
#include <optional>
#include <system_error>

#include "libshard/io/open_file.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/remote/staging.h"
#include "libshard/remote/uploader.h"
#include "libshard/store/object_store.h"
#include "libshard/util/strings.h"

namespace libshard::remote {

namespace {

// rejects.tsv, duplicates.tsv, label_map.pbtxt, then manifest.json (the
// commit point), from the staged folder to the prefix, each with its
// CRC-32C as metadata (as convert uploads them).
Status UploadMerged(const StagedObjects& staged) {
  for (const char* name : {"rejects.tsv", "duplicates.tsv", "label_map.pbtxt", manifest::kManifestName}) {
    const std::string path = staged.local() + "/" + name;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) continue;
    LIBSHARD_ASSIGN_OR_RETURN(uint32_t crc, io::Crc32cOfFile(path));
    store::PutOptions o;
    o.metadata[kCrcMetadataKey] = CrcMetadata(crc);
    LIBSHARD_RETURN_IF_ERROR(staged.store().PutFile(staged.KeyOf(name), path, o));
  }
  return Status::OK();
}

// The shards checked where they are: the object's size and the CRC-32C
// recorded when it was uploaded (x-amz-meta-crc32c), by HEAD; an object
// without that metadata (put by another tool) is streamed once through a
// CRC check, never stored.
convert::MergeOptions InPlace(const StagedObjects& staged) {
  convert::MergeOptions o;
  o.shard_checksum = [&staged](const ShardEntry& e) -> StatusOr<std::string> {
    const std::string key = staged.KeyOf(e.file());
    auto listed = staged.listed().find(key);
    if (listed == staged.listed().end()) return NotFoundError(staged.store().UrlOf(key) + ": missing");
    if (listed->second != e.bytes()) return std::to_string(listed->second) + " bytes";
    LIBSHARD_ASSIGN_OR_RETURN(store::ObjectInfo info, staged.store().Head(key));
    if (info.size != e.bytes()) return std::to_string(info.size) + " bytes";
    if (std::optional<std::string> crc = MetadataChecksum(info)) return *crc;
    LIBSHARD_ASSIGN_OR_RETURN(uint32_t want, manifest::ParseChecksum(e.checksum()));
    Status s = staged.store().GetVerified(key, {e.bytes(), want}, [](std::string_view) { return Status::OK(); });
    if (s.code() == StatusCode::kDataLoss) return std::string("its bytes differ");
    LIBSHARD_RETURN_IF_ERROR(s);
    return e.checksum();
  };
  o.companion_exists = [&staged](const std::string& companion) {
    return staged.listed().count(staged.KeyOf(companion)) > 0;
  };
  return o;
}

}  // namespace

MergeTarget::~MergeTarget() = default;

StatusOr<std::unique_ptr<MergeTarget>> MergeTarget::Open(const std::string& location) {
  std::unique_ptr<MergeTarget> t(new MergeTarget());
  t->location_ = location;
  t->local_ = location;
  if (util::StartsWith(location, "s3://")) {
    LIBSHARD_ASSIGN_OR_RETURN(t->staged_, StagedObjects::StageTaskManifests(location));
    t->local_ = t->staged_->local();
    return t;
  }
  if (location.find("://") != std::string::npos) {
    return InvalidArgumentError(location + ": only local folders and s3:// prefixes can be merged");
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(location, ec)) return NotFoundError(location + ": no such folder");
  return t;
}

StatusOr<convert::MergeResult> MergeTarget::Merge() {
  if (!staged_) return convert::MergeTasks(local_);
  StatusOr<convert::MergeResult> r = convert::MergeTasks(local_, InPlace(*staged_));
  if (!r.ok()) return Status(r.status().code(), staged_->ToUrl(r.status().message()));
  if (!r->problems.empty()) {
    for (std::string& p : r->problems) p = staged_->ToUrl(p);
    return r;
  }
  Status up = UploadMerged(*staged_);
  if (!up.ok()) return IOError("uploading to " + location_ + ": " + up.message());
  r->manifest_path = staged_->ToUrl(r->manifest_path);
  return r;
}

}  // namespace libshard::remote

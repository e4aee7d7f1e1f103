// What `shard verify` and `shard inspect` do with s3:// and https:// paths:
// the objects are downloaded once into a temporary local folder (removed
// when the StagedObjects goes away), each shard the manifest lists checked
// against its size and CRC-32C as it streams in, and the local checks then
// run on that folder; ToUrl() turns the folder's paths back into URLs for
// the report.
#ifndef LIBSHARD_TOOLS_REMOTE_STAGING_H_
#define LIBSHARD_TOOLS_REMOTE_STAGING_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "libshard/status.h"
#include "libshard/store/object_store.h"

namespace shard_tool {

class StagedObjects {
 public:
  ~StagedObjects();
  // The local folder (for a prefix) or file (for one object).
  const std::string& local() const { return local_; }
  // `text` with the staging folder replaced by the URL prefix.
  std::string ToUrl(const std::string& text) const;
  // Objects whose download failed its size/CRC check (the bytes are kept
  // for the local checks to describe).
  const std::vector<std::string>& damaged() const { return damaged_; }

  // s3://BUCKET/PREFIX (or .../manifest.json): every object under PREFIX/
  // (listed with LIST), manifest.json included. https:// has no LIST: the
  // manifest and the objects it names.
  // s3://BUCKET/KEY.tfrecord (or https://): that object and KEY.tfrecord.idx
  // when there is one.
  static libshard::StatusOr<std::unique_ptr<StagedObjects>> Stage(const std::string& url);

  // For `shard merge s3://BUCKET/PREFIX`: only the task manifests
  // (PREFIX/.libshard/manifest.task-*.json, small objects) into the local
  // folder; the shards stay where they are. listed() is what one LIST of the
  // prefix found and store() the store, for checking the shards in place.
  static libshard::StatusOr<std::unique_ptr<StagedObjects>> StageTaskManifests(const std::string& url);
  libshard::store::ObjectStore& store() const { return *store_; }
  // Object key -> size, as LIST reported them (StageTaskManifests).
  const std::map<std::string, uint64_t>& listed() const { return listed_; }
  // The object key of `rel` (a name relative to the prefix).
  std::string KeyOf(const std::string& rel) const { return key_prefix_ + rel; }

 private:
  std::string root_;   // the temporary folder
  std::string local_;  // root_ or a file in it
  std::string url_prefix_;
  std::vector<std::string> damaged_;
  std::unique_ptr<libshard::store::ObjectStore> store_;
  std::map<std::string, uint64_t> listed_;
  std::string key_prefix_;  // "PREFIX/"
};

}  // namespace shard_tool

#endif  // LIBSHARD_TOOLS_REMOTE_STAGING_H_

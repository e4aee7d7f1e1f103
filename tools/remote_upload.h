// `shard convert -o s3://BUCKET/PREFIX`: the conversion runs into a local
// staging folder and ShardUploader sends its output up while it runs.
//
//   * Each shard, as soon as its entry (.libshard/NAME.json) says it is
//     finished, goes up with its .idx and the entry (multipart above 64 MiB,
//     parts in parallel, aborted on failure); every object carries its
//     CRC-32C as metadata (x-amz-meta-crc32c). The shard and its .idx are
//     then deleted from the staging folder, which so holds only the shards
//     being written or uploaded.
//   * Finish(): what is left, then rejects.tsv and the task manifests, and
//     manifest.json last: the commit point (readers plan from it).
//   * Resume: an object already there with the same size and CRC-32C
//     metadata is not sent again (a rerun converts the shards no longer
//     staged again; the conversion is deterministic, so they match).
#ifndef LIBSHARD_TOOLS_REMOTE_UPLOAD_H_
#define LIBSHARD_TOOLS_REMOTE_UPLOAD_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "libshard/status.h"
#include "libshard/store/object_store.h"

namespace shard_tool {

class ShardUploader {
 public:
  // Uploads `staging` to `url` (s3://BUCKET/PREFIX), starting now.
  static libshard::StatusOr<std::unique_ptr<ShardUploader>> Start(const std::string& url, const std::string& staging);
  ~ShardUploader();
  // Stops watching, uploads everything not yet up, manifest.json last (when
  // `commit`: the conversion succeeded). The first upload error, if any.
  libshard::Status Finish(bool commit);
  uint64_t uploaded() const { return uploaded_; }
  uint64_t skipped() const { return skipped_; }

 private:
  void Watch();
  // Uploads every finished shard not yet handled (and its index and entry).
  libshard::Status Sweep();
  libshard::Status Upload(const std::string& rel);

  std::unique_ptr<libshard::store::ObjectStore> store_;
  std::string prefix_, staging_;
  std::set<std::string> done_;
  std::mutex mu_;
  libshard::Status error_;
  std::atomic<bool> stop_{false};
  std::thread watcher_;
  std::atomic<uint64_t> uploaded_{0}, skipped_{0};
};

}  // namespace shard_tool

#endif  // LIBSHARD_TOOLS_REMOTE_UPLOAD_H_

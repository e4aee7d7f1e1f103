// `shard convert -o s3://BUCKET/PREFIX`: the conversion runs into a local
// staging folder and ShardUploader sends its output up while it runs.
//
//   * Each shard, as soon as its entry (.libshard/NAME.json) says it is
//     finished, goes up with its .idx and then the entry (multipart above
//     64 MiB, parts in parallel, aborted on failure); every object carries
//     its CRC-32C as metadata (x-amz-meta-crc32c: 8 hex digits; a staged
//     shard whose bytes no longer have its entry's is a DataLoss, never
//     uploaded). The shard
//     and its .idx are then deleted from the staging folder, which so holds
//     only the shards being written or uploaded.
//   * Finish(): what is left, then rejects.tsv and the task manifests, and
//     manifest.json last: the commit point (readers plan from it).
//   * Resume (ShardUpHere, given to ConvertOptions::shard_elsewhere): a
//     shard no longer staged is kept, not converted again, when its object
//     has its entry's size and CRC-32C metadata and its .idx object is there;
//     the entry is the staged one, else the uploaded .libshard/NAME.json (a
//     rerun on a machine without the staging folder). Other objects already
//     there with the same size and CRC-32C metadata are not sent again.
//   * Start() LISTs the prefix once: an object not listed is put without a
//     HEAD first.
#ifndef LIBSHARD_TOOLS_REMOTE_UPLOAD_H_
#define LIBSHARD_TOOLS_REMOTE_UPLOAD_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "libshard/manifest.pb.h"
#include "libshard/status.h"
#include "libshard/store/object_store.h"

namespace shard_tool {

// The value of an object's x-amz-meta-crc32c: the CRC-32C as 8 lower-case
// hex digits (what resume and `shard merge s3://` compare).
std::string CrcMetadata(uint32_t crc);

class ShardUploader {
 public:
  // Uploads `staging` to `url` (s3://BUCKET/PREFIX). Lists what is already
  // under the prefix; uploads nothing until Watch() or Finish().
  static libshard::StatusOr<std::unique_ptr<ShardUploader>> Start(const std::string& url, const std::string& staging);
  ~ShardUploader();
  // Starts sending finished shards up as they appear (call it once the
  // conversion has decided what to keep: from its first progress call).
  // Idempotent.
  void Watch();
  // For ConvertOptions::shard_elsewhere: the entry of shard `file` when the
  // shard and its index are up with that entry's size and CRC-32C (the
  // entry is then sent up too if it is not); nullopt, with *why when an
  // object is there but does not match, otherwise. Thread-safe.
  std::optional<libshard::ShardEntry> ShardUpHere(const std::string& file, std::string* why);
  // Stops watching, uploads everything not yet up, manifest.json last (when
  // `commit`: the conversion succeeded). The first upload error, if any.
  libshard::Status Finish(bool commit);
  uint64_t uploaded() const { return uploaded_; }
  uint64_t skipped() const { return skipped_; }

 private:
  void WatchLoop();
  // Uploads every finished shard not yet handled (and its index and entry).
  libshard::Status Sweep();
  // `rel` from the staging folder, unless the same bytes are up (`crc`: its
  // CRC-32C when known, else read from the file).
  libshard::Status Upload(const std::string& rel, std::optional<uint32_t> crc = std::nullopt);

  std::unique_ptr<libshard::store::ObjectStore> store_;
  std::string prefix_, staging_;
  std::map<std::string, uint64_t> listed_;  // key -> size, as Start() found them
  // Entries handled: NAME.json -> the file's inode and mtime (a redone
  // shard's entry is a new file).
  std::map<std::string, std::pair<uint64_t, int64_t>> done_;
  std::mutex mu_;  // done_, error_
  libshard::Status error_;
  std::atomic<bool> stop_{false};
  std::once_flag watching_;
  std::thread watcher_;
  std::atomic<uint64_t> uploaded_{0}, skipped_{0};
};

}  // namespace shard_tool

#endif  // LIBSHARD_TOOLS_REMOTE_UPLOAD_H_

// `shard convert -o s3://BUCKET/PREFIX` (remote/remote_convert.h): the
// conversion runs into a local staging folder and ShardUploader sends its
// output up while it runs.
//
//   * The converter hands each finished shard over (ShardWritten, given to
//     ConvertOptions::on_shard_written); a thread of the uploader sends it up
//     with its .idx and then its entry (.libshard/NAME.json; multipart above
//     64 MiB, parts in parallel, aborted on failure). Every object carries
//     its CRC-32C as metadata (x-amz-meta-crc32c: 8 hex digits; a staged
//     shard whose bytes no longer have its entry's is a DataLoss, never
//     uploaded). The shard and its .idx are then deleted from the staging
//     folder, which so holds only the shards being written or uploaded.
//   * Finish(): the staged shards not sent yet (kept from an earlier run
//     whose upload stopped), then rejects.tsv, duplicates.tsv and the task manifests, and
//     manifest.json last: the commit point (readers plan from it). Before
//     it, every object this run put or kept is HEADed: its size and
//     x-amz-meta-crc32c must still be the ones this run sent (a bucket has
//     no lock: another run writing into the same prefix is caught here),
//     else FailedPrecondition naming them, and no manifest.json.
//   * Resume (ShardUpHere, given to ConvertOptions::shard_elsewhere): a
//     shard no longer staged is kept, not converted again, when its object
//     has its entry's size and CRC-32C metadata and its .idx object is there;
//     the entry is the staged one, else the uploaded .libshard/NAME.json (a
//     rerun on a machine without the staging folder). Other objects already
//     there with the same size and CRC-32C metadata are not sent again.
//     With `recheck` (`convert --recheck`) the metadata is not trusted: a
//     kept object is read back and checked against its entry's size and
//     CRC-32C (GetVerified), a damaged one redone; a staged shard is sent
//     unless the object's bytes are read back equal.
//   * Start() LISTs the prefix once: an object not listed is put without a
//     HEAD first.
//
// Names: every staged path is made from a checked name
// (io/contained_path.h); an entry object naming a shard outside the prefix
// is not trusted. Thread-safety: ShardWritten and ShardUpHere may be called
// from any thread; Finish once, by the owner.
#ifndef LIBSHARD_REMOTE_UPLOADER_H_
#define LIBSHARD_REMOTE_UPLOADER_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "libshard/manifest.pb.h"
#include "libshard/status.h"
#include "libshard/store/object_store.h"

namespace libshard::remote {

// The value of an object's x-amz-meta-crc32c: the CRC-32C as 8 lower-case
// hex digits (what resume and `shard merge s3://` compare).
std::string CrcMetadata(uint32_t crc);
// The metadata key it is stored under ("crc32c": x-amz-meta-crc32c on S3).
inline constexpr const char* kCrcMetadataKey = "crc32c";
// An object's x-amz-meta-crc32c as a manifest checksum ("crc32c:xxxxxxxx",
// manifest/manifest_json.h, lower case), to compare with a ShardEntry's
// checksum; nullopt when the object has none, or one that is not 8 hex
// digits (then the object is as one without: read back to be checked).
std::optional<std::string> MetadataChecksum(const store::ObjectInfo& info);

class ShardUploader {
 public:
  // Uploads `staging` to `url` (s3://BUCKET/PREFIX). Lists what is already
  // under the prefix; uploads nothing until ShardWritten() or Finish().
  static StatusOr<std::unique_ptr<ShardUploader>> Start(const std::string& url, const std::string& staging,
                                                        bool recheck = false);
  // Stops the sending thread (what it is sending finishes first).
  ~ShardUploader();
  ShardUploader(const ShardUploader&) = delete;
  ShardUploader& operator=(const ShardUploader&) = delete;

  // For ConvertOptions::on_shard_written: queues the shard for its upload
  // and returns at once; the first upload error so far, if any (which stops
  // the conversion).
  Status ShardWritten(const ShardEntry& entry);
  // For ConvertOptions::shard_elsewhere: the entry of shard `file` when the
  // shard and its index and labels are up with that entry's size and CRC-32C (the
  // entry is then sent up too if it is not); nullopt, with *why when an
  // object is there but does not match, otherwise.
  std::optional<ShardEntry> ShardUpHere(const std::string& file, std::string* why);
  // Waits for the queued shards, uploads everything not yet up, manifest.json
  // last (when `commit`: the conversion succeeded) once the objects are
  // checked to be this run's. The first upload error, if any. May be called
  // again after Finish(false), to commit.
  Status Finish(bool commit);
  uint64_t uploaded() const { return uploaded_; }
  uint64_t skipped() const { return skipped_; }

 private:
  ShardUploader() = default;
  void SendLoop();
  // Sends one staged shard (its index and labels, the shard, its entry),
  // then lets go of the staged shard and its companions. A shard no longer staged is skipped, and
  // when `sweeping` one whose size is not its entry's (an earlier run's).
  Status SendShard(const std::string& entry_name, bool sweeping);
  // Every staged shard not sent yet (Finish).
  Status Sweep();
  // `rel` from the staging folder, unless the same bytes are up (`crc`: its
  // CRC-32C when known, else read from the file).
  Status Upload(const std::string& rel, std::optional<uint32_t> crc = std::nullopt);
  void Fail(const Status& s);
  // What this run put or kept: key -> size and CRC-32C (unknown for an
  // index or labels kept with its shard: its size alone is checked).
  void Sent(const std::string& key, uint64_t size, std::optional<uint32_t> crc);
  // HEADs every object Sent(): FailedPrecondition naming those whose size or
  // CRC-32C metadata is no longer this run's.
  Status CheckStillOurs();

  std::unique_ptr<store::ObjectStore> store_;
  // True when the object `key` has `size` bytes with CRC-32C `crc`, read
  // back (recheck); *why says how it differs. An error reading it: the error.
  StatusOr<bool> ReadBackMatches(const std::string& key, uint64_t size, uint32_t crc, std::string* why);

  std::string prefix_, staging_;
  bool recheck_ = false;
  std::map<std::string, uint64_t> listed_;  // key -> size, as Start() found them
  std::mutex mu_;                           // queue_, stop_, error_
  std::condition_variable wake_;
  std::deque<std::string> queue_;  // entry names (NAME.json) to send
  bool stop_ = false;
  Status error_;
  std::thread sender_;
  std::atomic<uint64_t> uploaded_{0}, skipped_{0};
  std::mutex sent_mu_;
  std::map<std::string, std::pair<uint64_t, std::optional<uint32_t>>> sent_;
};

}  // namespace libshard::remote

#endif  // LIBSHARD_REMOTE_UPLOADER_H_

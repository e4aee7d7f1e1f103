// ObjectStore: where shards live when they are not local files -- an S3
// bucket (s3://BUCKET/KEY), an https server (https://HOST/PATH, read-only) --
// and, behind the same interface, a local folder. The reader's cache
// (shard_cache.h) and the remote module (staging a remote set for verify,
// report, inspect and merge; uploading a conversion) go through it, so
// another store can be added later without touching them. The stores
// themselves: s3_store.h, web_server_store.h, local_store.h; their
// configuration: store_config.h.
//
//   LIBSHARD_ASSIGN_OR_RETURN(store::Location loc, store::ParseLocation("s3://b/ds/manifest.json"));
//   LIBSHARD_ASSIGN_OR_RETURN(auto s, store::OpenStore(loc));
//   LIBSHARD_ASSIGN_OR_RETURN(std::string manifest, s->GetSmall(loc.key, 64 << 20));
//   LIBSHARD_RETURN_IF_ERROR(s->GetVerified("ds/a.tfrecord", {size, crc}, sink));
//
// Errors name the operation, the object's URL as the user wrote it, the HTTP
// URL (which names the endpoint), the HTTP status and the S3 error code:
//   GET s3://b/ds/a.tfrecord (http://127.0.0.1:9000/b/ds/a.tfrecord): HTTP 403 SignatureDoesNotMatch: ...
// Credentials never appear in messages. Codes: NotFound (404, a missing
// file), PermissionDenied (401/403: credentials or permissions),
// InvalidArgument (other 4xx, a bad URL), DataLoss (an object whose bytes do
// not match the size or CRC-32C expected of it), ResourceExhausted (a body
// larger than its bound), Unimplemented (writing to https://), IOError
// (connection errors, timeouts, stalls, 5xx after the retries).
//
// Thread-safety: every method may be called from several threads at once.
#ifndef LIBSHARD_STORE_OBJECT_STORE_H_
#define LIBSHARD_STORE_OBJECT_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/status.h"

namespace libshard::store {

struct StoreConfig;  // store_config.h

// A parsed object URL or local path.
struct Location {
  enum class Scheme { kLocal, kS3, kHttps };
  Scheme scheme = Scheme::kLocal;
  // What the keys are relative to. kS3: the bucket. kHttps: the server's
  // base URL, "https://host[:port]" (or http://). kLocal: "".
  std::string root;
  // kS3: the object key or prefix, no leading '/'. kHttps: the path, no
  // leading '/'. kLocal: the path as given.
  std::string key;
  // The text parsed, for messages.
  std::string url;
};

// True for "s3://...", "https://..." and "http://..." (the schemes
// ParseLocation accepts); false for local paths.
bool IsObjectUrl(std::string_view path);

// "s3://BUCKET[/KEY]", "https://HOST[:PORT][/PATH]", "http://..." or a local
// path (anything without "scheme://"). InvalidArgument for another scheme
// ("gs://"), an empty bucket or host, or a bucket name S3 would refuse.
StatusOr<Location> ParseLocation(const std::string& url);

// `prefix` + "/" + `name`, without doubling or leading slashes ("" + "x" = "x").
std::string JoinKey(std::string_view prefix, std::string_view name);

// One object, as LIST or HEAD report it.
struct ObjectInfo {
  std::string key;
  uint64_t size = 0;
  std::string etag;  // as the server sent it, quotes removed ("" when unknown)
  // User metadata (S3: x-amz-meta-NAME headers, names lower-cased); HEAD only.
  std::map<std::string, std::string> metadata;
};

// What an object's bytes must be: the manifest's size and CRC-32C.
struct Expected {
  uint64_t size = 0;
  uint32_t crc32c = 0;
};

// Receives an object's bytes in order. A non-OK return stops the transfer
// and is returned by the call that fed it.
using ByteSink = std::function<Status(std::string_view bytes)>;

// Receives bytes [offset, offset + bytes.size()) of an object. Called from
// several threads at once, for disjoint ranges, in no particular order.
using PositionalSink = std::function<Status(uint64_t offset, std::string_view bytes)>;

struct PartOptions {
  // Objects larger than this come as ranged GETs of this many bytes (the
  // last one shorter); 0: whole. Default: 16 MiB.
  uint64_t part_size = 16ull << 20;
  // Parts in flight at once (1: one GET of the whole object). Default: 4.
  int parallel = 4;
};

struct PutOptions {
  // Files at least this large go up as a multipart upload. Default: 64 MiB.
  uint64_t multipart_threshold = 64ull << 20;
  // The size of each part but the last (S3: 5 MiB..5 GiB). Default: 16 MiB.
  uint64_t part_size = 16ull << 20;
  // Parts in flight at once. Default: 4.
  int parallel_parts = 4;
  // User metadata stored with the object (S3: x-amz-meta-NAME; names
  // lower-case [a-z0-9-], values ASCII). Local folders ignore it. Default: none.
  std::map<std::string, std::string> metadata;
};

class ObjectStore {
 public:
  ObjectStore() = default;
  ObjectStore(const ObjectStore&) = delete;
  ObjectStore& operator=(const ObjectStore&) = delete;
  virtual ~ObjectStore() = default;

  // The URL of `key` as users write it ("s3://b/k", "https://h/k", "/dir/k").
  virtual std::string UrlOf(const std::string& key) const = 0;

  // A relative folder name that tells this store apart from others in a
  // cache: "s3/127.0.0.1_9000/BUCKET", "s3/aws/BUCKET", "https/HOST_PORT",
  // "local". Only [A-Za-z0-9._-] and '/'.
  virtual std::string CacheName() const = 0;

  // The object's size (and ETag). NotFound when there is none.
  virtual StatusOr<ObjectInfo> Head(const std::string& key) = 0;

  // Bytes [offset, offset + length) of the object. A range that runs past
  // the end is cut at the end (OutOfRange when `offset` is at or past it).
  virtual StatusOr<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) = 0;

  // The whole object, at most `max_bytes` (ResourceExhausted beyond: a
  // manifest, an index -- never an unbounded body in memory).
  virtual StatusOr<std::string> GetSmall(const std::string& key, uint64_t max_bytes) = 0;

  // Streams the whole object into `sink`, checking as the bytes arrive that
  // it has exactly `expected.size` bytes with CRC-32C `expected.crc32c`:
  // DataLoss naming the URL otherwise (more bytes than expected stop the
  // transfer at once). A transfer cut midway is resumed where it stopped
  // (the sink sees every byte once, in order). The sink has seen bytes of a
  // bad object when this fails: the caller discards what it wrote.
  virtual Status GetVerified(const std::string& key, const Expected& expected, const ByteSink& sink) = 0;
  // As GetVerified(), but an object larger than options.part_size is fetched
  // as ranged GETs of part_size bytes, options.parallel at once, each
  // retried (and resumed where it was cut) on its own. The whole object's
  // size and CRC-32C are checked all the same before OK: each part's
  // CRC-32C is computed as its bytes arrive and the parts' are combined in
  // order (crc32c::Combine); every answer must give the object the expected
  // size (Content-Range) and the same ETag. DataLoss naming the URL
  // otherwise. The sink has seen bytes of a bad object when this fails.
  // Stores without ranged parts (and small objects): GetVerified().
  virtual Status GetVerifiedParts(const std::string& key, const Expected& expected, const PartOptions& options,
                                  const PositionalSink& sink);

  // Writes `bytes` as the object (replacing it).
  virtual Status Put(const std::string& key, std::string_view bytes) = 0;

  // Uploads the local file `path` as the object: one PUT below
  // `options.multipart_threshold`, else a multipart upload whose parts go up
  // in parallel; a failed multipart upload is aborted (no parts left behind
  // on the server).
  virtual Status PutFile(const std::string& key, const std::string& path, const PutOptions& options = {}) = 0;

  // Every object whose key starts with `prefix`, in key order.
  virtual StatusOr<std::vector<ObjectInfo>> List(const std::string& prefix) = 0;

  // Ends every transfer of this store in flight within about a second (and
  // every wait between retries at once); they and every later call fail
  // with IOError "cancelled" naming the URL. For a reader being closed (a
  // KeyboardInterrupt): a download's sink has seen part of its bytes, which
  // its caller discards. Irreversible. Local folders: nothing to end.
  virtual void Cancel() {}
};

// The store for `location`: an S3 bucket (configured by `config`, normally
// StoreConfig::FromEnvironment(); s3_store.h), a web server (read-only;
// `config.ca_bundle` and `config.retry` apply; web_server_store.h), or the
// local file system (keys are paths; local_store.h). Include store_config.h
// to call it.
StatusOr<std::unique_ptr<ObjectStore>> OpenStore(const Location& location, const StoreConfig& config);
// The same with the configuration from the environment (StoreConfig::FromEnvironment).
StatusOr<std::unique_ptr<ObjectStore>> OpenStore(const Location& location);

}  // namespace libshard::store

#endif  // LIBSHARD_STORE_OBJECT_STORE_H_

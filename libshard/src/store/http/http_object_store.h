// HttpObjectStore: what the S3 and web-server stores share -- the reads
// (HEAD, ranged GET, a small whole GET, the one verified download), the
// request loop with its retries, errors worded once. A subclass says where
// a key's request goes and how it is signed (Prepare, HttpUrl), and how its
// server words errors (ErrorCode, ErrorDetail, FailedDespite2xx); the S3
// store adds the writes and LIST.
//
// Thread-safety: every method may be called from several threads at once.
#ifndef LIBSHARD_SRC_STORE_HTTP_HTTP_OBJECT_STORE_H_
#define LIBSHARD_SRC_STORE_HTTP_HTTP_OBJECT_STORE_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "libshard/store/http_transport.h"
#include "libshard/store/object_store.h"
#include "libshard/store/store_config.h"
#include "store/http/retry_wait.h"

namespace libshard::store {

class HttpObjectStore : public ObjectStore {
 public:
  HttpObjectStore(const RetryOptions& retry, std::shared_ptr<HttpTransport> transport);

  StatusOr<ObjectInfo> Head(const std::string& key) override;
  StatusOr<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override;
  StatusOr<std::string> GetSmall(const std::string& key, uint64_t max_bytes) override;
  Status GetVerified(const std::string& key, const Expected& expected, const ByteSink& sink) override;
  Status GetVerifiedParts(const std::string& key, const Expected& expected, const PartOptions& options,
                          const PositionalSink& sink) override;
  void Cancel() override { waiter_.Cancel(); }

 protected:
  using QueryParams = std::map<std::string, std::string>;
  using Build = std::function<void(HttpRequest*)>;

  // Fills the URL, the payload hash (`payload_sha256`: the hex SHA-256 of
  // the body, "" for a request without one) and the signing of a request.
  virtual void Prepare(HttpRequest* q, const std::string& key, const QueryParams& query,
                       const std::string& payload_sha256) const = 0;
  // The endpoint-level URL of `key` (what the request goes to), for messages.
  virtual std::string HttpUrl(const std::string& key, const QueryParams& query) const = 0;
  // The error code of a failed answer (the retry decision reads it).
  // Default: the reason phrase of its status (ReasonPhrase()).
  virtual std::string ErrorCode(const HttpResponse& r) const;
  // The server's own words about a failed answer, for the message. Default: "".
  virtual std::string ErrorDetail(const HttpResponse& r) const;
  // A 2xx answer that is a failure all the same. Default: false.
  virtual bool FailedDespite2xx(const std::string& method, const HttpResponse& r) const;

  // One try: no retries, `r` filled. Non-OK only for the body sink's error.
  Status CallOnce(const std::string& method, const std::string& key, const QueryParams& query,
                  const std::vector<std::string>& headers, const Build& build, HttpResponse* r,
                  const std::string& payload_sha256 = "");
  // The request with retries (DecideRetry, then the wait). OK when the final
  // answer is 2xx. `op`: how messages name the request ("" = METHOD URL).
  Status Call(const std::string& method, const std::string& key, const QueryParams& query,
              const std::vector<std::string>& headers, const Build& build, HttpResponse* r,
              const std::string& payload_sha256 = "", const std::string& op = "");

  const RetryOptions retry_;
  std::shared_ptr<HttpTransport> transport_;

 private:
  // The one verified download: the object in `parts` ranged parts of
  // `part_size` bytes (1 part: the whole object, asked for without a
  // Range), up to `parallel` at once, each a GetResumable(); the parts'
  // CRC-32Cs combined in order and checked against `expected`.
  Status DownloadVerified(const std::string& key, const Expected& expected, uint64_t part_size, int parallel,
                          const PositionalSink& sink);
  // The one resumable download: bytes [begin, end) of an object of `size`
  // bytes into `sink` (http_resumable_get.cc).
  Status GetResumable(const std::string& key, uint64_t size, uint64_t begin, uint64_t end, bool whole,
                      const PositionalSink& sink, uint32_t* crc, std::string* etag);
  // After try `attempt` failed as `r`: an error when DecideRetry() says no,
  // else OK after the wait.
  Status RetryOrFail(const std::string& method, const std::string& key, const HttpResponse& r, int attempt);
  // The wait before the try after `attempt`, whatever the answer was (a
  // ranged answer that came short).
  void WaitBeforeRetry(int attempt);

  RetryWaiter waiter_;
};

}  // namespace libshard::store

#endif  // LIBSHARD_SRC_STORE_HTTP_HTTP_OBJECT_STORE_H_

// HttpTransport: one HTTP exchange, nothing more. The S3 and https stores
// build requests (URL, headers, SigV4 parameters) and read responses through
// it; the library's transport is libcurl (NewCurlTransport), and tests put a
// fake one in its place to see what is sent (payload hashes, the abort of a
// failed multipart upload) and to script what comes back.
//
// Signing is libcurl's (CURLOPT_AWS_SIGV4); no request is signed by hand.
//
// Thread-safety: Perform() may be called from several threads at once.
#ifndef LIBSHARD_STORE_HTTP_TRANSPORT_H_
#define LIBSHARD_STORE_HTTP_TRANSPORT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/status.h"
#include "libshard/store/store_config.h"

namespace libshard::store {

struct HttpRequest {
  std::string method;                // GET, HEAD, PUT, POST, DELETE
  std::string url;                   // with the query already sorted and encoded
  std::vector<std::string> headers;  // "Name: value"
  // The request body: `body`, or when body_fd >= 0, body_length bytes of
  // that descriptor from body_offset (read with pread: parts of one file may
  // go up in parallel).
  std::string_view body;
  int body_fd = -1;
  uint64_t body_offset = 0;
  uint64_t body_length = 0;
  // SigV4: "aws:amz:REGION:s3" and "KEY:SECRET" (never logged); empty = unsigned.
  std::string aws_sigv4;
  std::string credentials;
  // Receives the body of a 2xx response as it arrives; a non-OK return stops
  // the transfer and Perform() returns it. Unset: the body is kept in
  // HttpResponse::body, up to max_body bytes (ResourceExhausted beyond).
  std::function<Status(std::string_view)> on_body;
  uint64_t max_body = 16ull << 20;
  // When set and true (now or later), the exchange ends within about a
  // second: transport_error "cancelled", permanent. Must outlive Perform().
  const std::atomic<bool>* cancel = nullptr;
};

struct HttpResponse {
  long status = 0;  // 0 when no response came
  // Header names lower-cased; the last value of a repeated header.
  std::map<std::string, std::string> headers;
  // A 2xx body when the request had no on_body; a non-2xx body (an S3 error
  // document), cut at 64 KiB.
  std::string body;
  // Set when the exchange failed below HTTP (refused connection, timeout,
  // stall, a body cut short, a dropped connection): libcurl's words. Such a
  // failure may be retried.
  std::string transport_error;
  // With transport_error: the failure cannot be cured by retrying (a TLS
  // certificate that does not verify, a malformed URL).
  bool permanent = false;
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // One exchange. Returns OK with `response` filled (status, or
  // transport_error), or the non-OK status of `request.on_body` or of the
  // body bound.
  virtual Status Perform(const HttpRequest& request, HttpResponse* response) = 0;
};

// libcurl (connections reused across calls; one easy handle per call in
// flight). `ca_bundle` (may be empty), the timeouts and the deadline of
// `retry` apply (a try past its deadline: transport_error naming it,
// permanent). Redirects are not followed.
std::shared_ptr<HttpTransport> NewCurlTransport(const StoreConfig& config);

}  // namespace libshard::store

#endif  // LIBSHARD_STORE_HTTP_TRANSPORT_H_

// HttpObjectStore: the reads, the verified download and the request loop
// common to the S3 and web-server stores.
#include "store/http/http_object_store.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>

#include "libshard/crc32c.h"
#include "libshard/util/strings.h"
#include "store/http/http_text.h"
#include "store/http/retry_policy.h"

namespace libshard::store {
namespace {

// DataLoss naming `url` when `crc` is not the manifest's `expected`.
Status CheckCrc(const std::string& url, uint32_t crc, uint32_t expected) {
  if (crc == expected) return Status::OK();
  char buf[80];
  std::snprintf(buf, sizeof(buf), "crc32c:%08x, the manifest crc32c:%08x", crc, expected);
  return DataLossError("GET " + url + ": checksum mismatch: the object has " + buf);
}

}  // namespace

HttpObjectStore::HttpObjectStore(const RetryOptions& retry, std::shared_ptr<HttpTransport> transport)
    : retry_(retry), transport_(std::move(transport)) {}

StatusOr<ObjectInfo> HttpObjectStore::Head(const std::string& key) {
  HttpResponse r;
  LIBSHARD_RETURN_IF_ERROR(Call("HEAD", key, {}, {}, nullptr, &r));
  ObjectInfo info;
  info.key = key;
  auto it = r.headers.find("content-length");
  if (it == r.headers.end()) return IOError("HEAD " + UrlOf(key) + ": the response has no Content-Length");
  info.size = std::strtoull(it->second.c_str(), nullptr, 10);
  if (r.headers.count("etag")) info.etag = Unquote(r.headers["etag"]);
  for (const auto& [name, value] : r.headers) {
    if (util::StartsWith(name, "x-amz-meta-")) info.metadata[name.substr(11)] = value;
  }
  return info;
}

StatusOr<std::string> HttpObjectStore::GetRange(const std::string& key, uint64_t offset, uint64_t length) {
  if (length == 0) return std::string();
  HttpResponse r;
  const std::string range = "Range: bytes=" + std::to_string(offset) + "-" + std::to_string(offset + length - 1);
  Status s = Call(
      "GET", key, {}, {range}, [&](HttpRequest* q) { q->max_body = length + (1 << 20); }, &r);
  if (s.code() == StatusCode::kOutOfRange) {
    return OutOfRangeError(s.message() + " (offset " + std::to_string(offset) + " is past the end)");
  }
  LIBSHARD_RETURN_IF_ERROR(s);
  if (r.status == 200) {  // the whole object: the server ignored the range
    if (offset >= r.body.size())
      return OutOfRangeError("GET " + UrlOf(key) + ": offset " + std::to_string(offset) + " is past the end (" +
                             std::to_string(r.body.size()) + " bytes)");
    return r.body.substr(offset, length);
  }
  if (r.body.size() > length) return DataLossError("GET " + UrlOf(key) + ": the server sent more than the range");
  return std::move(r.body);
}

StatusOr<std::string> HttpObjectStore::GetSmall(const std::string& key, uint64_t max_bytes) {
  HttpResponse r;
  Status s = Call(
      "GET", key, {}, {}, [&](HttpRequest* q) { q->max_body = max_bytes; }, &r);
  LIBSHARD_RETURN_IF_ERROR(s);
  return std::move(r.body);
}

Status HttpObjectStore::GetVerified(const std::string& key, const Expected& expected, const ByteSink& sink) {
  return DownloadVerified(key, expected, /*part_size=*/0, /*parallel=*/1,
                          [&](uint64_t, std::string_view b) { return sink(b); });
}

Status HttpObjectStore::GetVerifiedParts(const std::string& key, const Expected& expected, const PartOptions& options,
                                         const PositionalSink& sink) {
  if (options.part_size == 0 || options.parallel <= 1 || expected.size <= options.part_size) {
    return ObjectStore::GetVerifiedParts(key, expected, options, sink);
  }
  return DownloadVerified(key, expected, options.part_size, options.parallel, sink);
}

// Parts: each a GetResumable() on a thread of its own (up to `parallel`),
// the parts' CRCs combined in order at the end. Why combine rather than CRC
// the file in order as parts complete: the parts' bytes are checked as they
// arrive, on the thread that receives them, and never read back.
Status HttpObjectStore::DownloadVerified(const std::string& key, const Expected& expected, uint64_t part_size,
                                         int parallel, const PositionalSink& sink) {
  const std::string url = UrlOf(key);
  const bool whole = part_size == 0;
  if (whole) part_size = std::max<uint64_t>(expected.size, 1);
  const uint64_t n = std::max<uint64_t>(1, (expected.size + part_size - 1) / part_size);
  std::vector<uint32_t> crcs(n, 0);
  std::vector<Status> errors(n);
  std::vector<std::string> etags(n);
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    for (uint64_t i; !failed.load() && (i = next.fetch_add(1)) < n;) {
      const uint64_t begin = i * part_size;
      const uint64_t end = whole ? expected.size : std::min(expected.size, begin + part_size);
      errors[i] = GetResumable(key, expected.size, begin, end, whole, sink, &crcs[i], &etags[i]);
      if (!errors[i].ok()) failed = true;
    }
  };
  std::vector<std::thread> threads;
  for (uint64_t t = 1; t < std::min<uint64_t>(n, static_cast<uint64_t>(std::max(parallel, 1))); ++t) {
    threads.emplace_back(work);
  }
  work();
  for (std::thread& t : threads) t.join();
  for (const Status& e : errors) LIBSHARD_RETURN_IF_ERROR(e);  // the first part's error first
  uint32_t crc = crcs[0];
  for (uint64_t i = 1; i < n; ++i) {
    crc = crc32c::Combine(crc, crcs[i], std::min(expected.size, (i + 1) * part_size) - i * part_size);
  }
  // Parts under different ETags: another version of the object, unless the
  // bytes are the manifest's all the same (web servers behind a load
  // balancer give each answer its own ETag): the CRC decides.
  for (uint64_t i = 1; i < n && crc != expected.crc32c; ++i) {
    if (!etags[i].empty() && !etags[0].empty() && etags[i] != etags[0]) {
      return DataLossError("GET " + url + ": the object changed while it was being downloaded (ETag " + etags[0] +
                           ", then " + etags[i] + ")");
    }
  }
  return CheckCrc(url, crc, expected.crc32c);
}

std::string HttpObjectStore::ErrorCode(const HttpResponse& r) const { return ReasonPhrase(r.status); }

std::string HttpObjectStore::ErrorDetail(const HttpResponse&) const { return ""; }

bool HttpObjectStore::FailedDespite2xx(const std::string&, const HttpResponse&) const { return false; }

Status HttpObjectStore::CallOnce(const std::string& method, const std::string& key, const QueryParams& query,
                                 const std::vector<std::string>& headers, const Build& build, HttpResponse* r,
                                 const std::string& payload_sha256) {
  HttpRequest q;
  q.method = method;
  q.headers = headers;
  q.cancel = waiter_.cancel_flag();
  if (build) build(&q);
  Prepare(&q, key, query, payload_sha256);
  if (waiter_.cancelled()) {
    *r = HttpResponse();
    r->transport_error = "cancelled";
    r->permanent = true;
    return Status::OK();
  }
  return transport_->Perform(q, r);
}

void HttpObjectStore::WaitBeforeRetry(int attempt) {
  waiter_.Wait(BackoffDelay(retry_, attempt, waiter_.Jitter()), retry_.max_delay_s);
}

Status HttpObjectStore::RetryOrFail(const std::string& method, const std::string& key, const HttpResponse& r,
                                    int attempt) {
  TryOutcome outcome;
  outcome.http_status = r.status;
  outcome.transport_failed = !r.transport_error.empty();
  outcome.permanent = r.permanent;
  if (!outcome.transport_failed) outcome.error_code = ErrorCode(r);
  const RetryDecision decision = DecideRetry(retry_, outcome, attempt, waiter_.Jitter());
  if (decision.retry) {
    waiter_.Wait(decision.delay_s, retry_.max_delay_s);
    return Status::OK();
  }
  const std::string what = method + " " + UrlOf(key) + " (" + HttpUrl(key, {}) + ")";
  const std::string tries = attempt > 1 ? " (after " + std::to_string(attempt) + " attempts)" : "";
  if (outcome.transport_failed) return IOError(what + ": " + r.transport_error + tries);
  std::string msg = what + ": HTTP " + std::to_string(r.status) + " " + outcome.error_code;
  const std::string detail = ErrorDetail(r);
  if (!detail.empty()) msg += ": " + detail;
  if (auto it = r.headers.find("location"); r.status >= 300 && r.status < 400 && it != r.headers.end()) {
    msg += ": redirect to " + Printable(it->second, 512) + " (not followed)";
  }
  return Status(StatusCodeForHttp(r.status), msg + tries);
}

Status HttpObjectStore::Call(const std::string& method, const std::string& key, const QueryParams& query,
                             const std::vector<std::string>& headers, const Build& build, HttpResponse* r,
                             const std::string& payload_sha256, const std::string& op) {
  for (int attempt = 1;; ++attempt) {
    if (Status s = CallOnce(method, key, query, headers, build, r, payload_sha256); !s.ok()) {
      // The body bound (a sink's own errors already name the object).
      if (s.code() != StatusCode::kResourceExhausted) return s;
      return Status(s.code(),
                    (op.empty() ? method + " " + UrlOf(key) : op) + " (" + HttpUrl(key, query) + "): " + s.message());
    }
    bool ok = r->transport_error.empty() && r->status >= 200 && r->status < 300;
    if (ok && FailedDespite2xx(method, *r)) {
      r->status = 500;
      ok = false;
    }
    if (ok) return Status::OK();
    LIBSHARD_RETURN_IF_ERROR(RetryOrFail(method, key, *r, attempt));
  }
}

}  // namespace libshard::store

// The S3 and https stores: requests built here, sent by an HttpTransport,
// retried with exponential backoff and jitter, errors worded once.
#include <curl/curl.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "libshard/crc32c.h"
#include "libshard/store/s3_store.h"
#include "libshard/text_escape.h"
#include "libshard/util/random.h"
#include "store/xml.h"

namespace libshard::store {
namespace {

// The hex SHA-256 of the empty string: the payload hash of a request without a body.
constexpr char kEmptySha256[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

std::string Hex(const unsigned char* d, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    s[2 * i] = digits[d[i] >> 4];
    s[2 * i + 1] = digits[d[i] & 15];
  }
  return s;
}

// The hex SHA-256 of `bytes`, or of `length` bytes of `fd` from `offset`.
StatusOr<std::string> Sha256Hex(std::string_view bytes, int fd = -1, uint64_t offset = 0, uint64_t length = 0) {
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return InternalError("SHA-256 init failed");
  if (fd < 0) {
    EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size());
  } else {
    std::string buf(1 << 20, '\0');
    uint64_t done = 0;
    while (done < length) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), length - done));
      const ssize_t got = ::pread(fd, buf.data(), want, static_cast<off_t>(offset + done));
      if (got <= 0) return IOError("reading for the payload hash failed");
      EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(got));
      done += static_cast<uint64_t>(got);
    }
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &n);
  return Hex(md, n);
}

// Percent-encodes everything but A-Z a-z 0-9 - . _ ~ (SigV4's rule), and
// '/' too unless keep_slash.
std::string Encode(std::string_view s, bool keep_slash) {
  std::string out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = keep_slash ? s.find('/', start) : std::string_view::npos;
    if (end == std::string_view::npos) end = s.size();
    const std::string_view seg = s.substr(start, end - start);
    if (!seg.empty()) {
      char* e = curl_easy_escape(nullptr, seg.data(), static_cast<int>(seg.size()));
      out += e;
      curl_free(e);
    }
    if (end == s.size()) break;
    out += '/';
    start = end + 1;
  }
  return out;
}

// "?a=1&b=2": sorted by name, names and values encoded (libcurl 7.88 signs
// the query as sent, so it must already be canonical: "uploads=", not "uploads").
std::string Query(const std::map<std::string, std::string>& params) {
  std::string q;
  for (const auto& [k, v] : params) q += (q.empty() ? "?" : "&") + Encode(k, false) + "=" + Encode(v, false);
  return q;
}

std::string Unquote(std::string s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

// [A-Za-z0-9._-] kept, anything else '_': a folder name.
std::string Sanitize(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  }
  return out;
}

// "127.0.0.1_9000" from "http://127.0.0.1:9000" (user-info, which
// CheckEndpoint refuses, never kept).
std::string HostOf(const std::string& url) {
  const size_t sep = url.find("://");
  std::string host = sep == std::string::npos ? url : url.substr(sep + 3);
  host = host.substr(0, host.find('/'));
  return Sanitize(host.substr(host.find('@') == std::string::npos ? 0 : host.find('@') + 1));
}

// At most `max` bytes of `s` (a server's header), control bytes as '?'.
std::string Printable(std::string_view s, size_t max) {
  std::string out(s.substr(0, max));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return s.size() > max ? out + "..." : out;
}

bool Retryable(long status, const std::string& code) {
  return status == 429 || status >= 500 || code == "SlowDown" || code == "RequestTimeout" || code == "InternalError";
}

StatusCode CodeFor(long status) {
  if (status == 404) return StatusCode::kNotFound;
  if (status == 401 || status == 403) return StatusCode::kPermissionDenied;
  if (status == 416) return StatusCode::kOutOfRange;
  if (status >= 400 && status < 500) return StatusCode::kInvalidArgument;
  return StatusCode::kIOError;
}

Status MakeStatus(StatusCode code, std::string message) {
  switch (code) {
    case StatusCode::kNotFound:
      return NotFoundError(std::move(message));
    case StatusCode::kPermissionDenied:
      return PermissionDeniedError(std::move(message));
    case StatusCode::kOutOfRange:
      return OutOfRangeError(std::move(message));
    case StatusCode::kInvalidArgument:
      return InvalidArgumentError(std::move(message));
    case StatusCode::kDataLoss:
      return DataLossError(std::move(message));
    case StatusCode::kResourceExhausted:
      return ResourceExhaustedError(std::move(message));
    default:
      return IOError(std::move(message));
  }
}

const char* ReasonFor(long status) {
  switch (status) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 301:
      return "MovedPermanently";
    case 302:
      return "Found";
    case 307:
      return "TemporaryRedirect";
    case 308:
      return "PermanentRedirect";
    case 412:
      return "PreconditionFailed";
    case 416:
      return "InvalidRange";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    default:
      return "";
  }
}

// Common to the S3 and https stores: request building, the retry loop, the
// reads.
class HttpStore : public ObjectStore {
 public:
  HttpStore(const RetryOptions& retry, std::shared_ptr<HttpTransport> transport)
      : retry_(retry),
        transport_(std::move(transport)),
        jitter_seed_(static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())) {}

  StatusOr<ObjectInfo> Head(const std::string& key) override {
    HttpResponse r;
    LIBSHARD_RETURN_IF_ERROR(Call("HEAD", key, {}, {}, nullptr, &r));
    ObjectInfo info;
    info.key = key;
    auto it = r.headers.find("content-length");
    if (it == r.headers.end()) return IOError("HEAD " + UrlOf(key) + ": the response has no Content-Length");
    info.size = std::strtoull(it->second.c_str(), nullptr, 10);
    if (r.headers.count("etag")) info.etag = Unquote(r.headers["etag"]);
    for (const auto& [name, value] : r.headers) {
      if (name.rfind("x-amz-meta-", 0) == 0) info.metadata[name.substr(11)] = value;
    }
    return info;
  }

  StatusOr<std::string> GetRange(const std::string& key, uint64_t offset, uint64_t length) override {
    if (length == 0) return std::string();
    HttpResponse r;
    const std::string range = "Range: bytes=" + std::to_string(offset) + "-" + std::to_string(offset + length - 1);
    std::string body;
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

  StatusOr<std::string> GetSmall(const std::string& key, uint64_t max_bytes) override {
    HttpResponse r;
    Status s = Call(
        "GET", key, {}, {}, [&](HttpRequest* q) { q->max_body = max_bytes; }, &r);
    LIBSHARD_RETURN_IF_ERROR(s);
    return std::move(r.body);
  }

  Status GetVerified(const std::string& key, const Expected& expected, const ByteSink& sink) override {
    uint32_t crc = 0;
    std::string etag;
    LIBSHARD_RETURN_IF_ERROR(GetResumable(
        key, expected.size, 0, expected.size, /*whole=*/true, [&](uint64_t, std::string_view b) { return sink(b); },
        &crc, &etag));
    return CheckCrc(UrlOf(key), crc, expected.crc32c);
  }

  // Parts: each a GetPart() on a thread of its own (up to `parallel`), the
  // parts' CRCs combined in order at the end. Why combine rather than CRC
  // the file in order as parts complete: the parts' bytes are checked as
  // they arrive, on the thread that receives them, and never read back.
  Status GetVerifiedParts(const std::string& key, const Expected& expected, const PartOptions& options,
                          const PositionalSink& sink) override {
    if (options.part_size == 0 || options.parallel <= 1 || expected.size <= options.part_size) {
      return ObjectStore::GetVerifiedParts(key, expected, options, sink);
    }
    const std::string url = UrlOf(key);
    const uint64_t n = (expected.size + options.part_size - 1) / options.part_size;
    std::vector<uint32_t> crcs(n, 0);
    std::vector<Status> errors(n);
    std::vector<std::string> etags(n);
    std::atomic<uint64_t> next{0};
    std::atomic<bool> failed{false};
    auto work = [&] {
      for (uint64_t i; !failed.load() && (i = next.fetch_add(1)) < n;) {
        const uint64_t begin = i * options.part_size;
        const uint64_t end = std::min(expected.size, begin + options.part_size);
        errors[i] = GetResumable(key, expected.size, begin, end, /*whole=*/false, sink, &crcs[i], &etags[i]);
        if (!errors[i].ok()) failed = true;
      }
    };
    std::vector<std::thread> threads;
    for (uint64_t t = 1; t < std::min<uint64_t>(n, static_cast<uint64_t>(options.parallel)); ++t) {
      threads.emplace_back(work);
    }
    work();
    for (std::thread& t : threads) t.join();
    for (const Status& e : errors) LIBSHARD_RETURN_IF_ERROR(e);  // the first part's error first
    uint32_t crc = crcs[0];
    for (uint64_t i = 1; i < n; ++i) {
      crc = crc32c::Combine(crc, crcs[i], std::min(expected.size, (i + 1) * options.part_size) - i * options.part_size);
    }
    // Parts under different ETags: another version of the object, unless
    // the bytes are the manifest's all the same (web servers behind a load
    // balancer give each answer its own ETag): the CRC decides.
    for (uint64_t i = 1; i < n && crc != expected.crc32c; ++i) {
      if (!etags[i].empty() && !etags[0].empty() && etags[i] != etags[0]) {
        return DataLossError("GET " + url + ": the object changed while it was being downloaded (ETag " + etags[0] +
                             ", then " + etags[i] + ")");
      }
    }
    return CheckCrc(url, crc, expected.crc32c);
  }

 protected:
  // Bytes [begin, end) of an object of `size` bytes into `sink`: the one
  // resumable download. `whole`: the whole object (begin 0, end `size`),
  // asked for without a Range first; else a ranged part. A try cut midway
  // resumes where it stopped (Range from the first byte not yet delivered,
  // If-Match the first answer's ETag, so that a replaced object is never
  // spliced onto the old one's start), with a fresh retry budget when it
  // moved forward. *crc: the CRC-32C of those bytes; *etag: the first
  // answer's. DataLoss when the server says the object has another size
  // (Content-Range, or a whole answer's length), or sends more than asked.
  Status GetResumable(const std::string& key, uint64_t size, uint64_t begin, uint64_t end, bool whole,
                      const PositionalSink& sink, uint32_t* crc, std::string* etag) {
    const std::string url = UrlOf(key);
    uint64_t delivered = begin;
    *crc = 0;
    int attempt = 0;
    do {
      const uint64_t start = delivered;
      std::vector<std::string> headers;
      if (!whole || start > 0) {
        headers.push_back("Range: bytes=" + std::to_string(start) + "-" + (whole ? "" : std::to_string(end - 1)));
        if (!etag->empty()) headers.push_back("If-Match: \"" + *etag + "\"");
      }
      HttpResponse r;
      bool first = true, ranged = false;
      uint64_t skip = 0;  // a whole answer to a ranged request: bytes before `start`
      bool enough = false;
      auto build = [&](HttpRequest* q) {
        q->on_body = [&](std::string_view bytes) -> Status {
          if (first) {
            first = false;
            // "bytes START-END/TOTAL": the whole object must be the size the
            // manifest gives it.
            auto it = r.headers.find("content-range");
            ranged = it != r.headers.end();
            if (!ranged) {
              skip = start;  // the server ignored the range (or none was asked)
            } else {
              const size_t slash = it->second.rfind('/');
              const std::string total = slash == std::string::npos ? "*" : it->second.substr(slash + 1);
              if (total != "*" && total != std::to_string(size)) {
                return DataLossError("GET " + url + ": the object has " + total + " bytes, the manifest " +
                                     std::to_string(size));
              }
            }
          }
          if (skip > 0) {
            const size_t k = static_cast<size_t>(std::min<uint64_t>(skip, bytes.size()));
            skip -= k;
            bytes.remove_prefix(k);
          }
          if (delivered + bytes.size() > end) {
            if (ranged && !whole) {
              return DataLossError("GET " + url + ": the server sent more than range " + std::to_string(start) + "-" +
                                   std::to_string(end - 1));
            }
            if (end == size) {
              return DataLossError("GET " + url + ": the object is larger than the " + std::to_string(size) +
                                   " bytes the manifest gives it");
            }
            bytes = bytes.substr(0, static_cast<size_t>(end - delivered));
            enough = true;  // the rest of a whole-object answer is not needed
          }
          *crc = crc32c::Extend(*crc, bytes.data(), bytes.size());
          LIBSHARD_RETURN_IF_ERROR(sink(delivered, bytes));
          delivered += bytes.size();
          return enough ? FailedPreconditionError("enough") : Status::OK();
        };
      };
      Status s = CallOnce("GET", key, {}, headers, build, &r);
      if (etag->empty() && r.headers.count("etag")) *etag = Unquote(r.headers["etag"]);
      if (enough) break;
      if (!s.ok()) return s;  // the sink's error, or DataLoss
      const bool progressed = delivered > start;
      if (progressed) attempt = 0;  // a cut transfer that moved forward resumes with a fresh budget
      if (r.transport_error.empty() && r.status >= 200 && r.status < 300) {
        if (delivered == end) break;
        if (!ranged) {  // a whole answer: the object's own size
          return DataLossError("GET " + url + ": the object has " + std::to_string(delivered) +
                               " bytes, the manifest " + std::to_string(size));
        }
        // A ranged answer shorter than asked that the transport did not see as cut.
        if (++attempt >= retry_.max_attempts) {
          return IOError("GET " + url + ": range " + std::to_string(start) + "-" + std::to_string(end - 1) +
                         " came short (after " + std::to_string(attempt) + " attempts)");
        }
        Backoff(attempt);
        continue;
      }
      // Every byte asked for came, though the answer promised more (a
      // Content-Length past the end): the CRC decides.
      if (delivered == end && progressed) break;
      if (r.transport_error.empty() && r.status == 412) {
        return DataLossError("GET " + url + ": the object changed while it was being downloaded");
      }
      if (r.transport_error.empty() && r.status == 416 && start > begin) {  // resumed past the object's end
        return DataLossError("GET " + url + ": the object ends before byte " + std::to_string(start) +
                             ", the manifest gives it " + std::to_string(size) + " bytes");
      }
      if (Status e = Classify("GET", key, r, ++attempt); !e.ok()) return e;
    } while (delivered < end);
    return Status::OK();
  }

  // DataLoss naming `url` when `crc` is not the manifest's `expected`.
  static Status CheckCrc(const std::string& url, uint32_t crc, uint32_t expected) {
    if (crc == expected) return Status::OK();
    char buf[80];
    std::snprintf(buf, sizeof(buf), "crc32c:%08x, the manifest crc32c:%08x", crc, expected);
    return DataLossError("GET " + url + ": checksum mismatch: the object has " + buf);
  }

  // Fills the URL, the payload hash and the signing of a request for `key`.
  virtual void Prepare(HttpRequest* q, const std::string& key, const std::map<std::string, std::string>& query,
                       const std::string& payload_sha256) const = 0;
  // The endpoint-level URL of `key` (what the request goes to), for messages.
  virtual std::string HttpUrl(const std::string& key, const std::map<std::string, std::string>& query) const = 0;

  using Build = std::function<void(HttpRequest*)>;

  // One try: no retries, `r` filled. Non-OK only for the body sink's error.
  Status CallOnce(const std::string& method, const std::string& key, const std::map<std::string, std::string>& query,
                  const std::vector<std::string>& headers, const Build& build, HttpResponse* r,
                  const std::string& payload_sha256 = kEmptySha256) {
    HttpRequest q;
    q.method = method;
    q.headers = headers;
    q.cancel = &cancelled_;
    if (build) build(&q);
    Prepare(&q, key, query, payload_sha256);
    if (cancelled_.load()) {
      *r = HttpResponse();
      r->transport_error = "cancelled";
      r->permanent = true;
      return Status::OK();
    }
    return transport_->Perform(q, r);
  }

  // OK when `r` is a success; an error when it failed for good; "retry"
  // (after sleeping) when another try may cure it: returned as OK-with-flag
  // by Call. Here: an error status when attempts are spent or the failure
  // is permanent, OK after the backoff sleep otherwise.
  Status Classify(const std::string& method, const std::string& key, const HttpResponse& r, int attempt) {
    const std::string what = method + " " + UrlOf(key) + " (" + HttpUrl(key, {}) + ")";
    const std::string tries = attempt > 1 ? " (after " + std::to_string(attempt) + " attempts)" : "";
    if (!r.transport_error.empty()) {
      if (r.permanent || attempt >= retry_.max_attempts) return IOError(what + ": " + r.transport_error + tries);
    } else {
      const std::string code = S3Code(r);
      std::string msg = what + ": HTTP " + std::to_string(r.status) + " " + code;
      const std::string detail = XmlText(r.body, "Error/Message");
      if (!detail.empty()) msg += ": " + detail;
      msg += HintFor(code);
      if (auto it = r.headers.find("location"); r.status >= 300 && r.status < 400 && it != r.headers.end()) {
        msg += ": redirect to " + Printable(it->second, 512) + " (not followed)";
      }
      if (!Retryable(r.status, code) || attempt >= retry_.max_attempts) {
        return MakeStatus(CodeFor(r.status), msg + tries);
      }
    }
    Backoff(attempt);
    return Status::OK();
  }

  // The request with retries. OK when the final answer is 2xx.
  // `op`: how messages name the request ("" = METHOD URL).
  Status Call(const std::string& method, const std::string& key, const std::map<std::string, std::string>& query,
              const std::vector<std::string>& headers, const Build& build, HttpResponse* r,
              const std::string& payload_sha256 = kEmptySha256, const std::string& op = "") {
    for (int attempt = 1;; ++attempt) {
      if (Status s = CallOnce(method, key, query, headers, build, r, payload_sha256); !s.ok()) {
        // The body bound (a sink's own errors already name the object).
        if (s.code() != StatusCode::kResourceExhausted) return s;
        return MakeStatus(
            s.code(), (op.empty() ? method + " " + UrlOf(key) : op) + " (" + HttpUrl(key, query) + "): " + s.message());
      }
      bool ok = r->transport_error.empty() && r->status >= 200 && r->status < 300;
      // CompleteMultipartUpload may answer 200 with an error document.
      if (ok && method == "POST" && r->body.find("<Error>") != std::string::npos &&
          XmlText(r->body, "Error/Code") != "") {
        r->status = 500;
        ok = false;
      }
      if (ok) return Status::OK();
      LIBSHARD_RETURN_IF_ERROR(Classify(method, key, *r, attempt));
    }
  }

  // What to do about an error code, appended to its message ("" = nothing).
  virtual std::string HintFor(const std::string& code) const { return ""; }

  static std::string S3Code(const HttpResponse& r) {
    std::string code = XmlText(r.body, "Error/Code");
    if (code.empty()) code = ReasonFor(r.status);
    return code;
  }

  void Backoff(int attempt) {
    double cap = retry_.base_delay_s;
    for (int i = 1; i < attempt && cap < retry_.max_delay_s; ++i) cap *= 2;
    cap = std::min(cap, retry_.max_delay_s);
    double u;
    {
      std::lock_guard<std::mutex> lock(jitter_mu_);
      u = util::SplitMix64(util::MixSeed(jitter_seed_, ++jitter_draws_, 0)).Uniform();
    }
    // "Equal jitter": half the cap, plus a random part of the other half.
    // Cancel() ends the wait.
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(cap / 2 + u * cap / 2);
    std::unique_lock<std::mutex> lock(cancel_mu_);
    cancel_cv_.wait_until(lock, until, [this] { return cancelled_.load(); });
  }

  void Cancel() override {
    {
      std::lock_guard<std::mutex> lock(cancel_mu_);
      cancelled_ = true;
    }
    cancel_cv_.notify_all();
  }

  const RetryOptions retry_;
  std::shared_ptr<HttpTransport> transport_;

 private:
  std::mutex jitter_mu_;
  std::atomic<bool> cancelled_{false};
  std::mutex cancel_mu_;
  std::condition_variable cancel_cv_;
  uint64_t jitter_seed_;
  uint64_t jitter_draws_ = 0;
};

class S3Store : public HttpStore {
 public:
  S3Store(const S3Config& config, std::string bucket, std::shared_ptr<HttpTransport> transport)
      : HttpStore(config.retry, std::move(transport)), config_(config), bucket_(std::move(bucket)) {}

  std::string UrlOf(const std::string& key) const override { return "s3://" + JoinKey(bucket_, key); }
  std::string CacheName() const override {
    return "s3/" + (config_.endpoint.empty() ? std::string("aws") : HostOf(config_.endpoint)) + "/" + Sanitize(bucket_);
  }

  Status Put(const std::string& key, std::string_view bytes) override {
    LIBSHARD_ASSIGN_OR_RETURN(std::string sha, Sha256Hex(bytes));
    HttpResponse r;
    return Call(
        "PUT", key, {}, {}, [&](HttpRequest* q) { q->body = bytes; }, &r, sha);
  }

  Status PutFile(const std::string& key, const std::string& path, const PutOptions& options) override {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoError("PUT " + UrlOf(key) + ": " + path, errno);
    struct Closer {
      int fd;
      ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st;
    if (::fstat(fd, &st) != 0) return ErrnoError(path, errno);
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    std::vector<std::string> meta;
    for (const auto& [name, value] : options.metadata) meta.push_back("x-amz-meta-" + name + ": " + value);
    if (size < options.multipart_threshold || options.part_size == 0 || size <= options.part_size) {
      LIBSHARD_ASSIGN_OR_RETURN(std::string sha, FilePayloadHash(fd, 0, size));
      HttpResponse r;
      return Call(
          "PUT", key, {}, meta,
          [&](HttpRequest* q) {
            q->body_fd = fd;
            q->body_offset = 0;
            q->body_length = size;
          },
          &r, sha);
    }
    return Multipart(key, fd, size, options, meta);
  }

  // Pages followed while the server says IsTruncated, within bounds: a
  // token that comes back, or more pages or keys than the configuration
  // allows, end the listing with an error (a lying server never makes it
  // loop or grow without end).
  StatusOr<std::vector<ObjectInfo>> List(const std::string& prefix) override {
    const std::string what = "LIST " + UrlOf(prefix);
    std::vector<ObjectInfo> out;
    std::set<std::string> tokens;
    std::string token;
    for (uint64_t page = 1;; ++page) {
      std::map<std::string, std::string> query{{"list-type", "2"}, {"prefix", prefix}};
      if (!token.empty()) query["continuation-token"] = token;
      HttpResponse r;
      LIBSHARD_RETURN_IF_ERROR(Call("GET", "", query, {}, nullptr, &r, kEmptySha256, "LIST " + UrlOf(prefix)));
      ObjectInfo cur;
      std::string next;
      bool truncated = false;
      XmlHandler h;
      h.on_text = [&](const std::string& p, const std::string& t) {
        if (p == "ListBucketResult/Contents/Key") cur.key = t;
        if (p == "ListBucketResult/Contents/Size") cur.size = std::strtoull(t.c_str(), nullptr, 10);
        if (p == "ListBucketResult/Contents/ETag") cur.etag = Unquote(t);
        if (p == "ListBucketResult/NextContinuationToken") next = t;
        if (p == "ListBucketResult/IsTruncated") truncated = t == "true";
      };
      std::string outside;
      h.on_end = [&](const std::string& p) {
        if (p != "ListBucketResult/Contents") return;
        if (cur.key.compare(0, prefix.size(), prefix) != 0 && outside.empty()) outside = cur.key;
        out.push_back(std::move(cur));
        cur = ObjectInfo();
      };
      if (Status s = ParseXml(r.body, h); !s.ok()) return DataLossError(what + ": " + s.message());
      if (!outside.empty()) {
        return DataLossError(what + ": the server listed '" + outside + "', which is outside the prefix");
      }
      if (out.size() > config_.list_max_keys) {
        return ResourceExhaustedError(what + ": more than " + std::to_string(config_.list_max_keys) +
                                      " keys (the bound on one listing, S3Config::list_max_keys)");
      }
      if (!truncated || next.empty()) break;
      if (!tokens.insert(next).second) {
        return DataLossError(what + ": the server sent continuation token '" + next + "' again (page " +
                             std::to_string(page + 1) + "): the listing would never end");
      }
      if (page >= config_.list_max_pages) {
        return ResourceExhaustedError(what + ": more than " + std::to_string(config_.list_max_pages) +
                                      " pages (the bound on one listing, S3Config::list_max_pages)");
      }
      token = next;
    }
    std::sort(out.begin(), out.end(), [](const ObjectInfo& a, const ObjectInfo& b) { return a.key < b.key; });
    return out;
  }

 protected:
  std::string HttpUrl(const std::string& key, const std::map<std::string, std::string>& query) const override {
    std::string url;
    if (config_.endpoint.empty()) {
      url = "https://" + bucket_ + ".s3." + config_.region + ".amazonaws.com/" + Encode(key, true);
    } else {
      url = config_.endpoint + "/" + bucket_ + (key.empty() ? "" : "/" + Encode(key, true));
    }
    return url + Query(query);
  }

  void Prepare(HttpRequest* q, const std::string& key, const std::map<std::string, std::string>& query,
               const std::string& payload_sha256) const override {
    q->url = HttpUrl(key, query);
    q->headers.push_back("x-amz-content-sha256: " + payload_sha256);
    if (config_.access_key_id.empty()) return;  // anonymous
    if (!config_.session_token.empty()) q->headers.push_back("x-amz-security-token: " + config_.session_token);
    q->aws_sigv4 = "aws:amz:" + config_.region + ":s3";
    q->credentials = config_.access_key_id + ":" + config_.secret_access_key;
  }

 private:
  // The x-amz-content-sha256 of a file's bytes going up. Over https the
  // bytes are not hashed: "UNSIGNED-PAYLOAD" (TLS already protects them in
  // transit, and the hash would be one more read of every byte; botocore
  // does the same). Over plain http nothing else would: the hex SHA-256, so
  // that the server refuses a body changed on the way.
  StatusOr<std::string> FilePayloadHash(int fd, uint64_t offset, uint64_t length) const {
    if (HttpUrl("", {}).rfind("https://", 0) == 0) return std::string("UNSIGNED-PAYLOAD");
    return Sha256Hex({}, fd, offset, length);
  }

  Status Multipart(const std::string& key, int fd, uint64_t size, const PutOptions& options,
                   const std::vector<std::string>& meta) {
    HttpResponse init;
    LIBSHARD_RETURN_IF_ERROR(Call("POST", key, {{"uploads", ""}}, meta, nullptr, &init));
    const std::string upload_id = XmlText(init.body, "InitiateMultipartUploadResult/UploadId");
    if (upload_id.empty()) return IOError("POST " + UrlOf(key) + "?uploads: the answer has no UploadId");

    const uint64_t parts = (size + options.part_size - 1) / options.part_size;
    std::vector<std::string> etags(parts);
    std::atomic<uint64_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex mu;
    Status first_error;
    auto worker = [&] {
      for (uint64_t i; !failed.load() && (i = next.fetch_add(1)) < parts;) {
        const uint64_t off = i * options.part_size, len = std::min(options.part_size, size - off);
        Status s;
        StatusOr<std::string> sha = FilePayloadHash(fd, off, len);
        HttpResponse r;
        if (!sha.ok()) {
          s = sha.status();
        } else {
          s = Call(
              "PUT", key, {{"partNumber", std::to_string(i + 1)}, {"uploadId", upload_id}}, {},
              [&](HttpRequest* q) {
                q->body_fd = fd;
                q->body_offset = off;
                q->body_length = len;
              },
              &r, *sha);
        }
        if (s.ok() && r.headers.count("etag") == 0) {
          s = IOError("PUT " + UrlOf(key) + " part " + std::to_string(i + 1) + ": the answer has no ETag");
        }
        if (!s.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          if (first_error.ok()) first_error = s;
          failed = true;
          return;
        }
        etags[i] = r.headers["etag"];
      }
    };
    const int threads = static_cast<int>(std::max<uint64_t>(1, std::min<uint64_t>(options.parallel_parts, parts)));
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (std::thread& t : pool) t.join();

    Status result = first_error;
    if (result.ok()) {
      std::string body = "<CompleteMultipartUpload>";
      for (uint64_t i = 0; i < parts; ++i) {
        body += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + MarkupEscape(etags[i]) +
                "</ETag></Part>";
      }
      body += "</CompleteMultipartUpload>";
      StatusOr<std::string> sha = Sha256Hex(body);
      HttpResponse r;
      result = sha.ok() ? Call(
                              "POST", key, {{"uploadId", upload_id}}, {"Content-Type: application/xml"},
                              [&](HttpRequest* q) { q->body = body; }, &r, *sha)
                        : sha.status();
    }
    if (!result.ok()) {
      // Abort: the parts uploaded so far are dropped by the server. Its own
      // failure is reported beside the first one, never instead of it.
      HttpResponse r;
      Status abort = Call("DELETE", key, {{"uploadId", upload_id}}, {}, nullptr, &r);
      if (!abort.ok() && abort.code() != StatusCode::kNotFound) {
        return MakeStatus(result.code(),
                          result.message() + "; aborting the multipart upload failed too: " + abort.message());
      }
    }
    return result;
  }

  std::string HintFor(const std::string& code) const override {
    if (code != "NoSuchBucket") return "";
    return " (the bucket must exist before anything is written to it; create it with `aws s3 mb s3://" + bucket_ +
           (config_.endpoint.empty() ? std::string() : " --endpoint-url " + config_.endpoint) + "`)";
  }

  const S3Config config_;
  const std::string bucket_;
};

class HttpsStore : public HttpStore {
 public:
  HttpsStore(std::string base, const RetryOptions& retry, std::shared_ptr<HttpTransport> transport)
      : HttpStore(retry, std::move(transport)), base_(std::move(base)) {}

  std::string UrlOf(const std::string& key) const override { return base_ + "/" + key; }
  std::string CacheName() const override { return "https/" + HostOf(base_); }

  Status Put(const std::string& key, std::string_view) override { return ReadOnly("PUT", key); }
  Status PutFile(const std::string& key, const std::string&, const PutOptions&) override {
    return ReadOnly("PUT", key);
  }
  StatusOr<std::vector<ObjectInfo>> List(const std::string& prefix) override { return ReadOnly("LIST", prefix); }

 protected:
  std::string HttpUrl(const std::string& key, const std::map<std::string, std::string>&) const override {
    return base_ + "/" + Encode(key, true);
  }
  void Prepare(HttpRequest* q, const std::string& key, const std::map<std::string, std::string>& query,
               const std::string&) const override {
    q->url = HttpUrl(key, query);
  }

 private:
  Status ReadOnly(const std::string& op, const std::string& key) const {
    return UnimplementedError(op + " " + UrlOf(key) + ": https:// locations are read-only (use s3:// to write)");
  }
  const std::string base_;
};

}  // namespace

std::unique_ptr<ObjectStore> NewS3Store(const S3Config& config, const std::string& bucket,
                                        std::shared_ptr<HttpTransport> transport) {
  return std::make_unique<S3Store>(config, bucket, std::move(transport));
}

std::unique_ptr<ObjectStore> NewHttpsStore(const std::string& base, const RetryOptions& retry,
                                           std::shared_ptr<HttpTransport> transport) {
  return std::make_unique<HttpsStore>(base, retry, std::move(transport));
}

}  // namespace libshard::store

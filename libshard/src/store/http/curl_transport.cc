// HttpTransport over libcurl: a pool of easy handles (each keeps its
// connections alive between requests), SigV4 by CURLOPT_AWS_SIGV4, stalls cut
// by CURLOPT_LOW_SPEED_LIMIT/TIME.
#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <vector>

#include "libshard/store/http_transport.h"
#include "libshard/util/strings.h"
#include "store/http/retry_policy.h"

namespace libshard::store {
namespace {

constexpr size_t kMaxErrorBody = 64 << 10;

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Exchange {
  const HttpRequest* request = nullptr;
  HttpResponse* response = nullptr;
  CURL* handle = nullptr;
  Status sink_status;  // the on_body error or the bound, if any
  uint64_t sent = 0;   // body bytes handed to libcurl
  bool status_known = false;
  bool success = false;
  // The deadline (RetryOptions::deadline_*), counted from the start.
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  double base_s = 0, min_rate = 0;
  std::string stopped;  // why OnProgress ended the exchange
};

// libcurl calls this at least once a second, also while no byte moves: the
// place for the cancel flag and the overall deadline.
int OnProgress(void* user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
  auto* x = static_cast<Exchange*>(user);
  if (x->request->cancel != nullptr && x->request->cancel->load()) {
    x->stopped = "cancelled";
    return 1;
  }
  if (x->min_rate <= 0) return 0;
  const double bytes = static_cast<double>(std::max({dltotal, dlnow, ultotal, ulnow}));
  const double allowed = x->base_s + bytes / x->min_rate;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - x->start).count();
  if (elapsed <= allowed) return 0;
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "the deadline of %.1f s expired (%.0f s + %.0f bytes at %.0f B/s; LIBSHARD_DEADLINE_BASE_S, "
                "LIBSHARD_DEADLINE_MIN_RATE): %.0f bytes came in %.1f s",
                allowed, x->base_s, bytes, x->min_rate, static_cast<double>(std::max(dlnow, ulnow)), elapsed);
  x->stopped = buf;
  return 1;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* x = static_cast<Exchange*>(user);
  const size_t len = size * n;
  std::string line(data, len);
  if (util::StartsWith(line, "HTTP/")) {  // a new response (after a 100 Continue)
    x->response->headers.clear();
    return len;
  }
  const size_t colon = line.find(':');
  if (colon == std::string::npos) return len;
  std::string name = line.substr(0, colon);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  std::string value = line.substr(colon + 1);
  const size_t b = value.find_first_not_of(" \t"), e = value.find_last_not_of(" \t\r\n");
  value = b == std::string::npos ? "" : value.substr(b, e - b + 1);
  x->response->headers[name] = value;
  return len;
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* x = static_cast<Exchange*>(user);
  const size_t len = size * n;
  if (!x->status_known) {
    long code = 0;
    curl_easy_getinfo(x->handle, CURLINFO_RESPONSE_CODE, &code);
    x->success = code >= 200 && code < 300;
    x->status_known = true;
  }
  std::string& body = x->response->body;
  if (!x->success) {
    if (body.size() < kMaxErrorBody) body.append(data, std::min(len, kMaxErrorBody - body.size()));
    return len;
  }
  if (x->request->on_body) {
    x->sink_status = x->request->on_body(std::string_view(data, len));
    return x->sink_status.ok() ? len : 0;
  }
  if (body.size() + len > x->request->max_body) {
    x->sink_status =
        ResourceExhaustedError("the response body is larger than " + std::to_string(x->request->max_body) + " bytes");
    return 0;
  }
  body.append(data, len);
  return len;
}

size_t OnRead(char* dst, size_t size, size_t n, void* user) {
  auto* x = static_cast<Exchange*>(user);
  const HttpRequest& r = *x->request;
  const uint64_t total = r.body_fd >= 0 ? r.body_length : r.body.size();
  const size_t want = static_cast<size_t>(std::min<uint64_t>(size * n, total - x->sent));
  if (want == 0) return 0;
  if (r.body_fd >= 0) {
    const ssize_t got = ::pread(r.body_fd, dst, want, static_cast<off_t>(r.body_offset + x->sent));
    if (got <= 0) {
      x->sink_status = IOError("reading the upload body failed");
      return CURL_READFUNC_ABORT;
    }
    x->sent += static_cast<uint64_t>(got);
    return static_cast<size_t>(got);
  }
  std::copy_n(r.body.data() + x->sent, want, dst);
  x->sent += want;
  return want;
}

// Rewinds the body when libcurl resends it (a redirect, a reused connection
// that was closed).
int OnSeek(void* user, curl_off_t offset, int origin) {
  auto* x = static_cast<Exchange*>(user);
  if (origin != SEEK_SET) return CURL_SEEKFUNC_CANTSEEK;
  x->sent = static_cast<uint64_t>(offset);
  return CURL_SEEKFUNC_OK;
}

class CurlTransport : public HttpTransport {
 public:
  explicit CurlTransport(const StoreConfig& config) : config_(config) { GlobalInit(); }
  ~CurlTransport() override {
    for (CURL* h : idle_) curl_easy_cleanup(h);
  }

  Status Perform(const HttpRequest& request, HttpResponse* response) override {
    *response = HttpResponse();
    CURL* h = Acquire();
    if (h == nullptr) return InternalError("curl_easy_init failed");
    Exchange x;
    x.request = &request;
    x.response = response;
    x.handle = h;
    x.base_s = config_.retry.deadline_base_s;
    x.min_rate = config_.retry.deadline_min_rate;
    char errbuf[CURL_ERROR_SIZE] = {0};
    curl_slist* headers = nullptr;
    for (const std::string& hd : request.headers) headers = curl_slist_append(headers, hd.c_str());

    curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, OnHeader);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &x);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, OnBody);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(config_.retry.connect_timeout_s * 1000));
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, config_.retry.low_speed_bytes);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, config_.retry.low_speed_time_s);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, OnProgress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &x);
    // No wait for "100 Continue" before a body. (Not "Expect:" among the
    // headers: libcurl 7.88 signs that empty header without sending it, and
    // the server's signature then differs.)
    curl_easy_setopt(h, CURLOPT_EXPECT_100_TIMEOUT_MS, 0L);
    if (!config_.ca_bundle.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, config_.ca_bundle.c_str());
    if (!request.aws_sigv4.empty()) {
      curl_easy_setopt(h, CURLOPT_AWS_SIGV4, request.aws_sigv4.c_str());
      // Key and secret apart: a ':' in the secret stays in the secret.
      const size_t colon = request.credentials.find(':');
      const std::string key = request.credentials.substr(0, colon);
      const std::string secret = colon == std::string::npos ? "" : request.credentials.substr(colon + 1);
      curl_easy_setopt(h, CURLOPT_USERNAME, key.c_str());
      curl_easy_setopt(h, CURLOPT_PASSWORD, secret.c_str());
    }
    const bool has_body = request.body_fd >= 0 || !request.body.empty();
    const uint64_t body_size = request.body_fd >= 0 ? request.body_length : request.body.size();
    if (request.method == "HEAD") {
      curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (request.method == "PUT") {
      curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
      curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(body_size));
    } else if (request.method == "POST") {
      curl_easy_setopt(h, CURLOPT_POST, 1L);
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body_size));
    } else if (request.method != "GET") {
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
    if (has_body || request.method == "PUT" || request.method == "POST") {
      curl_easy_setopt(h, CURLOPT_READFUNCTION, OnRead);
      curl_easy_setopt(h, CURLOPT_READDATA, &x);
      curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, OnSeek);
      curl_easy_setopt(h, CURLOPT_SEEKDATA, &x);
    }
    const CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &response->status);
    curl_slist_free_all(headers);
    Release(h, rc == CURLE_OK);
    if (!x.sink_status.ok()) return x.sink_status;
    if (rc == CURLE_ABORTED_BY_CALLBACK && !x.stopped.empty()) {
      response->transport_error = x.stopped;
      response->permanent = true;
    } else if (rc != CURLE_OK) {
      response->transport_error = curl_easy_strerror(rc);
      if (errbuf[0] != '\0') response->transport_error += std::string(" (") + errbuf + ")";
      // "Received HTTP/0.9 when not allowed": the connection held bytes of
      // an earlier answer longer than its Content-Length. This handle (and
      // its connection) is dropped; a retry starts on a fresh one.
      response->permanent = CurlErrorPermanent(rc, errbuf);
    }
    return Status::OK();
  }

 private:
  CURL* Acquire() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        CURL* h = idle_.back();
        idle_.pop_back();
        curl_easy_reset(h);  // keeps the connection cache
        return h;
      }
    }
    return curl_easy_init();
  }
  // A handle whose transfer failed may hold a half-read connection: drop it.
  void Release(CURL* h, bool ok) {
    if (!ok) {
      curl_easy_cleanup(h);
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(h);
  }

  const StoreConfig config_;
  std::mutex mu_;
  std::vector<CURL*> idle_;
};

}  // namespace

std::shared_ptr<HttpTransport> NewCurlTransport(const StoreConfig& config) {
  return std::make_shared<CurlTransport>(config);
}

}  // namespace libshard::store

// The S3 store: SigV4-signed requests (libcurl signs them), payload hashes,
// S3's error documents, LIST pages, multipart uploads; the reads and the
// retries are HttpObjectStore's.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "libshard/io/open_file.h"
#include "libshard/store/s3_store.h"
#include "libshard/text_escape.h"
#include "libshard/util/sha256.h"
#include "libshard/util/strings.h"
#include "store/http/http_object_store.h"
#include "store/http/http_text.h"
#include "store/s3/s3_error.h"
#include "store/s3/xml.h"

namespace libshard::store {
namespace {

// The hex SHA-256 of the empty string: the payload hash of a request without a body.
const std::string kEmptySha256 = util::Sha256Hex("");

// "?a=1&b=2": sorted by name, names and values encoded (libcurl 7.88 signs
// the query as sent, so it must already be canonical: "uploads=", not "uploads").
std::string Query(const std::map<std::string, std::string>& params) {
  std::string q;
  for (const auto& [k, v] : params)
    q += (q.empty() ? "?" : "&") + PercentEncode(k, false) + "=" + PercentEncode(v, false);
  return q;
}

class S3Store : public HttpObjectStore {
 public:
  S3Store(const StoreConfig& config, std::string bucket, std::shared_ptr<HttpTransport> transport)
      : HttpObjectStore(config.retry, std::move(transport)), config_(config), bucket_(std::move(bucket)) {}

  std::string UrlOf(const std::string& key) const override { return "s3://" + JoinKey(bucket_, key); }
  std::string CacheName() const override {
    return "s3/" + (config_.endpoint.empty() ? std::string("aws") : HostFolder(config_.endpoint)) + "/" +
           FolderSafe(bucket_);
  }

  Status Put(const std::string& key, std::string_view bytes) override {
    HttpResponse r;
    return Call(
        "PUT", key, {}, {}, [&](HttpRequest* q) { q->body = bytes; }, &r, util::Sha256Hex(bytes));
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
      LIBSHARD_RETURN_IF_ERROR(Call("GET", "", query, {}, nullptr, &r, "", "LIST " + UrlOf(prefix)));
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
        if (!util::StartsWith(cur.key, prefix) && outside.empty()) outside = cur.key;
        out.push_back(std::move(cur));
        cur = ObjectInfo();
      };
      if (Status s = ParseXml(r.body, h); !s.ok()) return DataLossError(what + ": " + s.message());
      if (!outside.empty()) {
        return DataLossError(what + ": the server listed '" + outside + "', which is outside the prefix");
      }
      if (out.size() > config_.list_max_keys) {
        return ResourceExhaustedError(what + ": more than " + std::to_string(config_.list_max_keys) +
                                      " keys (the bound on one listing, StoreConfig::list_max_keys)");
      }
      if (!truncated || next.empty()) break;
      if (!tokens.insert(next).second) {
        return DataLossError(what + ": the server sent continuation token '" + next + "' again (page " +
                             std::to_string(page + 1) + "): the listing would never end");
      }
      if (page >= config_.list_max_pages) {
        return ResourceExhaustedError(what + ": more than " + std::to_string(config_.list_max_pages) +
                                      " pages (the bound on one listing, StoreConfig::list_max_pages)");
      }
      token = next;
    }
    std::sort(out.begin(), out.end(), [](const ObjectInfo& a, const ObjectInfo& b) { return a.key < b.key; });
    return out;
  }

 protected:
  std::string HttpUrl(const std::string& key, const QueryParams& query) const override {
    std::string url;
    if (config_.endpoint.empty()) {
      url = "https://" + bucket_ + ".s3." + config_.region + ".amazonaws.com/" + PercentEncode(key, true);
    } else {
      url = config_.endpoint + "/" + bucket_ + (key.empty() ? "" : "/" + PercentEncode(key, true));
    }
    return url + Query(query);
  }

  void Prepare(HttpRequest* q, const std::string& key, const QueryParams& query,
               const std::string& payload_sha256) const override {
    q->url = HttpUrl(key, query);
    q->headers.push_back("x-amz-content-sha256: " + (payload_sha256.empty() ? kEmptySha256 : payload_sha256));
    if (config_.access_key_id.empty()) return;  // anonymous
    if (!config_.session_token.empty()) q->headers.push_back("x-amz-security-token: " + config_.session_token);
    q->aws_sigv4 = "aws:amz:" + config_.region + ":s3";
    q->credentials = config_.access_key_id + ":" + config_.secret_access_key;
  }

 private:
  std::string ErrorCode(const HttpResponse& r) const override { return S3ErrorCode(r); }
  // NoSuchBucket says what to do: the bucket must exist before anything is written.
  std::string ErrorDetail(const HttpResponse& r) const override {
    std::string detail = S3ErrorMessage(r);
    if (ErrorCode(r) != "NoSuchBucket") return detail;
    return detail + (detail.empty() ? "" : " ") +
           "(the bucket must exist before anything is written to it; create it with `aws s3 mb s3://" + bucket_ +
           (config_.endpoint.empty() ? std::string() : " --endpoint-url " + config_.endpoint) + "`)";
  }
  bool FailedDespite2xx(const std::string& method, const HttpResponse& r) const override {
    return S3ErrorIn2xx(method, r);
  }

  // The x-amz-content-sha256 of a file's bytes going up. Over https the
  // bytes are not hashed: "UNSIGNED-PAYLOAD" (TLS already protects them in
  // transit, and the hash would be one more read of every byte; botocore
  // does the same). Over plain http nothing else would: the hex SHA-256, so
  // that the server refuses a body changed on the way.
  StatusOr<std::string> FilePayloadHash(int fd, uint64_t offset, uint64_t length) const {
    if (util::StartsWith(HttpUrl("", {}), "https://")) return std::string("UNSIGNED-PAYLOAD");
    util::Sha256Hasher h;
    std::string buf(static_cast<size_t>(std::min<uint64_t>(1 << 20, length)), '\0');
    for (uint64_t done = 0; done < length;) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), length - done));
      const int64_t got = io::PreadFull(fd, buf.data(), want, offset + done);
      if (got <= 0) return IOError("reading for the payload hash failed");
      h.Update(std::string_view(buf.data(), static_cast<size_t>(got)));
      done += static_cast<uint64_t>(got);
    }
    return h.HexDigest();
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
      HttpResponse r;
      result = Call(
          "POST", key, {{"uploadId", upload_id}}, {"Content-Type: application/xml"},
          [&](HttpRequest* q) { q->body = body; }, &r, util::Sha256Hex(body));
    }
    if (!result.ok()) {
      // Abort: the parts uploaded so far are dropped by the server. Its own
      // failure is reported beside the first one, never instead of it.
      HttpResponse r;
      Status abort = Call("DELETE", key, {{"uploadId", upload_id}}, {}, nullptr, &r);
      if (!abort.ok() && abort.code() != StatusCode::kNotFound) {
        return Status(result.code(),
                      result.message() + "; aborting the multipart upload failed too: " + abort.message());
      }
    }
    return result;
  }

  const StoreConfig config_;
  const std::string bucket_;
};

}  // namespace

std::unique_ptr<ObjectStore> NewS3Store(const StoreConfig& config, const std::string& bucket,
                                        std::shared_ptr<HttpTransport> transport) {
  return std::make_unique<S3Store>(config, bucket, std::move(transport));
}

}  // namespace libshard::store

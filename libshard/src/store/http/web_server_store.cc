// The web-server store: a read-only https:// (or http://) server whose
// keys are paths below a base URL; the reads and retries are HttpObjectStore's.
#include "libshard/store/web_server_store.h"
#include "store/http/http_object_store.h"
#include "store/http/http_text.h"
#include "store/s3/s3_error.h"

namespace libshard::store {
namespace {

class WebServerStore : public HttpObjectStore {
 public:
  WebServerStore(std::string base, const RetryOptions& retry, std::shared_ptr<HttpTransport> transport)
      : HttpObjectStore(retry, std::move(transport)), base_(std::move(base)) {}

  std::string UrlOf(const std::string& key) const override { return base_ + "/" + key; }
  std::string CacheName() const override { return "https/" + HostFolder(base_); }

  Status Put(const std::string& key, std::string_view) override { return ReadOnly("PUT", key); }
  Status PutFile(const std::string& key, const std::string&, const PutOptions&) override {
    return ReadOnly("PUT", key);
  }
  StatusOr<std::vector<ObjectInfo>> List(const std::string& prefix) override { return ReadOnly("LIST", prefix); }

 protected:
  std::string HttpUrl(const std::string& key, const QueryParams&) const override {
    return base_ + "/" + PercentEncode(key, true);
  }
  void Prepare(HttpRequest* q, const std::string& key, const QueryParams& query, const std::string&) const override {
    q->url = HttpUrl(key, query);
  }
  // A bucket read over https:// answers with S3's error documents.
  std::string ErrorCode(const HttpResponse& r) const override { return S3ErrorCode(r); }
  std::string ErrorDetail(const HttpResponse& r) const override { return S3ErrorMessage(r); }

 private:
  Status ReadOnly(const std::string& op, const std::string& key) const {
    return UnimplementedError(op + " " + UrlOf(key) + ": https:// locations are read-only (use s3:// to write)");
  }
  const std::string base_;
};

}  // namespace

std::unique_ptr<ObjectStore> NewWebServerStore(const std::string& base, const RetryOptions& retry,
                                               std::shared_ptr<HttpTransport> transport) {
  return std::make_unique<WebServerStore>(base, retry, std::move(transport));
}

}  // namespace libshard::store

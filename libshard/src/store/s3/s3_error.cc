#include "store/s3/s3_error.h"

#include "store/http/retry_policy.h"
#include "store/s3/xml.h"

namespace libshard::store {

std::string S3ErrorCode(const HttpResponse& r) {
  std::string code = XmlText(r.body, "Error/Code");
  if (code.empty()) code = ReasonPhrase(r.status);
  return code;
}

std::string S3ErrorMessage(const HttpResponse& r) { return XmlText(r.body, "Error/Message"); }

bool S3ErrorIn2xx(const std::string& method, const HttpResponse& r) {
  return method == "POST" && r.body.find("<Error>") != std::string::npos && !XmlText(r.body, "Error/Code").empty();
}

}  // namespace libshard::store

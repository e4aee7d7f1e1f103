// Fuzzes the S3 XML reader (store/s3/xml.h): a server's error documents,
// LIST pages and multipart answers are bytes from outside. ParseXml must
// never crash or hang; every path it reports is a non-empty chain of element
// names, and XmlText agrees with what ParseXml reported first.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "store/s3/xml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace store = libshard::store;
  const std::string_view xml(reinterpret_cast<const char*>(data), size);
  std::string first_path, first_text;
  bool seen = false;
  store::XmlHandler h;
  h.on_text = [&](const std::string& path, const std::string& text) {
    if (path.empty() || path.front() == '/' || path.back() == '/') std::abort();
    if (!seen) first_path = path, first_text = text, seen = true;
  };
  h.on_end = [&](const std::string& path) {
    if (path.empty()) std::abort();
  };
  const libshard::Status s = store::ParseXml(xml, h);
  if (!s.ok() && s.code() != libshard::StatusCode::kDataLoss) std::abort();
  if (s.ok() && seen && store::XmlText(xml, first_path) != first_text) std::abort();
  return 0;
}

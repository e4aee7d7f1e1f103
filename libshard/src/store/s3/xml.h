// The few S3 XML documents the store reads (errors, LIST pages, multipart
// upload ids), parsed with expat: each element's text is handed over with
// its path of element names ("ListBucketResult/Contents/Key").
#ifndef LIBSHARD_SRC_STORE_S3_XML_H_
#define LIBSHARD_SRC_STORE_S3_XML_H_

#include <functional>
#include <string>
#include <string_view>

#include "libshard/status.h"

namespace libshard::store {

struct XmlHandler {
  // An element's text (entities decoded), when the element ends.
  std::function<void(const std::string& path, const std::string& text)> on_text;
  // After on_text: the element at `path` ended.
  std::function<void(const std::string& path)> on_end;
};

// DataLoss for a document expat refuses.
Status ParseXml(std::string_view xml, const XmlHandler& handler);

// The text of the first element at `path` ("" when absent or unparsable).
std::string XmlText(std::string_view xml, const std::string& path);

}  // namespace libshard::store

#endif  // LIBSHARD_SRC_STORE_S3_XML_H_

#include "store/s3/xml.h"

#include <expat.h>

#include <memory>
#include <vector>

namespace libshard::store {
namespace {

struct Parse {
  const XmlHandler* handler = nullptr;
  std::vector<size_t> ends;  // path length before each open element
  std::string path;
  std::string text;
};

void OnStart(void* user, const XML_Char* name, const XML_Char**) {
  auto* p = static_cast<Parse*>(user);
  p->ends.push_back(p->path.size());
  if (!p->path.empty()) p->path += '/';
  p->path += name;
  p->text.clear();
}

void OnEnd(void* user, const XML_Char*) {
  auto* p = static_cast<Parse*>(user);
  if (p->handler->on_text) p->handler->on_text(p->path, p->text);
  if (p->handler->on_end) p->handler->on_end(p->path);
  p->text.clear();
  p->path.resize(p->ends.back());
  p->ends.pop_back();
}

void OnChars(void* user, const XML_Char* s, int len) { static_cast<Parse*>(user)->text.append(s, len); }

}  // namespace

Status ParseXml(std::string_view xml, const XmlHandler& handler) {
  std::unique_ptr<XML_ParserStruct, void (*)(XML_Parser)> parser(XML_ParserCreate("UTF-8"), XML_ParserFree);
  if (!parser) return InternalError("XML_ParserCreate failed");
  Parse p;
  p.handler = &handler;
  XML_SetUserData(parser.get(), &p);
  XML_SetElementHandler(parser.get(), OnStart, OnEnd);
  XML_SetCharacterDataHandler(parser.get(), OnChars);
  if (XML_Parse(parser.get(), xml.data(), static_cast<int>(xml.size()), 1) == XML_STATUS_ERROR) {
    return DataLossError(std::string("malformed XML: ") + XML_ErrorString(XML_GetErrorCode(parser.get())) +
                         " at line " + std::to_string(XML_GetCurrentLineNumber(parser.get())));
  }
  return Status::OK();
}

std::string XmlText(std::string_view xml, const std::string& path) {
  std::string found;
  bool seen = false;
  XmlHandler h;
  h.on_text = [&](const std::string& p, const std::string& text) {
    if (!seen && p == path) {
      found = text;
      seen = true;
    }
  };
  (void)ParseXml(xml, h);
  return found;
}

}  // namespace libshard::store

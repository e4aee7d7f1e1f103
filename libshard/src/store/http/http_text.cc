#include "store/http/http_text.h"

#include <curl/curl.h>

#include <cctype>

namespace libshard::store {

std::string PercentEncode(std::string_view s, bool keep_slash) {
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

std::string Unquote(std::string s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

std::string FolderSafe(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  }
  return out;
}

std::string HostFolder(const std::string& url) {
  const size_t sep = url.find("://");
  std::string host = sep == std::string::npos ? url : url.substr(sep + 3);
  host = host.substr(0, host.find('/'));
  return FolderSafe(host.substr(host.find('@') == std::string::npos ? 0 : host.find('@') + 1));
}

std::string Printable(std::string_view s, size_t max) {
  std::string out(s.substr(0, max));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return s.size() > max ? out + "..." : out;
}

}  // namespace libshard::store

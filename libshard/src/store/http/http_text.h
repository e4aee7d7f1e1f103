// Small texts of HTTP requests and answers shared by the S3 and web-server
// stores: percent-encoding, ETag quotes, cache folder names, a server's
// header made printable.
//
// Thread-safety: pure.
#ifndef LIBSHARD_SRC_STORE_HTTP_HTTP_TEXT_H_
#define LIBSHARD_SRC_STORE_HTTP_HTTP_TEXT_H_

#include <string>
#include <string_view>

namespace libshard::store {

// Percent-encodes everything but A-Z a-z 0-9 - . _ ~ (SigV4's rule), and
// '/' too unless keep_slash.
std::string PercentEncode(std::string_view s, bool keep_slash);

// `s` without one pair of surrounding double quotes (an ETag).
std::string Unquote(std::string s);

// [A-Za-z0-9.-] kept, anything else '_': a folder name.
std::string FolderSafe(std::string_view s);

// "127.0.0.1_9000" from "http://127.0.0.1:9000" (user-info, which
// CheckEndpoint refuses, never kept).
std::string HostFolder(const std::string& url);

// At most `max` bytes of `s` (a server's header), control bytes as '?'.
std::string Printable(std::string_view s, size_t max);

}  // namespace libshard::store

#endif  // LIBSHARD_SRC_STORE_HTTP_HTTP_TEXT_H_

// SHA-256 as lower-case hex (OpenSSL's EVP digest): the content hash the
// converter writes as image/key/sha256 and the text of manifest plan ids.
//
//   std::string hex = libshard::util::Sha256Hex(bytes);  // 64 characters
//
// Thread-safety: pure.
#ifndef LIBSHARD_UTIL_SHA256_H_
#define LIBSHARD_UTIL_SHA256_H_

#include <string>
#include <string_view>

namespace libshard::util {

// The 64 lower-case hex digits of the SHA-256 of `bytes`.
std::string Sha256Hex(std::string_view bytes);
// The SHA-256 of head followed by tail (one digest of the concatenation,
// without building it): the leak check's pixel key, a shape line and the
// pixels. "" only when OpenSSL cannot allocate its context.
std::string Sha256Hex(std::string_view head, std::string_view tail);

}  // namespace libshard::util

#endif  // LIBSHARD_UTIL_SHA256_H_

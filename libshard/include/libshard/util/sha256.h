// SHA-256 as lower-case hex (OpenSSL's EVP digest): the content hash the
// converter writes as image/key/sha256 and the text of manifest plan ids.
//
//   std::string hex = libshard::util::Sha256Hex(bytes);  // 64 characters
//
// Thread-safety: pure.
#ifndef LIBSHARD_UTIL_SHA256_H_
#define LIBSHARD_UTIL_SHA256_H_

#include <memory>
#include <string>
#include <string_view>

namespace libshard::util {

// The 64 lower-case hex digits of the SHA-256 of `bytes`.
std::string Sha256Hex(std::string_view bytes);
// The SHA-256 of head followed by tail (one digest of the concatenation,
// without building it): the leak check's pixel key, a shape line and the
// pixels. "" only when OpenSSL cannot allocate its context.
std::string Sha256Hex(std::string_view head, std::string_view tail);

// The same digest over bytes that come in pieces (a file read in blocks):
//
//   util::Sha256Hasher h;
//   while (...) h.Update(block);
//   std::string hex = h.HexDigest();  // "" only when OpenSSL cannot allocate
//
// Not copyable; one object per digest (HexDigest ends it). Not thread-safe.
class Sha256Hasher {
 public:
  Sha256Hasher();
  ~Sha256Hasher();
  Sha256Hasher(const Sha256Hasher&) = delete;
  Sha256Hasher& operator=(const Sha256Hasher&) = delete;
  void Update(std::string_view bytes);
  std::string HexDigest();

 private:
  struct Context;
  std::unique_ptr<Context> ctx_;
};

}  // namespace libshard::util

#endif  // LIBSHARD_UTIL_SHA256_H_

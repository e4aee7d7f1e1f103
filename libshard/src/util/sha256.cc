#include "libshard/util/sha256.h"

#include <openssl/evp.h>

#include <memory>

namespace libshard::util {

struct Sha256Hasher::Context {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  bool ok = md != nullptr && EVP_DigestInit_ex(md, EVP_sha256(), nullptr) == 1;
  ~Context() { EVP_MD_CTX_free(md); }
};

Sha256Hasher::Sha256Hasher() : ctx_(std::make_unique<Context>()) {}
Sha256Hasher::~Sha256Hasher() = default;

void Sha256Hasher::Update(std::string_view bytes) {
  if (ctx_->ok && EVP_DigestUpdate(ctx_->md, bytes.data(), bytes.size()) != 1) ctx_->ok = false;
}

std::string Sha256Hasher::HexDigest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!ctx_->ok || EVP_DigestFinal_ex(ctx_->md, md, &len) != 1) {
    len = 0;  // only out of memory gets here: an empty text, never a wrong digest
  }
  ctx_->ok = false;
  static const char kHex[] = "0123456789abcdef";
  std::string hex(2 * len, '0');
  for (unsigned i = 0; i < len; ++i) {
    hex[2 * i] = kHex[md[i] >> 4];
    hex[2 * i + 1] = kHex[md[i] & 15];
  }
  return hex;
}

std::string Sha256Hex(std::string_view bytes) { return Sha256Hex(bytes, {}); }

std::string Sha256Hex(std::string_view head, std::string_view tail) {
  Sha256Hasher h;
  h.Update(head);
  h.Update(tail);
  return h.HexDigest();
}

}  // namespace libshard::util

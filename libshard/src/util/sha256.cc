#include "libshard/util/sha256.h"

#include <openssl/evp.h>

namespace libshard::util {

std::string Sha256Hex(std::string_view bytes) { return Sha256Hex(bytes, {}); }

std::string Sha256Hex(std::string_view head, std::string_view tail) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (ctx == nullptr || EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx, head.data(), head.size()) != 1 || EVP_DigestUpdate(ctx, tail.data(), tail.size()) != 1 ||
      EVP_DigestFinal_ex(ctx, md, &len) != 1) {
    len = 0;  // only out of memory gets here: an empty text, never a wrong digest
  }
  EVP_MD_CTX_free(ctx);
  static const char kHex[] = "0123456789abcdef";
  std::string hex(2 * len, '0');
  for (unsigned i = 0; i < len; ++i) {
    hex[2 * i] = kHex[md[i] >> 4];
    hex[2 * i + 1] = kHex[md[i] & 15];
  }
  return hex;
}

}  // namespace libshard::util

// Fuzzes the AWS profile parser (store/s3/aws_profile.h): ~/.aws/config and
// ~/.aws/credentials are files from outside. ParseAwsProfile must never
// crash; no section, key or value it returns spans a line or keeps the
// blanks around it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "store/s3/aws_profile.h"

namespace {

void CheckWord(const std::string& s) {
  if (s.find('\n') != std::string::npos) std::abort();
  if (!s.empty() &&
      (s.front() == ' ' || s.front() == '\t' || s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const libshard::store::AwsProfileFile ini = libshard::store::ParseAwsProfile(text);
  for (const auto& [section, settings] : ini) {
    CheckWord(section);
    for (const auto& [key, value] : settings) {
      CheckWord(key);
      CheckWord(value);
    }
  }
  return 0;
}

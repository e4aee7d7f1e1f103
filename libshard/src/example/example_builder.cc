#include "libshard/example/example_builder.h"

#include <cstring>

#include "libshard/text_escape.h"

namespace libshard::example {
namespace {

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// A length-delimited field: tag (field, wire type 2), length, payload.
void PutLenField(std::string* out, int field, std::string_view payload) {
  out->push_back(static_cast<char>((field << 3) | 2));
  PutVarint(out, payload.size());
  out->append(payload);
}

}  // namespace

bool IsValidFeatureKey(std::string_view key) { return IsValidUtf8(key); }

void ExampleBuilder::AddEntry(std::string_view key, int kind_field, const std::string& list) {
  std::string feature;
  PutLenField(&feature, kind_field, list);  // Feature.{bytes,float,int64}_list
  std::string entry;
  PutLenField(&entry, 1, key);      // map entry key
  PutLenField(&entry, 2, feature);  // map entry value
  PutLenField(&entries_, 1, entry);  // Features.feature
}

void ExampleBuilder::AddBytesList(std::string_view key, const std::vector<std::string_view>& values) {
  scratch_.clear();
  for (std::string_view v : values) PutLenField(&scratch_, 1, v);
  AddEntry(key, 1, scratch_);
}

void ExampleBuilder::AddInt64List(std::string_view key, const int64_t* values, size_t n) {
  std::string packed;
  for (size_t i = 0; i < n; ++i) PutVarint(&packed, static_cast<uint64_t>(values[i]));
  scratch_.clear();
  if (n > 0) PutLenField(&scratch_, 1, packed);
  AddEntry(key, 3, scratch_);
}

void ExampleBuilder::AddFloatList(std::string_view key, const float* values, size_t n) {
  std::string packed(n * 4, '\0');
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], 4);
    for (int b = 0; b < 4; ++b) packed[i * 4 + b] = static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  scratch_.clear();
  if (n > 0) PutLenField(&scratch_, 1, packed);
  AddEntry(key, 2, scratch_);
}

void ExampleBuilder::SerializeTo(std::string* out) const {
  if (entries_.empty()) {
    // An Example with an empty Features message, as TensorFlow writes it.
    PutLenField(out, 1, {});
    return;
  }
  PutLenField(out, 1, entries_);  // Example.features
}

std::string ExampleBuilder::Serialize() const {
  std::string out;
  SerializeTo(&out);
  return out;
}

}  // namespace libshard::example

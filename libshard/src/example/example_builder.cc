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

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// The size of a length-delimited field with a payload of `n` bytes.
size_t LenFieldSize(size_t n) { return 1 + VarintSize(n) + n; }

// Writes the header of a length-delimited field whose payload follows.
void PutLenHeader(std::string* out, int field, size_t n) {
  out->push_back(static_cast<char>((field << 3) | 2));
  PutVarint(out, n);
}

}  // namespace

bool IsValidFeatureKey(std::string_view key) { return IsValidUtf8(key); }

// Writes the headers of Features.feature { key, value: Feature { kind_field:
// list } } straight into entries_, for a list payload of `list_size` bytes
// that the caller appends next (no intermediate copies: a raw array's
// payload is large).
void ExampleBuilder::AddEntryHeader(std::string_view key, int kind_field, size_t list_size) {
  const size_t feature = LenFieldSize(list_size);                         // Feature.{bytes,float,int64}_list
  const size_t entry = LenFieldSize(key.size()) + LenFieldSize(feature);  // map entry key + value
  entries_.reserve(entries_.size() + LenFieldSize(entry));
  PutLenHeader(&entries_, 1, entry);    // Features.feature
  PutLenField(&entries_, 1, key);       // map entry key
  PutLenHeader(&entries_, 2, feature);  // map entry value
  PutLenHeader(&entries_, kind_field, list_size);
}

void ExampleBuilder::AddEntry(std::string_view key, int kind_field, const std::string& list) {
  AddEntryHeader(key, kind_field, list.size());
  entries_.append(list);
}

void ExampleBuilder::AddBytesList(std::string_view key, const std::vector<std::string_view>& values) {
  size_t list = 0;
  for (std::string_view v : values) list += LenFieldSize(v.size());
  AddEntryHeader(key, 1, list);
  for (std::string_view v : values) PutLenField(&entries_, 1, v);  // BytesList.value
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

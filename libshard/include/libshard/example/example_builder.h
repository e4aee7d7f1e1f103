// Builds a serialized tensorflow.Example directly, features in the order they
// are added, so the same inputs always give the same bytes (protobuf's own
// map serialization order is unspecified). The output parses with protobuf's
// tensorflow::Example and with ExampleView.
//
//   libshard::example::ExampleBuilder b;
//   b.AddBytes("image/encoded", jpeg);
//   b.AddInt64("image/class/label", 3);
//   std::string record = b.Serialize();
//
// Keys: any valid UTF-8 string, the empty one included (IsValidFeatureKey).
// tensorflow.Example's feature map key is a proto3 `string`, so protobuf,
// and with it TensorFlow, refuses to parse an Example holding a key that is
// not UTF-8; the builder does not check (libshard's keys are constants;
// check a key from outside with IsValidFeatureKey first); ExampleView refuses
// such an Example too. Adding a key twice writes two map entries (parsers keep the last).
// Thread-safety: not thread-safe; one builder per thread, reusable after Clear().
#ifndef LIBSHARD_EXAMPLE_EXAMPLE_BUILDER_H_
#define LIBSHARD_EXAMPLE_EXAMPLE_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace libshard::example {

// True when `key` can be a feature key that every parser accepts: valid UTF-8.
bool IsValidFeatureKey(std::string_view key);

class ExampleBuilder {
 public:
  void AddBytes(std::string_view key, std::string_view value) { AddBytesList(key, {value}); }
  void AddBytesList(std::string_view key, const std::vector<std::string_view>& values);
  void AddInt64(std::string_view key, int64_t value) { AddInt64List(key, &value, 1); }
  void AddInt64List(std::string_view key, const int64_t* values, size_t n);
  void AddFloat(std::string_view key, float value) { AddFloatList(key, &value, 1); }
  void AddFloatList(std::string_view key, const float* values, size_t n);

  // The serialized Example.
  std::string Serialize() const;
  // Appends the serialized Example to *out.
  void SerializeTo(std::string* out) const;
  void Clear() { entries_.clear(); }

 private:
  void AddEntryHeader(std::string_view key, int kind_field, size_t list_size);
  void AddEntry(std::string_view key, int kind_field, const std::string& list);
  std::string entries_;  // serialized Features map entries (field 1, length-delimited)
  std::string scratch_;
};

}  // namespace libshard::example

#endif  // LIBSHARD_EXAMPLE_EXAMPLE_BUILDER_H_

// A zero-copy view of a serialized tensorflow.Example (tf.train.Example) for
// the hot path: look up a feature by key and read its bytes / int64 / float
// values straight from the record bytes, without allocating.
//
//   LIBSHARD_ASSIGN_OR_RETURN(auto ex, libshard::example::ExampleView::Parse(record));
//   libshard::example::FeatureView image, label;
//   if (ex.Find("image/encoded", &image) && image.kind() == FeatureKind::kBytes)
//     Decode(image.bytes(0));
//   if (ex.Find("image/class/label", &label)) y = label.int64(0);
//
// Semantics match protobuf's parser: fields may come in any order; unknown
// fields (and groups) at every level are skipped; packed and unpacked lists
// are both accepted; when a key appears more than once the last entry wins;
// repeated occurrences of a message merge (values of the same list kind are
// concatenated, a different kind replaces). Map keys must be valid UTF-8, as
// proto3 requires.
//
// Lifetime: views point into the record bytes, which must outlive them.
// Thread-safety: views are immutable values; use freely from many threads.
#ifndef LIBSHARD_EXAMPLE_EXAMPLE_VIEW_H_
#define LIBSHARD_EXAMPLE_EXAMPLE_VIEW_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "libshard/status.h"

namespace libshard::example {

enum class FeatureKind { kNone = 0, kBytes = 1, kFloat = 2, kInt64 = 3 };

// "bytes_list", "float_list", "int64_list" or "none".
const char* FeatureKindName(FeatureKind kind);

class FeatureView {
 public:
  FeatureView() = default;

  // kNone for a Feature with no list set (an empty tf.train.Feature()).
  FeatureKind kind() const { return kind_; }
  // Number of values in the list.
  size_t size() const { return size_; }

  // The i-th value; i < size() (out of range gives "" / 0). O(i) for bytes
  // and int64 (varints), O(1) for packed floats in one run.
  std::string_view bytes(size_t i) const;
  int64_t int64(size_t i) const;
  float float_value(size_t i) const;

  // Copies up to `cap` values into `out`; returns size(). Wrong kind: 0.
  size_t CopyInt64s(int64_t* out, size_t cap) const;
  size_t CopyFloats(float* out, size_t cap) const;

  // Calls fn(std::string_view) for each bytes value, in order.
  template <typename Fn>
  void ForEachBytes(Fn&& fn) const {
    VisitBytes([](void* ctx, std::string_view v) { (*static_cast<Fn*>(ctx))(v); }, &fn);
  }
  void VisitBytes(void (*cb)(void* ctx, std::string_view value), void* ctx) const;

 private:
  friend class ExampleView;
  struct Access;  // implementation helpers in example_view.cc
  friend struct Access;
  void Init(std::string_view entry);

  std::string_view entry_;  // the map entry: key + one or more Feature payloads
  FeatureKind kind_ = FeatureKind::kNone;
  size_t size_ = 0;
  // Where the lists of the winning kind start: the Feature payload (by its
  // offset in entry_) and the offset within it.
  size_t start_feature_ = 0;
  size_t start_inner_ = 0;
};

class ExampleView {
 public:
  // Checks the wire format of the whole Example, down to the value lists.
  // A malformed record is DataLoss naming what is wrong and the byte offset
  // within the record.
  static StatusOr<ExampleView> Parse(std::string_view record);

  // Finds the feature with `key`; false if absent.
  bool Find(std::string_view key, FeatureView* out) const;

  // Calls fn(std::string_view key, const FeatureView&) for every map entry in
  // wire order (a duplicated key is visited once per entry).
  template <typename Fn>
  void ForEachFeature(Fn&& fn) const {
    VisitFeatures([](void* ctx, std::string_view key, const FeatureView& f) { (*static_cast<Fn*>(ctx))(key, f); }, &fn);
  }
  void VisitFeatures(void (*cb)(void* ctx, std::string_view key, const FeatureView& f), void* ctx) const;

  // Number of map entries (duplicates counted).
  size_t entry_count() const { return entries_; }
  std::string_view record() const { return record_; }

 private:
  std::string_view record_;
  size_t entries_ = 0;
};

}  // namespace libshard::example

#endif  // LIBSHARD_EXAMPLE_EXAMPLE_VIEW_H_

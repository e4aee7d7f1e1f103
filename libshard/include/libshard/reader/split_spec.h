// The split string of a manifest source (DatasetOptions::split): which split
// and, in TensorFlow Datasets' slicing syntax, which part of it.
//
//   "train"            the split
//   "train[:10%]"      its first 10 percent      "train[10%:]"   the rest
//   "val[:500]"        its first 500 samples     "train[100:200]" samples 100..199
//   "train[-10%:]"     its last 10 percent       "train[25%:75%]" the middle half
//   "*[:1000]"         the first 1000 of all splits (in manifest order)
//   "[:10%]"           a slice of a manifest's only split
//
// A slice is of the split's samples in manifest order (shards in order,
// records in file order), taken before any shuffle, so it is the same set on
// every run, rank and worker. FROM and TO are both sample numbers (integers)
// or both percentages (decimals allowed, "12.5%"), each optional, negative
// counting from the end; [FROM:TO) as Python's slice. Percentages become
// sample numbers as TFDS's default ("closest") rounding does: round(p * n /
// 100) to the nearest integer, halves to even. As in TFDS, a boundary
// beyond the split (|FROM| or |TO| > n samples, a percentage outside
// -100..100) is an error rather than clipped; so is a slice that selects no
// sample.
//
//   LIBSHARD_ASSIGN_OR_RETURN(SplitSpec spec, ParseSplitSpec("train[:10%]"));
//   LIBSHARD_ASSIGN_OR_RETURN(SampleRange r, ResolveSlice(spec, 1000));  // [0, 100)
//
// Errors: InvalidArgument naming the split string: bad syntax (an unclosed
// bracket, one index "train[5]", a step, mixed units "train[10%:500]", TFDS's
// shard unit or "+" unions, which this reader does not take), and at
// ResolveSlice() a boundary out of range or an empty slice.
// Thread-safety: pure functions.
#ifndef LIBSHARD_READER_SPLIT_SPEC_H_
#define LIBSHARD_READER_SPLIT_SPEC_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "libshard/status.h"

namespace libshard::reader {

// One boundary of a slice as written.
struct SliceBound {
  bool set = false;      // false: omitted (the split's start, or its end)
  bool percent = false;  // a percentage (value) or a sample number (index)
  double value = 0;      // percent: -100..100
  int64_t index = 0;     // sample number, negative from the end
};

struct SplitSpec {
  std::string text;  // as given, for messages
  // The split's name: "" (the manifest's only split) or "*" (all splits).
  std::string name;
  bool sliced = false;
  SliceBound from, to;
};

// Parses `text` (see the file comment); "" and "*" are unsliced.
StatusOr<SplitSpec> ParseSplitSpec(std::string_view text);

// Samples [begin, end) of a selection of `n` samples.
struct SampleRange {
  uint64_t begin = 0;
  uint64_t end = 0;
};

// The samples of `n` that `spec` selects: [0, n) when unsliced.
// InvalidArgument naming the split string and n when a boundary is beyond
// the split or the slice is empty (see the file comment).
StatusOr<SampleRange> ResolveSlice(const SplitSpec& spec, uint64_t n);

}  // namespace libshard::reader

#endif  // LIBSHARD_READER_SPLIT_SPEC_H_

// RecordOffsets: a shard's record table held in as few bytes as it can be --
// where each record starts, 4 bytes a record for a file under 4 GiB (8 past
// it), instead of an IndexEntry's 16: the records of a TFRecord file are
// contiguous, so record i's framed size is where record i + 1 starts less
// where it starts (the last ends at the file's end). A reader keeps one per
// open shard for its life, in every process that reads: at 10^7 records that
// is 40 MB a process instead of 160 MB (issue 44).
//
//   LIBSHARD_ASSIGN_OR_RETURN(RecordOffsets t, RecordOffsets::FromEntries(entries, file_size));
//   IndexEntry e = t.entry(i);   // the same as entries[i]
//
// Thread-safety: immutable after construction; const methods from any thread.
#ifndef LIBSHARD_RECORD_RECORD_OFFSETS_H_
#define LIBSHARD_RECORD_RECORD_OFFSETS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "libshard/record/index.h"
#include "libshard/status.h"

namespace libshard::record {

class RecordOffsets {
 public:
  RecordOffsets() = default;
  // The table of `entries`, which must tile [0, file_size) in order: the
  // first at 0, each where the one before ends, the last ending at
  // file_size (an empty table needs file_size 0). InvalidArgument naming the
  // first entry that does not (its index and offset) otherwise.
  static StatusOr<RecordOffsets> FromEntries(const std::vector<IndexEntry>& entries, uint64_t file_size);

  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  // Record i (< size()): its offset and framed size.
  IndexEntry entry(size_t i) const {
    const uint64_t begin = Start(i);
    return {begin, Start(i + 1) - begin};
  }
  // Bytes the table holds: 4 or 8 a record, plus one more offset.
  size_t memory_bytes() const { return narrow_.size() * 4 + wide_.size() * 8; }

 private:
  // Where record i starts; Start(size()) is the file's end.
  uint64_t Start(size_t i) const { return wide_.empty() ? narrow_[i] : wide_[i]; }
  size_t n_ = 0;
  std::vector<uint32_t> narrow_;  // files under 4 GiB: n + 1 offsets
  std::vector<uint64_t> wide_;    // else
};

}  // namespace libshard::record

#endif  // LIBSHARD_RECORD_RECORD_OFFSETS_H_

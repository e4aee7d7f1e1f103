// Index files compatible with NVIDIA DALI's tfrecord2idx: a text file with
// one line per record, "<offset> <size>\n", where offset is where the record's
// header starts and size is the whole framed record (data + 16 bytes), both
// in decimal. An index is named after its shard: "<shard>.idx".
//
// Unlike tfrecord2idx, BuildIndex() checks every CRC and refuses a truncated
// or corrupt file instead of indexing it.
//
// Thread-safety: all functions are pure or touch only the named files.
#ifndef LIBSHARD_RECORD_INDEX_H_
#define LIBSHARD_RECORD_INDEX_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/record/record_reader.h"
#include "libshard/status.h"

namespace libshard::record {

struct IndexEntry {
  uint64_t offset = 0;
  uint64_t size = 0;  // framed size
  friend bool operator==(const IndexEntry& a, const IndexEntry& b) { return a.offset == b.offset && a.size == b.size; }
};

// "<shard>.idx"
std::string IndexPathFor(const std::string& shard_path);

// "offset size\n"
std::string FormatIndexLine(const IndexEntry& entry);
std::string FormatIndex(const std::vector<IndexEntry>& entries);

// Parses index text. Malformed lines are InvalidArgument naming the line.
StatusOr<std::vector<IndexEntry>> ParseIndex(std::string_view text);

// Walks the framing of a whole shard, checking every CRC. A truncated or
// corrupt shard gives DataLoss naming the offset.
StatusOr<std::vector<IndexEntry>> BuildIndex(std::string_view shard, const ReaderOptions& options = {});

// The first difference between an index and the records of its shard.
struct IndexMismatch {
  enum class Kind {
    kEntryDiffers,      // entry `entry` is not record `entry` (stated vs actual)
    kRecordNotIndexed,  // record `entry` (actual) is past the index's last line
    kEntryPastEnd,      // entry `entry` (stated) is past the shard's last record
  };
  Kind kind = Kind::kEntryDiffers;
  uint64_t entry = 0;    // 0-based: the record number, the index line minus one
  IndexEntry stated;     // the index's line (kEntryDiffers, kEntryPastEnd)
  IndexEntry actual;     // the record (kEntryDiffers, kRecordNotIndexed)
  uint64_t lines = 0;    // lines in the index
  uint64_t records = 0;  // records walked (kEntryPastEnd: all of them)
};

// "NAME line 2: says \"20 317\", but record 1 is \"20 316\"", "NAME has 1
// lines, but the shard has more records: record 1 at byte 21 is not indexed
// (stale index?)", "NAME line 5: entry \"... \" is past the last record (the
// shard has 4 records, the index 5 lines)". NAME is how the caller calls the
// index ("index", "a.tfrecord.idx").
std::string IndexMismatchMessage(const IndexMismatch& m, std::string_view name);

// The one index-vs-shard comparison: fed the records of a shard in order
// (offset and framed size), it keeps the first difference from `entries`.
// Used by CheckIndex, CheckIndexAgainst and `shard verify`. `entries` must
// outlive the matcher. Not thread-safe.
class IndexMatcher {
 public:
  explicit IndexMatcher(const std::vector<IndexEntry>& entries) : entries_(&entries) {}
  // Record number `records()` starts at `offset` and is `framed_size` bytes.
  // False once a difference is found (later records change nothing).
  bool OnRecord(uint64_t offset, uint64_t framed_size);
  // After the last record: the first difference, if any.
  std::optional<IndexMismatch> Finish();
  uint64_t records() const { return records_; }

 private:
  const std::vector<IndexEntry>* entries_;
  uint64_t records_ = 0;
  std::optional<IndexMismatch> mismatch_;
};

// Checks that `entries` describe exactly the records of `shard` (same count,
// offsets and sizes). Checks framing (length CRCs) but not data CRCs: damage
// is DataLoss naming the offset; FailedPrecondition names the first mismatch
// (IndexMismatchMessage, NAME "index").
Status CheckIndex(std::string_view shard, const std::vector<IndexEntry>& entries);

// The checks an index allows without reading its shard: entries contiguous
// from byte 0 to `file_size`, each at least a framed empty record and within
// `max_record_length`. FailedPrecondition naming the first bad entry.
Status CheckIndexCoversFile(const std::vector<IndexEntry>& entries, uint64_t file_size, uint64_t max_record_length);

// BuildIndex of the file at `path`, read as a stream with read(2) (no
// mapping: a file shrinking meanwhile is DataLoss, never SIGBUS; regular
// files only). A gzip/zlib file is InvalidArgument "PATH: is gzip-compressed;
// an index addresses uncompressed records, ...". Messages name the file.
StatusOr<std::vector<IndexEntry>> BuildIndexOfFile(const std::string& path, const ReaderOptions& options = {});

// CheckIndex of `entries` against the index `actual` of a shard that was
// walked already (BuildIndexOfFile), with the same messages.
Status CheckIndexAgainst(const std::vector<IndexEntry>& actual, const std::vector<IndexEntry>& entries);

}  // namespace libshard::record

#endif  // LIBSHARD_RECORD_INDEX_H_

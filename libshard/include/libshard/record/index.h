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
#include <string>
#include <string_view>
#include <vector>

#include "libshard/record/record_reader.h"
#include "libshard/status.h"

namespace libshard::record {

struct IndexEntry {
  uint64_t offset = 0;
  uint64_t size = 0;  // framed size
  friend bool operator==(const IndexEntry& a, const IndexEntry& b) {
    return a.offset == b.offset && a.size == b.size;
  }
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

// Checks that `entries` describe exactly the records of `shard` (same count,
// offsets and sizes, contiguous, ending at the file's end). Checks framing
// (length CRCs) but not data CRCs. FailedPrecondition names the first mismatch.
Status CheckIndex(std::string_view shard, const std::vector<IndexEntry>& entries);

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

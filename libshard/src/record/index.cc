#include "libshard/record/index.h"

#include <algorithm>
#include <charconv>

#include "libshard/record/stream_reader.h"

namespace libshard::record {

std::string IndexPathFor(const std::string& shard_path) { return shard_path + ".idx"; }

std::string FormatIndexLine(const IndexEntry& entry) {
  std::string line = std::to_string(entry.offset);
  line += ' ';
  line += std::to_string(entry.size);
  line += '\n';
  return line;
}

std::string FormatIndex(const std::vector<IndexEntry>& entries) {
  std::string out;
  for (const auto& e : entries) out += FormatIndexLine(e);
  return out;
}

namespace {
bool ParseU64(std::string_view s, uint64_t* v) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && ptr == s.data() + s.size();
}
}  // namespace

StatusOr<std::vector<IndexEntry>> ParseIndex(std::string_view text) {
  std::vector<IndexEntry> entries;
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t sp = line.find(' ');
    IndexEntry e;
    if (sp == std::string_view::npos || !ParseU64(line.substr(0, sp), &e.offset) ||
        !ParseU64(line.substr(sp + 1), &e.size)) {
      return InvalidArgumentError("index line " + std::to_string(line_no) +
                                  ": expected \"<offset> <size>\", got \"" +
                                  std::string(line.substr(0, 64)) + "\"");
    }
    entries.push_back(e);
  }
  return entries;
}

StatusOr<std::vector<IndexEntry>> BuildIndex(std::string_view shard, const ReaderOptions& options) {
  std::vector<IndexEntry> entries;
  RecordReader reader(shard, options);
  RecordView rec;
  Status s;
  while ((s = reader.Next(&rec)).ok()) entries.push_back({rec.offset, rec.framed_size()});
  if (s.code() != StatusCode::kOutOfRange) return s;
  return entries;
}

namespace {

// The checks of CheckIndex, given `framed_size_at(offset)`: the framed size
// of the record starting at `offset`, 0 at the end of the shard, or the
// framing fault there.
template <typename FramedSizeAt>
Status CheckEntries(const std::vector<IndexEntry>& entries, uint64_t shard_size, FramedSizeAt framed_size_at) {
  uint64_t expected_offset = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const IndexEntry& e = entries[i];
    const std::string where = "index entry " + std::to_string(i) + " (line " + std::to_string(i + 1) + ")";
    if (e.offset != expected_offset) {
      return FailedPreconditionError(where + ": offset " + std::to_string(e.offset) +
                                     ", but the record starts at byte " +
                                     std::to_string(expected_offset));
    }
    StatusOr<uint64_t> size = framed_size_at(e.offset);
    if (!size.ok()) return size.status();
    if (*size == 0) {
      return FailedPreconditionError(where + ": offset " + std::to_string(e.offset) +
                                     " is past the end of the shard (" + std::to_string(shard_size) + " bytes)");
    }
    if (*size != e.size) {
      return FailedPreconditionError(where + ": size " + std::to_string(e.size) +
                                     ", but the record at byte " + std::to_string(e.offset) +
                                     " is " + std::to_string(*size) + " bytes");
    }
    expected_offset = e.offset + *size;
  }
  if (expected_offset != shard_size) {
    return FailedPreconditionError("index has " + std::to_string(entries.size()) +
                                   " entries ending at byte " + std::to_string(expected_offset) +
                                   ", but the shard has more records (" +
                                   std::to_string(shard_size) + " bytes)");
  }
  return Status::OK();
}

}  // namespace

Status CheckIndex(std::string_view shard, const std::vector<IndexEntry>& entries) {
  ReaderOptions options;
  options.verify_data_crc = false;
  return CheckEntries(entries, shard.size(), [&](uint64_t offset) -> StatusOr<uint64_t> {
    RecordView rec;
    const RecordFault fault = DecodeRecordAt(shard, offset, options, &rec);
    if (fault == RecordFault::kEndOfData) return uint64_t{0};
    if (fault != RecordFault::kNone) return FaultStatus(fault, shard, offset, options);
    return rec.framed_size();
  });
}

StatusOr<std::vector<IndexEntry>> BuildIndexOfFile(const std::string& path, const ReaderOptions& options) {
  LIBSHARD_ASSIGN_OR_RETURN(auto reader, RecordStreamReader::Open(path, Compression::kAuto, options));
  if (reader->compression() != Compression::kNone) {
    return InvalidArgumentError(path + ": is " + CompressionName(reader->compression()) +
                                "-compressed; an index addresses uncompressed records, so decompress it first");
  }
  std::vector<IndexEntry> entries;
  RecordView rec;
  Status s;
  while ((s = reader->Next(&rec)).ok()) entries.push_back({rec.offset, rec.framed_size()});
  if (s.code() != StatusCode::kOutOfRange) return s;
  return entries;
}

Status CheckIndexAgainst(const std::vector<IndexEntry>& actual, const std::vector<IndexEntry>& entries) {
  const uint64_t shard_size = actual.empty() ? 0 : actual.back().offset + actual.back().size;
  return CheckEntries(entries, shard_size, [&](uint64_t offset) -> StatusOr<uint64_t> {
    auto it = std::lower_bound(actual.begin(), actual.end(), offset,
                               [](const IndexEntry& e, uint64_t o) { return e.offset < o; });
    if (it == actual.end() || it->offset != offset) return uint64_t{0};  // only the end is off the chain
    return it->size;
  });
}

}  // namespace libshard::record

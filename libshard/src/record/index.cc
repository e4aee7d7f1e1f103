#include "libshard/record/index.h"

#include <charconv>

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

Status CheckIndex(std::string_view shard, const std::vector<IndexEntry>& entries) {
  ReaderOptions options;
  options.verify_data_crc = false;
  uint64_t expected_offset = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const IndexEntry& e = entries[i];
    const std::string where = "index entry " + std::to_string(i) + " (line " + std::to_string(i + 1) + ")";
    if (e.offset != expected_offset) {
      return FailedPreconditionError(where + ": offset " + std::to_string(e.offset) +
                                     ", but the record starts at byte " +
                                     std::to_string(expected_offset));
    }
    RecordView rec;
    RecordFault fault = DecodeRecordAt(shard, e.offset, options, &rec);
    if (fault == RecordFault::kEndOfData) {
      return FailedPreconditionError(where + ": offset " + std::to_string(e.offset) +
                                     " is past the end of the shard (" +
                                     std::to_string(shard.size()) + " bytes)");
    }
    if (fault != RecordFault::kNone) return FaultStatus(fault, shard, e.offset, options);
    if (rec.framed_size() != e.size) {
      return FailedPreconditionError(where + ": size " + std::to_string(e.size) +
                                     ", but the record at byte " + std::to_string(e.offset) +
                                     " is " + std::to_string(rec.framed_size()) + " bytes");
    }
    expected_offset = rec.end_offset();
  }
  if (expected_offset != shard.size()) {
    return FailedPreconditionError("index has " + std::to_string(entries.size()) +
                                   " entries ending at byte " + std::to_string(expected_offset) +
                                   ", but the shard has more records (" +
                                   std::to_string(shard.size()) + " bytes)");
  }
  return Status::OK();
}

}  // namespace libshard::record

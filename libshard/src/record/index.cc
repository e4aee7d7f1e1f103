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
      return InvalidArgumentError("index line " + std::to_string(line_no) + ": expected \"<offset> <size>\", got \"" +
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

std::string IndexMismatchMessage(const IndexMismatch& m, std::string_view name) {
  auto pair = [](const IndexEntry& e) { return "\"" + std::to_string(e.offset) + " " + std::to_string(e.size) + "\""; };
  const std::string n(name);
  switch (m.kind) {
    case IndexMismatch::Kind::kEntryDiffers:
      return n + " line " + std::to_string(m.entry + 1) + ": says " + pair(m.stated) + ", but record " +
             std::to_string(m.entry) + " is " + pair(m.actual);
    case IndexMismatch::Kind::kRecordNotIndexed:
      return n + " has " + std::to_string(m.lines) + " lines, but the shard has more records: record " +
             std::to_string(m.entry) + " at byte " + std::to_string(m.actual.offset) + " is not indexed (stale index?)";
    case IndexMismatch::Kind::kEntryPastEnd:
      return n + " line " + std::to_string(m.entry + 1) + ": entry " + pair(m.stated) +
             " is past the last record (the shard has " + std::to_string(m.records) + " records, the index " +
             std::to_string(m.lines) + " lines)";
  }
  return n + ": differs from the shard";
}

bool IndexMatcher::OnRecord(uint64_t offset, uint64_t framed_size) {
  if (mismatch_) return false;
  const uint64_t i = records_++;
  const IndexEntry actual{offset, framed_size};
  if (i >= entries_->size()) {
    mismatch_ = IndexMismatch{IndexMismatch::Kind::kRecordNotIndexed, i, {}, actual, entries_->size(), records_};
  } else if (!((*entries_)[i] == actual)) {
    mismatch_ =
        IndexMismatch{IndexMismatch::Kind::kEntryDiffers, i, (*entries_)[i], actual, entries_->size(), records_};
  }
  return !mismatch_;
}

std::optional<IndexMismatch> IndexMatcher::Finish() {
  if (!mismatch_ && records_ < entries_->size()) {
    mismatch_ = IndexMismatch{
        IndexMismatch::Kind::kEntryPastEnd, records_, (*entries_)[records_], {}, entries_->size(), records_};
  }
  return mismatch_;
}

Status CheckIndex(std::string_view shard, const std::vector<IndexEntry>& entries) {
  ReaderOptions options;
  options.verify_data_crc = false;
  IndexMatcher matcher(entries);
  RecordReader reader(shard, options);
  RecordView rec;
  Status s;
  while ((s = reader.Next(&rec)).ok()) {
    if (!matcher.OnRecord(rec.offset, rec.framed_size())) break;
  }
  if (!s.ok() && s.code() != StatusCode::kOutOfRange) return s;
  if (auto m = matcher.Finish()) return FailedPreconditionError(IndexMismatchMessage(*m, "index"));
  return Status::OK();
}

Status CheckIndexCoversFile(const std::vector<IndexEntry>& entries, uint64_t file_size, uint64_t max_record_length) {
  uint64_t expect = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const IndexEntry& e = entries[i];
    const std::string line = "line " + std::to_string(i + 1) + ": ";
    if (e.offset != expect || e.size < kFramingOverhead) {
      return FailedPreconditionError(line + "entry at byte " + std::to_string(e.offset) + " is not contiguous");
    }
    if (e.size - kFramingOverhead > max_record_length) {
      return FailedPreconditionError(line + "entry at byte " + std::to_string(e.offset) +
                                     " exceeds the record length limit");
    }
    expect = e.offset + e.size;
  }
  if (expect != file_size) {
    return FailedPreconditionError("index covers " + std::to_string(expect) + " bytes, the file has " +
                                   std::to_string(file_size));
  }
  return Status::OK();
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
  IndexMatcher matcher(entries);
  for (const IndexEntry& e : actual) {
    if (!matcher.OnRecord(e.offset, e.size)) break;
  }
  if (auto m = matcher.Finish()) return FailedPreconditionError(IndexMismatchMessage(*m, "index"));
  return Status::OK();
}

}  // namespace libshard::record

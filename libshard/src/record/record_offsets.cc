#include "libshard/record/record_offsets.h"

#include <string>

namespace libshard::record {

StatusOr<RecordOffsets> RecordOffsets::FromEntries(const std::vector<IndexEntry>& entries, uint64_t file_size) {
  uint64_t at = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const IndexEntry& e = entries[i];
    if (e.offset != at || e.size == 0 || e.size > file_size - e.offset) {
      return InvalidArgumentError("record table: entry " + std::to_string(i) + " at byte " +
                                  std::to_string(e.offset) + " (" + std::to_string(e.size) +
                                  " bytes) does not follow the one before, which ends at byte " + std::to_string(at) +
                                  ", within the file's " + std::to_string(file_size) + " bytes");
    }
    at += e.size;
  }
  if (at != file_size) {
    return InvalidArgumentError("record table: the records end at byte " + std::to_string(at) + ", the file at " +
                                std::to_string(file_size));
  }
  RecordOffsets t;
  t.n_ = entries.size();
  if (file_size <= UINT32_MAX) {
    t.narrow_.reserve(entries.size() + 1);
    for (const IndexEntry& e : entries) t.narrow_.push_back(static_cast<uint32_t>(e.offset));
    t.narrow_.push_back(static_cast<uint32_t>(file_size));
  } else {
    t.wide_.reserve(entries.size() + 1);
    for (const IndexEntry& e : entries) t.wide_.push_back(e.offset);
    t.wide_.push_back(file_size);
  }
  return t;
}

}  // namespace libshard::record

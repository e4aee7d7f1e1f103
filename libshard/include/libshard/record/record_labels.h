// The labels sidecar: every record's label of one shard, in record order, in
// a small binary file beside it ("<shard>.labels"), so that a sampler's
// class weights (reader/sample_labels.h) read one small file a shard instead
// of the whole dataset (issue 44). `shard convert` writes it with each shard
// and lists it in the manifest (ShardEntry.labels_file); `shard verify`
// checks it against the records.
//
// Layout (docs/formats.md, "The labels sidecar"), every number little-endian:
//   bytes 0-7    magic "LSLABELS"
//   byte  8      version, 1
//   byte  9      width W of a label: 1, 2, 4 or 8 bytes (the smallest that
//                holds every label of the file)
//   bytes 10-15  zero
//   bytes 16-23  N, the number of records
//   then         N labels, W bytes each, two's complement (-1: the record has
//                no label)
//   last 4 bytes CRC-32C (crc32c::Value, not masked) of every byte before it
// A shard of N records has a file of 28 + N * W bytes.
//
//   std::string bytes = FormatLabels(labels);                 // write it
//   LIBSHARD_ASSIGN_OR_RETURN(std::vector<int64_t> l, ParseLabels(bytes, path));
//
// Thread-safety: pure functions.
#ifndef LIBSHARD_RECORD_RECORD_LABELS_H_
#define LIBSHARD_RECORD_RECORD_LABELS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/status.h"

namespace libshard::record {

inline constexpr char kLabelsMagic[] = "LSLABELS";  // 8 bytes, no terminator written
inline constexpr uint8_t kLabelsVersion = 1;
inline constexpr size_t kLabelsHeaderBytes = 24;  // before the labels; 4 more after them

// "<shard>.labels"
std::string LabelsPathFor(const std::string& shard_path);

// The file's bytes for `labels` (one a record, -1 for none).
std::string FormatLabels(const std::vector<int64_t>& labels);

// The labels of a file's bytes, every part checked: DataLoss naming `name`
// and the byte offset for a wrong magic, version, width, reserved byte,
// size (the count and width must give the file's length exactly) or CRC.
StatusOr<std::vector<int64_t>> ParseLabels(std::string_view bytes, const std::string& name);

}  // namespace libshard::record

#endif  // LIBSHARD_RECORD_RECORD_LABELS_H_

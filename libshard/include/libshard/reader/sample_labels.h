// Every sample's label without decoding an image: what class-balanced
// sampling needs (torch's WeightedRandomSampler over libshard.torch's
// `targets`, as over torchvision's ImageFolder.targets).
//
//   LIBSHARD_ASSIGN_OR_RETURN(std::vector<int64_t> labels, ReadSampleLabels(*ds));
//   // labels[i]: the label a loader gives global sample i
//
// Where the labels come from: a shard that `shard convert` wrote has a
// labels sidecar beside it (record/record_labels.h, listed in its manifest
// as labels_file): its labels are read from that one small file (checked
// whole by its CRC-32C and against the shard's record count), a few bytes a
// record (docs/performance.md has the measured cost). Other shards (plain files,
// manifests written before issue 44, remote datasets, a label key other than
// the converter's) have no sidecar the reader trusts: neither the DALI .idx
// (offsets and sizes only) nor the manifest (per-class counts only) holds a
// sample's label, so each record is read once (its CRC checked, as a
// loader's reads are) and only its label feature is looked up in the Example
// view (example::ParseRecordLabel: the image-record contract's label rule,
// -1 for a record without one). No image is probed or decoded: a record
// whose image bytes are damaged still has its label. A mixture's merged
// label map is applied (Dataset::MapLabel), and a sliced split gives its
// slice's. Reading the records costs one sequential read of the dataset's
// bytes (a remote dataset's shards are downloaded into the cache, one at a
// time per thread, each let go once read) and no decode.
//
// Errors: a sidecar's (DataLoss naming the file and the byte offset, or its
// count against the shard's), the record reads' (DataLoss naming the shard
// and the record's byte offset; a remote shard's download errors), and a label
// of another kind than int64 (DataLoss naming the shard, record, offset and key). With
// several bad records, the one of the lowest sample number is reported.
// Thread-safety: reads `ds` from `threads` threads of its own (plain
// threads: usable in a fork child); `ds` must outlive the call.
#ifndef LIBSHARD_READER_SAMPLE_LABELS_H_
#define LIBSHARD_READER_SAMPLE_LABELS_H_

#include <cstdint>
#include <vector>

#include "libshard/reader/dataset.h"
#include "libshard/status.h"

namespace libshard::reader {

// One label per sample of `ds`, in sample order (ds.size() of them).
// `threads`: util::ThreadCount's meaning (0: one per core).
StatusOr<std::vector<int64_t>> ReadSampleLabels(const Dataset& ds, int threads = 0);

}  // namespace libshard::reader

#endif  // LIBSHARD_READER_SAMPLE_LABELS_H_

// What a manifest may say, checked once for every reader: the names it gives
// stay inside its folder (or key prefix), and its per-channel statistics are
// numbers that agree with the sums they are derived from. A manifest is
// input from outside (a bucket, a copied folder): the reader, verify, report
// and merge all go through these rules, so a name or a statistic one of them
// refuses is refused by all.
//
//   LIBSHARD_RETURN_IF_ERROR(manifest::CheckContents(m).WithContext(path));
//
// Errors: InvalidArgument, the message naming the split, the field and the
// value (never the manifest's own path: callers add it).
// Thread-safety: pure functions.
#ifndef LIBSHARD_MANIFEST_MANIFEST_CHECKS_H_
#define LIBSHARD_MANIFEST_MANIFEST_CHECKS_H_

#include <string>
#include <string_view>
#include <vector>

#include "libshard/manifest.pb.h"
#include "libshard/status.h"

namespace libshard::manifest {

// The one rule for a name a manifest gives (a shard's `file`, `index_file`
// or `labels_file`): a non-empty relative path with no NUL byte that, once "."
// and ".." are resolved as text, still starts inside the manifest's folder.
// "a/b.tfrecord" and "a/../b.tfrecord" pass; "../x", "a/../../x" and "/x"
// do not. Symbolic links are not followed (a local folder's own links are
// its owner's choice).
bool IsInsideFolder(std::string_view name);

// Statistics of one channel: `mean` and `std` finite, `std` >= 0, both 0
// when `count` is 0; with `sum_squares` present (every libshard manifest
// has it), `mean` within 1e-6 of sum / count and `std` within 1e-3 of the
// population std the sums give. "mean nan is not a finite number", "std -5
// is negative", "mean 12 disagrees with sum / count = 10.5", ...
Status CheckChannelStats(const ChannelStats& c);

// Every shard's `file` and companions (ShardCompanions; IsInsideFolder) and every split's
// channel statistics (CheckChannelStats): the first fault, as `split "train"
// lists "../x.tfrecord", outside the manifest's folder` or `split "train"
// channel 0: std -5 is negative`.
Status CheckContents(const Manifest& m);

// A file a shard's entry lists beside the shard itself: its name as the
// entry gives it (relative to its folder; unchecked: CheckContents), what it
// is in messages ("index", "labels") and the entry's field ("index_file",
// "labels_file").
struct ShardCompanion {
  std::string name;
  const char* what;
  const char* field;
};

// The companions of a shard, named once here for everything that copies,
// uploads, checks or deletes a shard's files: its DALI index, then its labels
// sidecar, those the entry has (an empty name is none).
std::vector<ShardCompanion> ShardCompanions(const ShardEntry& shard);

}  // namespace libshard::manifest

#endif  // LIBSHARD_MANIFEST_MANIFEST_CHECKS_H_

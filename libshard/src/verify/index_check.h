// The index check: a `<shard>.idx` (DALI `offset size` lines) compared with
// the records of a plain shard as the walk meets them, through the record
// module's IndexMatcher. At most one fault per index, held back until the
// walk ends: an index is compared only with intact framing. Private to the
// verifier.
#ifndef LIBSHARD_SRC_VERIFY_INDEX_CHECK_H_
#define LIBSHARD_SRC_VERIFY_INDEX_CHECK_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libshard/record/index.h"
#include "libshard/verify/verifier.h"

namespace libshard::verify::internal {

class IndexComparer {
 public:
  // An index that does not parse gives its fault at Finish(). `name` (the
  // index file) starts the fault's message.
  static IndexComparer Parse(std::string_view text, std::string name);

  // Each intact record, in file order.
  void OnRecord(uint64_t offset, uint64_t framed_size) {
    if (!fault_) matcher_->OnRecord(offset, framed_size);
  }
  // After the last record, which ended at byte `end`.
  std::optional<Fault> Finish(uint64_t end);

 private:
  std::unique_ptr<std::vector<record::IndexEntry>> entries_;  // stable address for the matcher
  std::unique_ptr<record::IndexMatcher> matcher_;
  std::string name_;
  std::optional<Fault> fault_;
};

// The index beside the plain shard at `path`, as a comparer; a fault in `r`
// when it cannot be read. nullptr when there is none (or options.check_index
// is off).
std::unique_ptr<IndexComparer> OpenIndex(const std::string& path, const VerifyOptions& options, FileResult* r);

// Adds the comparer's fault to `r` (beyond the cap: one at most), unless the
// framing is broken. `index` may be nullptr.
void FinishIndex(IndexComparer* index, FileResult* r);

}  // namespace libshard::verify::internal

#endif  // LIBSHARD_SRC_VERIFY_INDEX_CHECK_H_

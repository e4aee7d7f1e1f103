// `shard merge` of a local folder or of an s3:// prefix: what the program
// runs (convert/merge.h does the merge itself). A local folder is merged
// where it is. An s3://BUCKET/PREFIX is merged in place: only the task
// manifests (small objects) are fetched into a temporary folder
// (staging.h, removed with the MergeTarget), each shard object is checked
// where it is by its size and the CRC-32C recorded at upload (HEAD; an
// object without that metadata is streamed once through a CRC check, never
// stored), and once nothing is missing rejects.tsv, duplicates.tsv,
// label_map.pbtxt and manifest.json (the commit point, last) go up, each
// with its CRC-32C as metadata, as a conversion uploads them.
//
//   LIBSHARD_ASSIGN_OR_RETURN(auto target, remote::MergeTarget::Open("s3://bkt/ds"));
//   LIBSHARD_ASSIGN_OR_RETURN(convert::MergeResult r, target->Merge());
//   if (!r.problems.empty()) ...   // nothing written; each names its task or object
//
// Errors: Open's are what the location names: InvalidArgument for one that
// is neither a folder nor s3:// (https:// cannot be written), NotFound for
// a folder that is not there, and staging's (staging.h: the store's errors
// naming the object). Merge's are MergeTasks's (merge.h: NotFound for no
// task manifest in the folder or under the prefix) and, for s3://, IOError
// "uploading to URL: ..." (nothing is committed before manifest.json; a
// rerun redoes it); every message names the prefix's URLs, never the
// temporary folder.
// Thread-safety: one Merge at a time per target; MergeTasks holds the
// folder's lock.
#ifndef LIBSHARD_REMOTE_REMOTE_MERGE_H_
#define LIBSHARD_REMOTE_REMOTE_MERGE_H_

#include <memory>
#include <string>

#include "libshard/convert/merge.h"
#include "libshard/status.h"

namespace libshard::remote {

class StagedObjects;

class MergeTarget {
 public:
  ~MergeTarget();
  MergeTarget(const MergeTarget&) = delete;
  MergeTarget& operator=(const MergeTarget&) = delete;

  static StatusOr<std::unique_ptr<MergeTarget>> Open(const std::string& location);
  // The tasks merged (MergeResult::manifest_path and problems naming URLs
  // for s3://).
  StatusOr<convert::MergeResult> Merge();
  // The folder merged in: the location, or the temporary one of an s3://
  // prefix (its duplicates.tsv is the merge's, until the target goes away).
  const std::string& local() const { return local_; }
  bool remote() const { return staged_ != nullptr; }

 private:
  MergeTarget() = default;
  std::string location_;
  std::string local_;
  std::unique_ptr<StagedObjects> staged_;
};

}  // namespace libshard::remote

#endif  // LIBSHARD_REMOTE_REMOTE_MERGE_H_

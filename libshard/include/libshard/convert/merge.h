// Merging the outputs of a conversion split into tasks (`shard convert
// --num-tasks N --task-index I`, e.g. a Slurm array job) into one
// manifest.json, as `shard merge OUT` does.
//
// MergeTasks reads every OUT/manifest.task-IIIII-of-NNNNN.json, checks that
// all N tasks are there and were run with the same options, that every
// shard they list is present and complete (size and whole-file CRC-32C as
// recorded, index file present), and that every split has all of its shards
// 0..M-1; then it assembles manifest.json and rejects.tsv with
// AssembleManifest and runs the leak check over every task's shards
// (CheckLeaks: duplicates.tsv), exactly as a single run does, so the merged
// manifest equals a single run's apart from `run`.
//
//   StatusOr<MergeResult> r = MergeTasks("out");
//   if (!r.ok()) ...              // I/O or unreadable manifests
//   else if (!r->problems.empty()) for (auto& p : r->problems) Print(p);
//
// A folder a run of one task wrote (its complete manifest.json, no task
// manifest) is merged already: MergeTasks returns it (tasks 1), writing
// nothing. Errors: kNotFound when OUT has no task manifest and no such
// manifest, kInvalidArgument for an
// unreadable manifest. Missing tasks and missing or damaged shards are not
// errors: they are listed in MergeResult::problems, and nothing is written.
// Thread-safety: holds OUT/.libshard/lock exclusively (output_lock.h): a
// merge while a task or another merge runs fails with kFailedPrecondition.
#ifndef LIBSHARD_CONVERT_MERGE_H_
#define LIBSHARD_CONVERT_MERGE_H_

#include <functional>
#include <string>
#include <vector>

#include "libshard/manifest.pb.h"
#include "libshard/status.h"

namespace libshard::convert {

struct MergeResult {
  // What is missing or wrong, one line each (task numbers, shard files);
  // empty when the merge was written.
  std::vector<std::string> problems;
  uint32_t tasks = 0;
  uint32_t shards = 0;
  Manifest manifest;          // when problems is empty
  std::string manifest_path;  // when written
  // The leak check (the tasks' --leaks; duplicates.tsv and the manifest's
  // `duplicates` when it was not off): shards without fingerprints.
  uint64_t shards_without_hashes = 0;
};

// Where the shards are checked when they are not files in the folder
// (`shard merge s3://...`: the task manifests are fetched into a local
// folder and the shards stay objects, checked by their size and recorded
// CRC-32C without being downloaded).
struct MergeOptions {
  // The checksum ("crc32c:xxxxxxxx") of the shard an entry names, or a short
  // reason it does not match the entry ("12 bytes"); NotFound when the shard
  // is missing. Default: none (the file's CRC-32C, read in the folder).
  std::function<StatusOr<std::string>(const ShardEntry& shard)> shard_checksum;
  // Whether a file a shard entry lists beside its shard (its index, its
  // labels: manifest::ShardCompanions) is there. Default: none (a file in
  // the folder).
  std::function<bool(const std::string& companion)> companion_exists;
};

StatusOr<MergeResult> MergeTasks(const std::string& output_dir, const MergeOptions& options = {});

}  // namespace libshard::convert

#endif  // LIBSHARD_CONVERT_MERGE_H_

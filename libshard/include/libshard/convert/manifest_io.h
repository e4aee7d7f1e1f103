// The converter's own files beside the shards: per-shard entries, task
// manifests, rejects.tsv, and assembling a Manifest from shard entries (the
// same function for a single run, a task of a split run, and `shard merge`,
// which is why their results agree).
//
// JSON reading and printing are manifest/manifest_json.h's (one policy for
// every reader); files are written with io::WriteFileAtomically
// (io/writable_file.h).
//
//   LIBSHARD_ASSIGN_OR_RETURN(Manifest built,
//                             AssembleManifest(options, labels, schema, entries, rejects, true));
//   LIBSHARD_RETURN_IF_ERROR(io::WriteFileAtomically("out/manifest.json", manifest::ToJson(built)));
//
// Errors: kNotFound (no such file), kInvalidArgument (not JSON of the
// schema, or a `format` other than manifest::kFormat), I/O errors naming the
// file.
// Thread-safety: pure functions apart from the named files.
#ifndef LIBSHARD_CONVERT_MANIFEST_IO_H_
#define LIBSHARD_CONVERT_MANIFEST_IO_H_

#include <string>
#include <vector>

#include "libshard/manifest.pb.h"
#include "libshard/status.h"

namespace libshard::convert {

// Hidden folder in the output where shard entries and temporary files live.
inline constexpr char kStateDir[] = ".libshard";

// A shard's entry (OUT/.libshard/<shard>.json), as manifest::ReadJsonFile
// reads it.
StatusOr<ShardEntry> ReadShardEntry(const std::string& path);

// rejects.tsv: a header line "path<TAB>reason", then one line per reject of
// `m` (tabs and line breaks in reasons become spaces), written atomically
// (`sync` as for io::WriteFileAtomically).
Status WriteRejectsTsv(const std::string& path, const Manifest& m, bool sync = true);

// OUT/label_map.pbtxt, the TF Object Detection API's label map of the
// manifest's object_labels (annotations.h LabelMapPbtxt), written
// atomically; nothing when the manifest has none.
Status WriteLabelMap(const std::string& output_dir, const Manifest& m, bool sync = true);

// "manifest.task-00002-of-00007.json"
std::string TaskManifestName(uint32_t task_index, uint32_t num_tasks);
// Where task `task_index` of `num_tasks` keeps its partial manifest:
// OUT/.libshard/manifest.task-IIIII-of-NNNNN.json (inside the hidden state
// folder, so that no reader or verifier takes it for a shard).
std::string TaskManifestPath(const std::string& output_dir, uint32_t task_index, uint32_t num_tasks);

// A manifest from shard entries: splits in name order, shards by index,
// split and total statistics summed exactly, rejects (the shards' plus
// `listing_rejects`) de-duplicated and sorted by path. stats.rejected counts
// every reject. `run` is left empty for the caller.
StatusOr<Manifest> AssembleManifest(const ConversionOptions& options, const std::vector<LabelEntry>& labels,
                                    const std::vector<FeatureSpec>& schema, std::vector<ShardEntry> shards,
                                    const std::vector<Reject>& listing_rejects, bool complete);

// What a complete manifest.json leaves to the shard entries (OUT/.libshard/
// <shard>.json), so that it grows with the shards and the classes, not with
// the records: each shard's stats (its own label histogram, source sizes and
// channel sums: a 1M-record set of 1,000 classes had 42 MB of them), its
// rejects (the manifest's rejects[] lists each one) and its image hashes.
// The split and total stats stay. A task's partial manifest keeps them all
// (shard merge assembles the whole from them). Old manifests that carry
// them still read: every reader takes the splits' stats.
void DropShardDetails(Manifest* m);

}  // namespace libshard::convert

#endif  // LIBSHARD_CONVERT_MANIFEST_IO_H_

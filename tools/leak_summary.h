// The leak check's last words for `shard convert` and `shard merge`: the
// counts of duplicate pairs (manifest.json's `duplicates`) and where they are
// listed, and the exit code --leaks fail asks for.
//
//   const int code = ReportLeaks("shard convert", manifest, without, out + "/duplicates.tsv", quiet);
//   if (code != kExitOk) return code;
//
// Thread-safety: writes to stderr.
#ifndef LIBSHARD_TOOLS_LEAK_SUMMARY_H_
#define LIBSHARD_TOOLS_LEAK_SUMMARY_H_

#include <cstdint>
#include <string>

#include "libshard/manifest.pb.h"

namespace shard_tool {

// Prints "PROGRAM: leak check: N pair(s) across splits (K image(s) with a
// copy in another split: SPLIT K1 ...), M within a split (distance D) ->
// TSV" unless `quiet` (a pair across splits is always printed, quiet or not,
// under --leaks fail); then, unless quiet, the largest group of copies ("C
// copies of FILE (SPLIT)"), whether the search stopped at its bound or the
// list was cut, and a note for shards without fingerprints. Returns kExitFailure (1) when the manifest's options say
// --leaks fail and a pair crosses splits, else kExitOk. Nothing for a
// manifest without a leak check (--leaks off, a task's partial manifest).
int ReportLeaks(const char* program, const libshard::Manifest& manifest, uint64_t shards_without_hashes,
                const std::string& tsv_path, bool quiet);

}  // namespace shard_tool

#endif  // LIBSHARD_TOOLS_LEAK_SUMMARY_H_

#include "leak_summary.h"

#include <cstdio>

#include "commands.h"

namespace shard_tool {

int ReportLeaks(const char* program, const libshard::Manifest& m, uint64_t shards_without_hashes,
                const std::string& tsv_path, bool quiet) {
  if (!m.has_duplicates()) return kExitOk;
  const bool fail = m.options().leaks() == "fail" && m.duplicates().leaks() > 0;
  if (!quiet || fail) {
    std::fprintf(stderr, "%s: leak check: %u pair(s) across splits, %u within a split (distance %d) -> %s\n", program,
                 m.duplicates().leaks(), m.duplicates().within(), m.options().leak_distance(), tsv_path.c_str());
  }
  if (shards_without_hashes > 0 && !quiet) {
    std::fprintf(stderr,
                 "%s: leak check: %llu shard(s) have no image fingerprints (converted with --leaks off or an "
                 "older libshard): their images were not checked\n",
                 program, static_cast<unsigned long long>(shards_without_hashes));
  }
  if (fail) {
    std::fprintf(stderr, "%s: --leaks fail: images of one split are duplicated in another (listed in %s)\n", program,
                 tsv_path.c_str());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace shard_tool

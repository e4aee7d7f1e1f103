#include "leak_summary.h"

#include <cstdio>
#include <map>
#include <string>

#include "libshard/convert/duplicates.h"

#include "commands.h"

namespace shard_tool {

int ReportLeaks(const char* program, const libshard::Manifest& m, uint64_t shards_without_hashes,
                const std::string& tsv_path, bool quiet) {
  if (!m.has_duplicates()) return kExitOk;
  const bool fail = m.options().leaks() == "fail" && m.duplicates().leaks() > 0;
  const libshard::DuplicateCounts& d = m.duplicates();
  if (!quiet || fail) {
    std::string leaked;
    if (d.leaks() > 0) {
      // Images, not pairs: nine val copies of nine train images are one pair
      // of copy groups but 18 images (the splits in sorted order).
      std::map<std::string, uint32_t> by_split(d.leaked_by_split().begin(), d.leaked_by_split().end());
      leaked = " (" + std::to_string(d.leaked_images()) + " image(s) with a copy in another split:";
      for (const auto& [split, n] : by_split) leaked += " " + split + " " + std::to_string(n);
      leaked += ")";
    }
    std::fprintf(stderr, "%s: leak check: %u pair(s) across splits%s, %u within a split (distance %d) -> %s\n",
                 program, d.leaks(), leaked.c_str(), d.within(), m.options().leak_distance(), tsv_path.c_str());
    if (d.largest_groups_size() > 0 && !quiet) {
      const libshard::CopyGroupEntry& g = d.largest_groups(0);
      std::fprintf(stderr, "%s: leak check: the largest group of copies: %u copies of %s (%s)\n", program, g.copies(),
                   g.file().c_str(), g.split().c_str());
    }
    if (d.incomplete()) {
      std::fprintf(stderr,
                   "%s: leak check: the search stopped at its bound of %zu pairs held: the counts are lower bounds\n",
                   program, libshard::convert::kMaxSearchPairs);
    }
    if (d.truncated()) {
      std::fprintf(stderr, "%s: leak check: %s lists the first %zu pairs only\n", program, tsv_path.c_str(),
                   libshard::convert::kMaxDuplicatePairs);
    }
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

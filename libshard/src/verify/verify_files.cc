#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "libshard/util/threads.h"
#include "libshard/verify/verifier.h"

namespace libshard::verify {

// One task per file: each file is walked sequentially (framing cannot be
// split without an index), files are independent. Results land in their own
// slot, so the output order is the argument order.
std::vector<FileResult> VerifyFiles(const std::vector<std::string>& paths, const VerifyOptions& options,
                                    const std::vector<FileChecks>& checks) {
  std::vector<FileResult> results(paths.size());
  auto run = [&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, paths.size(), 1), [&](const tbb::blocked_range<size_t>& range) {
      for (size_t i = range.begin(); i != range.end(); ++i)
        results[i] = VerifyFile(paths[i], options, i < checks.size() ? checks[i] : FileChecks());
    });
  };
  tbb::task_arena arena(util::ThreadCount(options.threads));
  arena.execute(run);
  return results;
}

}  // namespace libshard::verify

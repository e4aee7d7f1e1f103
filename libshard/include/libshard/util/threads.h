// Thread counts: the one meaning of `threads = 0` across libshard. Convert,
// verify and the BatchLoader (and their CLI and Python options) take a thread
// count where 0 means one thread per core: oneTBB's default concurrency, the
// cores this process may run on (its CPU affinity mask), whatever arena the
// caller is in.
//
//   tbb::task_arena arena(libshard::util::ThreadCount(options.threads));
//
// The one cap on a thread count option (convert, verify, report, the
// loader; the CLI's flags and the Python keywords): 0..kMaxThreads.
//
// Thread-safety: thread-safe.
#ifndef LIBSHARD_UTIL_THREADS_H_
#define LIBSHARD_UTIL_THREADS_H_

#include "libshard/status.h"

namespace libshard::util {

// The largest thread count an option takes.
inline constexpr int kMaxThreads = 256;

// InvalidArgument "threads must be in 0..256 (0: one per core)" for a count
// outside 0..kMaxThreads.
Status CheckThreadCount(int threads);

// `threads` when it is above 0; for 0 (or less), one per core (at least 1).
int ThreadCount(int threads);

}  // namespace libshard::util

#endif  // LIBSHARD_UTIL_THREADS_H_

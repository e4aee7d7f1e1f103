// Private: the loader's decode threads, fork-safe. In the process that
// made it, a DecodePool runs work on a oneTBB arena of `threads` threads; in
// a fork child (a PyTorch DataLoader worker) it runs on plain std::threads,
// as oneTBB's pool cannot be restarted there.
//
// A fork child has none of the parent's threads: not the loader's producer,
// not oneTBB's workers (the loader's, or those of any other oneTBB user in
// the process), and none of the locks they held. To see forks, the first
// DecodePool made installs one pthread_atfork child handler, which only sets
// a flag (a fork before any loader exists has nothing to restart; the
// library installs nothing at static initialisation). A pool made before a
// fork is not made_here() in the child: its owner abandons it (destroying it
// would wait for threads that do not exist there) and makes a new one.
//
// Tasks (Run / Wait): a loader fills one batch per task, and the next
// batch's task may start while the last samples of the one before are still
// decoding, so no thread idles at the end of each batch waiting for its
// slowest sample (random-resized crops differ several-fold in cost). Each
// ParallelFor is isolated: a thread waiting for its items takes only those,
// never a whole other batch, so a batch is done as soon as its items are.
//
// Thread-safety: Run and Wait from one thread (the loader's producer);
// ParallelFor from that thread or from inside its tasks.
#ifndef LIBSHARD_SRC_READER_DECODE_POOL_H_
#define LIBSHARD_SRC_READER_DECODE_POOL_H_

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <system_error>
#include <thread>
#include <vector>

namespace libshard::reader {

class DecodePool {
 public:
  // `threads` >= 1 decode threads (tasks and ParallelFor items run on them;
  // a ParallelFor from outside a task adds the caller's). Installs the fork
  // handler on the first call.
  static std::unique_ptr<DecodePool> Create(int threads);
  DecodePool(const DecodePool&) = delete;
  DecodePool& operator=(const DecodePool&) = delete;

  // False in a fork child of the process that made this pool.
  bool made_here() const { return pid_ == getpid(); }

  // body(i) for each i in [0, n), on up to `threads` threads (the caller's
  // included); returns when all are done. body must not throw.
  template <typename Body>
  void ParallelFor(size_t n, const Body& body);

  // Runs task() on the pool's threads and returns at once; Wait() returns
  // when every task run so far is done. In a fork child (no arena) task()
  // runs on the caller's thread before Run returns. task must not throw.
  void Run(std::function<void()> task);
  void Wait();

 private:
  explicit DecodePool(int threads) : threads_(threads) {}
  int threads_;
  pid_t pid_ = getpid();
  std::unique_ptr<tbb::global_control> gc_;
  std::unique_ptr<tbb::task_arena> arena_;  // null: decode on std::threads (a fork child)
  std::unique_ptr<tbb::task_group> tasks_;  // with arena_
};

template <typename Body>
void DecodePool::ParallelFor(size_t n, const Body& body) {
  if (arena_ != nullptr) {
    arena_->execute([&] {
      tbb::this_task_arena::isolate([&] {
        tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 1), [&](const tbb::blocked_range<size_t>& r) {
          for (size_t i = r.begin(); i != r.end(); ++i) body(i);
        });
      });
    });
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) body(i);
  };
  std::vector<std::thread> pool;
  const size_t extra = std::min<size_t>(static_cast<size_t>(threads_), n) - (n > 0 ? 1 : 0);
  for (size_t t = 0; t < extra; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // fewer threads; the caller does the rest
    }
  }
  work();
  for (std::thread& t : pool) t.join();
}

}  // namespace libshard::reader

#endif  // LIBSHARD_SRC_READER_DECODE_POOL_H_

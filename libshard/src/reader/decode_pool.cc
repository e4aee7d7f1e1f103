// The loader's fork-safe decode threads (decode_pool.h).
#include "reader/decode_pool.h"

#include <pthread.h>
#include <tbb/info.h>

#include <mutex>

namespace libshard::reader {
namespace {

std::atomic<bool> g_in_fork_child{false};

void MarkForkChild() { g_in_fork_child.store(true); }

// Installed once, when the first pool is made: every fork after it is seen.
void InstallForkHandler() {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(nullptr, nullptr, &MarkForkChild); });
}

}  // namespace

std::unique_ptr<DecodePool> DecodePool::Create(int threads) {
  InstallForkHandler();
  std::unique_ptr<DecodePool> pool(new DecodePool(threads));
  if (g_in_fork_child.load()) return pool;
  if (threads > tbb::info::default_concurrency()) {
    pool->gc_ = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                      static_cast<size_t>(threads));
  }
  pool->arena_ = std::make_unique<tbb::task_arena>(threads);
  return pool;
}

}  // namespace libshard::reader

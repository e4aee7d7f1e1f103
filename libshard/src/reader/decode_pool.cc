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
  // `threads` workers decode; the one slot kept for a caller (the
  // producer, entering only to Run and Wait) adds none while it sleeps.
  // oneTBB's market has default_concurrency - 1 workers unless raised.
  if (threads + 1 > tbb::info::default_concurrency()) {
    pool->gc_ = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                      static_cast<size_t>(threads) + 1);
  }
  pool->arena_ = std::make_unique<tbb::task_arena>(threads + 1, 1);
  pool->tasks_ = std::make_unique<tbb::task_group>();
  return pool;
}

void DecodePool::Run(std::function<void()> task) {
  if (arena_ == nullptr) return task();
  arena_->execute([&] { tasks_->run(std::move(task)); });
}

void DecodePool::Wait() {
  if (arena_ != nullptr) arena_->execute([&] { tasks_->wait(); });
}

}  // namespace libshard::reader

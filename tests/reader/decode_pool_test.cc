// The loader's decode threads (reader/decode_pool.h): a task's ParallelFor
// items and the next task's run at once, so a batch's slowest sample does
// not keep the other threads idle; Wait returns after every task; a fork
// child runs tasks on the caller's thread.
#include "reader/decode_pool.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace libshard::reader {
namespace {

// A latch with a bounded wait: a pool that cannot overlap tasks fails the
// test instead of hanging it.
struct Latch {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  void Open() {
    {
      std::lock_guard<std::mutex> g(mu);
      open = true;
    }
    cv.notify_all();
  }
  bool WaitOpen() {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(20), [&] { return open; });
  }
};

TEST(DecodePoolTest, TheNextTaskRunsWhileTheLastItemOfTheOneBeforeIsStillRunning) {
  // Two threads. Task A's item 0 waits until task B has run all of its
  // items: only a pool whose other thread takes B while A's straggler runs
  // gets there (one batch at a time deadlocks, here a bounded wait).
  std::unique_ptr<DecodePool> pool = DecodePool::Create(2);
  Latch b_done;
  std::atomic<int> a_items{0}, b_items{0};
  bool a_saw_b = false;
  pool->Run([&] {
    pool->ParallelFor(1, [&](size_t) {
      a_saw_b = b_done.WaitOpen();
      ++a_items;
    });
  });
  pool->Run([&] {
    pool->ParallelFor(8, [&](size_t) { ++b_items; });
    b_done.Open();
  });
  pool->Wait();
  EXPECT_TRUE(a_saw_b) << "task B did not run while task A's item was running";
  EXPECT_EQ(a_items.load(), 1);
  EXPECT_EQ(b_items.load(), 8);
}

TEST(DecodePoolTest, WaitReturnsAfterEveryTaskAndEveryItemRunsOnce) {
  std::unique_ptr<DecodePool> pool = DecodePool::Create(3);
  std::mutex mu;
  std::multiset<size_t> seen;
  std::atomic<int> done{0};
  for (int t = 0; t < 5; ++t) {
    pool->Run([&, t] {
      pool->ParallelFor(100, [&](size_t i) {
        std::lock_guard<std::mutex> g(mu);
        seen.insert(static_cast<size_t>(t) * 100 + i);
      });
      ++done;
    });
  }
  pool->Wait();
  EXPECT_EQ(done.load(), 5);
  ASSERT_EQ(seen.size(), 500u);
  for (size_t k = 0; k < 500; ++k) EXPECT_EQ(seen.count(k), 1u) << k;
}

TEST(DecodePoolTest, ItUsesAsManyThreadsAsAskedWhileTheCallerSleeps) {
  // The producer sleeps on its condition between Run calls, outside the
  // pool: `threads` items must all be running at once without it.
  for (int threads : {2, 4}) {
    std::unique_ptr<DecodePool> pool = DecodePool::Create(threads);
    std::mutex mu;
    std::condition_variable cv;
    int arrived = 0;
    bool released = false;
    pool->Run([&] {
      pool->ParallelFor(static_cast<size_t>(threads), [&](size_t) {
        std::unique_lock<std::mutex> lock(mu);
        ++arrived;
        cv.notify_all();
        cv.wait_for(lock, std::chrono::seconds(20), [&] { return released; });
      });
    });
    bool met = false;
    int at_once = 0;
    {
      std::unique_lock<std::mutex> lock(mu);
      met = cv.wait_for(lock, std::chrono::seconds(5), [&] { return arrived >= threads; });
      at_once = arrived;
      released = true;
    }
    cv.notify_all();
    pool->Wait();
    EXPECT_TRUE(met) << threads << " threads asked, " << at_once << " ran at once";
  }
}

TEST(DecodePoolTest, AForkChildRunsTasksOnItsOwnThreads) {
  std::unique_ptr<DecodePool> parent = DecodePool::Create(2);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::unique_ptr<DecodePool> child = DecodePool::Create(2);
    std::atomic<int> items{0};
    bool ran = false;
    child->Run([&] {
      child->ParallelFor(10, [&](size_t) { ++items; });
      ran = true;
    });
    child->Wait();
    _exit(ran && items.load() == 10 && !parent->made_here() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace libshard::reader

// ShardCache: verified downloads under a temporary name, reuse, one download
// per object with many fetchers, LRU eviction under a limit that spares
// pinned files, nothing outside the cache folder touched, and kill -9 in the
// middle of a download.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "libshard/crc32c.h"
#include "libshard/store/local_store.h"
#include "libshard/store/s3_store.h"
#include "libshard/store/shard_cache.h"
#include "servers/servers.h"
#include "testutil.h"

namespace libshard::store {
namespace {

namespace fs = std::filesystem;

std::string Bytes(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint64_t x = seed;
  for (size_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    s[i] = static_cast<char>(x >> 56);
  }
  return s;
}

Expected ExpectOf(const std::string& b) { return {b.size(), crc32c::Value(b.data(), b.size())}; }

// Every file below `dir`, relative.
std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    out.push_back(it->path().string());
  }
  return out;
}

// A cache in `dir` holding at most `limit` bytes (0: no limit).
CacheOptions CacheIn(const std::string& dir, uint64_t limit) {
  CacheOptions o;
  o.dir = dir;
  o.limit = limit;
  return o;
}

bool AnyPartial(const std::string& dir) {
  for (const std::string& f : Files(dir)) {
    if (f.find(".libshard-partial-") != std::string::npos) return true;
  }
  return false;
}

TEST(StoreCacheTest, VerifiedDownloadThenReuse) {
  const std::string dir = testing::MakeTempDir();
  const std::string a = Bytes(200000, 1);
  auto src = NewLocalStore(dir + "/src");
  ASSERT_TRUE(src->Put("ds/a.tfrecord", a).ok());
  StatusOr<std::unique_ptr<ShardCache>> cache = ShardCache::Open(CacheIn(dir + "/cache", 0));
  ASSERT_TRUE(cache.ok()) << cache.status();
  auto f = (*cache)->Fetch(*src, "ds/a.tfrecord", ExpectOf(a));
  ASSERT_TRUE(f.ok()) << f.status();
  char crc[16];
  std::snprintf(crc, sizeof(crc), "%08x", ExpectOf(a).crc32c);
  EXPECT_EQ((*f)->path(), dir + "/cache/local/ds/" + crc + "/a.tfrecord");
  EXPECT_TRUE(testing::ReadFileOrDie((*f)->path()) == a);
  auto again = (*cache)->Fetch(*src, "ds/a.tfrecord", ExpectOf(a));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*cache)->downloads(), 1u);
  EXPECT_EQ((*cache)->reused(), 1u);
  // A new cache object over the same folder (a later run) reuses it too.
  auto later = ShardCache::Open(CacheIn(dir + "/cache", 0));
  ASSERT_TRUE((*later)->Fetch(*src, "ds/a.tfrecord", ExpectOf(a)).ok());
  EXPECT_EQ((*later)->downloads(), 0u);
  EXPECT_FALSE(AnyPartial(dir + "/cache"));
}

TEST(StoreCacheTest, MismatchingObjectIsNeverTakenAsComplete) {
  const std::string dir = testing::MakeTempDir();
  const std::string a = Bytes(100000, 2);
  auto src = NewLocalStore(dir + "/src");
  ASSERT_TRUE(src->Put("a", a).ok());
  auto cache = ShardCache::Open(CacheIn(dir + "/cache", 0));
  Expected bad = ExpectOf(a);
  bad.crc32c ^= 0x10;
  auto f = (*cache)->Fetch(*src, "a", bad);
  ASSERT_EQ(f.status().code(), StatusCode::kDataLoss) << f.status();
  EXPECT_NE(f.status().message().find(dir + "/src/a"), std::string::npos) << f.status();
  StatusOr<std::string> path = (*cache)->PathFor(*src, "a", bad.crc32c);
  EXPECT_FALSE(fs::exists(*path));
  EXPECT_FALSE(AnyPartial(dir + "/cache"));
  Expected shorter{a.size() - 1, 0};
  EXPECT_EQ((*cache)->Fetch(*src, "a", shorter).status().code(), StatusCode::kDataLoss);
  EXPECT_FALSE(AnyPartial(dir + "/cache"));
}

TEST(StoreCacheTest, KeysCannotLeaveTheCacheFolder) {
  const std::string dir = testing::MakeTempDir();
  auto src = NewLocalStore(dir + "/src");
  auto cache = ShardCache::Open(CacheIn(dir + "/cache", 0));
  EXPECT_EQ((*cache)->Fetch(*src, "../x", {1, 0}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*cache)->Fetch(*src, "a/../../x", {1, 0}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*cache)->FetchUnverified(*src, "x", dir + "/elsewhere/x.idx", 10).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(StoreCacheTest, LimitEvictsLeastRecentlyUsedFilesNotInUse) {
  const std::string dir = testing::MakeTempDir();
  auto src = NewLocalStore(dir + "/src");
  std::vector<std::string> obj;
  for (int i = 0; i < 4; ++i) {
    obj.push_back(Bytes(10000, 10 + i));
    ASSERT_TRUE(src->Put("o" + std::to_string(i), obj[i]).ok());
  }
  // Beside the cache, a file that must survive everything.
  testing::WriteFileOrDie(dir + "/keep.txt", "mine");
  auto cache = ShardCache::Open(CacheIn(dir + "/cache", 25000));  // two objects fit, not three
  auto f0 = (*cache)->Fetch(*src, "o0", ExpectOf(obj[0]));
  ASSERT_TRUE(f0.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // distinct mtimes
  auto f1 = (*cache)->Fetch(*src, "o1", ExpectOf(obj[1]));
  ASSERT_TRUE(f1.ok());
  const std::string p0 = (*f0)->path(), p1 = (*f1)->path();
  // Both pinned: a third cannot fit.
  auto f2 = (*cache)->Fetch(*src, "o2", ExpectOf(obj[2]));
  ASSERT_EQ(f2.status().code(), StatusCode::kResourceExhausted) << f2.status();
  EXPECT_NE(f2.status().message().find("cache_limit 25000"), std::string::npos) << f2.status();
  EXPECT_NE(f2.status().message().find("in use"), std::string::npos) << f2.status();
  // o0 released (and older): it goes; o1 stays pinned.
  f0->reset();
  f2 = (*cache)->Fetch(*src, "o2", ExpectOf(obj[2]));
  ASSERT_TRUE(f2.ok()) << f2.status();
  EXPECT_FALSE(fs::exists(p0));
  EXPECT_TRUE(fs::exists(p1));
  EXPECT_EQ((*cache)->evicted(), 1u);
  // Touching o1 (a reuse) makes o2 the oldest unpinned one.
  f1->reset();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  f1 = (*cache)->Fetch(*src, "o1", ExpectOf(obj[1]));
  const std::string p2 = (*f2)->path();
  f2->reset();
  f1->reset();
  auto f3 = (*cache)->Fetch(*src, "o3", ExpectOf(obj[3]));
  ASSERT_TRUE(f3.ok()) << f3.status();
  EXPECT_FALSE(fs::exists(p2));
  EXPECT_TRUE(fs::exists(p1));
  EXPECT_EQ(testing::ReadFileOrDie(dir + "/keep.txt"), "mine");
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(fs::exists(dir + "/src/o" + std::to_string(i)));
  // Up front: more than the limit at once is refused, naming it.
  Status fits = (*cache)->CheckFits(30000, "3 shards");
  EXPECT_EQ(fits.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(fits.message().find("cache_limit 25000 bytes cannot hold 3 shards (30000 bytes)"), std::string::npos)
      << fits;
  EXPECT_TRUE((*cache)->CheckFits(25000, "x").ok());
}

// Every pinned file holds a descriptor: the cache raises the soft limit of
// open files to the hard one, so thousands of resident shards fit.
// Bytes of every file below `dir` but the lock files: what the limit bounds.
uint64_t BytesOnDisk(const std::string& dir) {
  uint64_t n = 0;
  for (const std::string& f : Files(dir)) {
    if (fs::is_regular_file(f) && f.find(".libshard-lock") == std::string::npos) n += fs::file_size(f);
  }
  return n;
}

// The pid of a child that has exited (and been reaped): no process has it.
pid_t DeadPid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

// Partial files of killed readers count against the limit and are evicted
// (their writer is gone: no process holds the object's lock, or its pid is
// dead); a partial whose writer is alive and downloading is counted, kept.
TEST(StoreCacheTest, LimitCountsPartialsAndEvictsThoseOfKilledWriters) {
  const std::string dir = testing::MakeTempDir();
  const std::string a = Bytes(10000, 3), b = Bytes(10000, 4);
  auto src = NewLocalStore(dir + "/src");
  ASSERT_TRUE(src->Put("ds/a", a).ok());
  ASSERT_TRUE(src->Put("ds/b", b).ok());
  StatusOr<std::unique_ptr<ShardCache>> cache = ShardCache::Open(CacheIn(dir + "/cache", 30000));
  ASSERT_TRUE(cache.ok()) << cache.status();
  // A killed reader's partial of another object: 25,000 bytes.
  StatusOr<std::string> other = (*cache)->PathFor(*src, "ds/other", 0x1234);
  ASSERT_TRUE(other.ok());
  fs::create_directories(fs::path(*other).parent_path());
  const std::string stale = *other + ".libshard-partial-" + std::to_string(DeadPid()) + "-0";
  testing::WriteFileOrDie(stale, std::string(25000, 'p'));
  auto f = (*cache)->Fetch(*src, "ds/a", ExpectOf(a));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_LE(BytesOnDisk(dir + "/cache"), 30000u);

  // A live writer's partial (its lock held, its pid alive): counted, kept.
  StatusOr<std::string> busy = (*cache)->PathFor(*src, "ds/busy", 0x5678);
  ASSERT_TRUE(busy.ok());
  fs::create_directories(fs::path(*busy).parent_path());
  const std::string live = *busy + ".libshard-partial-" + std::to_string(::getppid()) + "-0";
  testing::WriteFileOrDie(live, std::string(15000, 'l'));
  const int lock = ::open((*busy + ".libshard-lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(lock, 0);
  ASSERT_EQ(::flock(lock, LOCK_EX), 0);
  auto g = (*cache)->Fetch(*src, "ds/b", ExpectOf(b));  // a (pinned) + live + b > 30000
  EXPECT_EQ(g.status().code(), StatusCode::kResourceExhausted) << g.status();
  EXPECT_TRUE(fs::exists(live));
  EXPECT_LE(BytesOnDisk(dir + "/cache"), 30000u);
  ::close(lock);
}

TEST(StoreCacheTest, ManyPinnedFilesDoNotRunOutOfDescriptors) {
  struct rlimit rl;
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &rl), 0);
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 1024) GTEST_SKIP() << "hard limit of open files below 1024";
  rl.rlim_cur = 256;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &rl), 0);
  const std::string dir = testing::MakeTempDir();
  auto src = NewLocalStore(dir + "/src");
  auto cache = ShardCache::Open(CacheIn(dir + "/cache", 0));
  ASSERT_TRUE(cache.ok());
  std::vector<std::unique_ptr<CachedFile>> pins;
  for (int i = 0; i < 600; ++i) {
    const std::string b = "object " + std::to_string(i);
    ASSERT_TRUE(src->Put("o" + std::to_string(i), b).ok());
    auto f = (*cache)->Fetch(*src, "o" + std::to_string(i), ExpectOf(b));
    ASSERT_TRUE(f.ok()) << i << ": " << f.status();
    pins.push_back(std::move(*f));
  }
}

// Two readers (two DataLoader workers: each its own cache object, so its
// own lock descriptors) fetch the same new object at once and keep it pinned:
// the one that loses the race to download must still get the file, never
// wait for an exclusive lock the winner's pin (shared, held for as long as
// its reader lives) never gives up. Many rounds, in a child with a deadline.
TEST(StoreCacheTest, ARaceToDownloadNeverWaitsForTheWinnersPin) {
  const std::string dir = testing::MakeTempDir();
  const int rc = testing::RunInForkChild(
      [&] {
        struct rlimit rl;  // 600 pins (another test of this binary may have lowered the soft limit)
        if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
          rl.rlim_cur = rl.rlim_max;
          ::setrlimit(RLIMIT_NOFILE, &rl);
        }
        auto src = NewLocalStore(dir + "/src");
        auto a = ShardCache::Open(CacheIn(dir + "/cache", 0));
        auto b = ShardCache::Open(CacheIn(dir + "/cache", 0));
        if (!a.ok() || !b.ok()) return 2;
        std::vector<std::unique_ptr<CachedFile>> pins_a, pins_b;
        for (int round = 0; round < 300; ++round) {
          const std::string key = "r" + std::to_string(round);
          const std::string bytes = Bytes(4096 + round, round);
          if (!src->Put(key, bytes).ok()) return 3;
          const Expected want = ExpectOf(bytes);
          StatusOr<std::unique_ptr<CachedFile>> got_b = InternalError("not run");
          std::thread other([&] { got_b = (*b)->Fetch(*src, key, want); });
          StatusOr<std::unique_ptr<CachedFile>> got_a = (*a)->Fetch(*src, key, want);
          other.join();
          if (!got_a.ok() || !got_b.ok()) {
            std::fprintf(stderr, "round %d: %s / %s\n", round, got_a.status().ToString().c_str(),
                         got_b.status().ToString().c_str());
            return 4;
          }
          pins_a.push_back(std::move(*got_a));  // pinned until the end, as a reader keeps them
          pins_b.push_back(std::move(*got_b));
        }
        return 0;
      },
      60);
  EXPECT_EQ(rc, 0) << "a fetch failed or waited for ever (exit " << rc << ")";
  fs::remove_all(dir);
}

class StoreCacheS3Test : public testing::S3ProxyTest {
 protected:
  void SetUp() override {
    S3ProxyTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    config_ = s3_->Config();
    config_.endpoint = proxy_->endpoint();
  }
  std::unique_ptr<ObjectStore> Store() { return NewS3Store(config_, "bkt", NewCurlTransport(config_)); }

  StoreConfig config_;
};

TEST_F(StoreCacheS3Test, ManyFetchersDownloadOnce) {
  const std::string a = Bytes(3 << 20, 3);
  auto s = Store();
  ASSERT_TRUE(s->Put("ds/a.tfrecord", a).ok());
  proxy_->Reset();
  auto cache = ShardCache::Open(CacheIn(dir_ + "/cache", 0));
  std::vector<std::thread> threads;
  std::vector<std::string> paths(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      auto f = (*cache)->Fetch(*s, "ds/a.tfrecord", ExpectOf(a));
      ASSERT_TRUE(f.ok()) << f.status();
      paths[t] = (*f)->path();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(proxy_->Count("GET"), 1);
  EXPECT_EQ((*cache)->downloads(), 1u);
  EXPECT_EQ((*cache)->reused(), 7u);
  for (const std::string& p : paths) EXPECT_EQ(p, paths[0]);
  EXPECT_TRUE(testing::ReadFileOrDie(paths[0]) == a);
}

TEST_F(StoreCacheS3Test, CutBodiesStillGiveTheExactFile) {
  const std::string a = Bytes(2 << 20, 4);
  auto s = Store();
  ASSERT_TRUE(s->Put("a", a).ok());
  proxy_->Fault("cut", "GET", "/bkt/a", 2);
  auto cache = ShardCache::Open(CacheIn(dir_ + "/cache", 0));
  auto f = (*cache)->Fetch(*s, "a", ExpectOf(a));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(testing::ReadFileOrDie((*f)->path()) == a);
  EXPECT_FALSE(AnyPartial(dir_ + "/cache"));
}

TEST_F(StoreCacheS3Test, RangedPartsCutByTheProxyRetryAndGiveTheExactFile) {
  const std::string a = Bytes(3 << 20, 5);
  auto s = Store();
  ASSERT_TRUE(s->Put("ds/big.tfrecord", a).ok());
  proxy_->Reset();
  proxy_->Fault("cut", "GET", "/bkt/ds/big.tfrecord", 3);
  CacheOptions o;
  o.dir = dir_ + "/cache";
  o.parts.part_size = 512 << 10;  // 6 parts
  o.parts.parallel = 3;
  auto cache = ShardCache::Open(o);
  auto f = (*cache)->Fetch(*s, "ds/big.tfrecord", ExpectOf(a));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(testing::ReadFileOrDie((*f)->path()) == a);
  EXPECT_FALSE(AnyPartial(dir_ + "/cache"));
  EXPECT_GE(proxy_->Count("GET"), 6 + 3);  // every part, and the cut ones again from where they stopped
}

TEST_F(StoreCacheS3Test, ACorruptObjectInRangedPartsIsDataLossAndNotCached) {
  const std::string a = Bytes(3 << 20, 6);
  std::string b = a;
  b[(5 << 19) + 17] ^= 0x01;  // in the sixth part
  auto s = Store();
  ASSERT_TRUE(s->Put("ds/bad.tfrecord", b).ok());
  CacheOptions o;
  o.dir = dir_ + "/cache";
  o.parts.part_size = 512 << 10;
  o.parts.parallel = 4;
  auto cache = ShardCache::Open(o);
  auto f = (*cache)->Fetch(*s, "ds/bad.tfrecord", ExpectOf(a));
  ASSERT_EQ(f.status().code(), StatusCode::kDataLoss) << f.status();
  EXPECT_NE(f.status().message().find("s3://bkt/ds/bad.tfrecord"), std::string::npos) << f.status();
  auto path = (*cache)->PathFor(*s, "ds/bad.tfrecord", ExpectOf(a).crc32c);
  ASSERT_TRUE(path.ok());
  EXPECT_FALSE(std::filesystem::exists(*path)) << *path;
  EXPECT_FALSE(AnyPartial(dir_ + "/cache"));
}

TEST_F(StoreCacheS3Test, KillNineDuringADownloadThenRerunIsCompleteAndIdentical) {
  const std::string a = Bytes(2 << 20, 5);
  auto s = Store();
  ASSERT_TRUE(s->Put("ds/a.tfrecord", a).ok());
  proxy_->Fault("stall", "GET", "/bkt/ds/a.tfrecord", 1, 60);
  const std::string cache_dir = dir_ + "/cache";
  const pid_t child = ::fork();
  if (child == 0) {
    auto cache = ShardCache::Open(CacheIn(cache_dir, 0));
    auto store = NewS3Store(config_, "bkt", NewCurlTransport(config_));
    (void)(*cache)->Fetch(*store, "ds/a.tfrecord", ExpectOf(a));
    _exit(0);
  }
  // Kill it once its partial file exists (the body is stalled midway).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!AnyPartial(cache_dir) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(AnyPartial(cache_dir));
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  auto cache = ShardCache::Open(CacheIn(cache_dir, 0));
  auto f = (*cache)->Fetch(*s, "ds/a.tfrecord", ExpectOf(a));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*cache)->downloads(), 1u);
  EXPECT_TRUE(testing::ReadFileOrDie((*f)->path()) == a);
  EXPECT_FALSE(AnyPartial(cache_dir));
}

}  // namespace
}  // namespace libshard::store

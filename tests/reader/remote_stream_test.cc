// Remote shards opened lazily and downloaded ahead of a loader's order
// (reader/remote_shards.h): the first batch comes before the whole split is
// downloaded; batches equal the local folder's whatever the order, threads,
// rank or worker; a part never reads what it does not touch; under a
// cache_limit a split three times the limit streams through the cache with
// block shuffle (and sequential) without exceeding it, a global shuffle is
// refused naming block shuffle; a second epoch makes no request.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "convert/fixtures.h"
#include "libshard/reader/batch_loader.h"
#include "libshard/reader/dataset.h"
#include "libshard/store/s3_store.h"
#include "libshard/util/strings.h"
#include "servers/servers.h"
#include "testutil.h"

namespace libshard {
namespace {

namespace fs = std::filesystem;
using reader::OrderKind;

// dir/ds: 64 small PNGs in 3 classes, about 4 records a shard (train only).
void ConvertManyShards(const std::string& dir) {
  for (int i = 0; i < 64; ++i) {
    const std::string cls = i % 3 == 0 ? "cat" : (i % 3 == 1 ? "dog" : "emu");
    fs::create_directories(dir + "/in/" + cls);
    testing::WriteFileOrDie(dir + "/in/" + cls + "/" + std::to_string(i) + ".png",
                            testing::PngBytes(10 + i % 4, 9 + i % 3, 3, i));
  }
  testing::CommandResult r = testing::RunCommand(std::string(SHARD_BIN) + " convert -q " + dir + "/in -o " + dir +
                                                 "/ds --shard-size 1KiB --threads 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// Bytes of complete and partial files under the cache (lock files aside).
uint64_t CacheBytes(const std::string& dir) {
  uint64_t n = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const std::string p = it->path().string();
    if (!it->is_regular_file(ec) || p.find(".libshard-lock") != std::string::npos) continue;
    std::error_code gone;  // a file may be evicted between the listing and its size
    const uint64_t size = fs::file_size(it->path(), gone);
    if (!gone) n += size;
  }
  return n;
}

struct Got {
  std::vector<std::vector<int64_t>> labels;
  std::vector<std::string> images;
  friend bool operator==(const Got& a, const Got& b) { return a.labels == b.labels && a.images == b.images; }
};

class StoreStreamTest : public testing::S3ProxyTest {
 protected:
  void SetUp() override {
    S3ProxyTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ConvertManyShards(dir_);
    UploadFolder(dir_ + "/ds", "data/ds");
    for (const auto& e : fs::directory_iterator(dir_ + "/ds")) {
      if (!e.is_regular_file()) continue;
      const std::string n = e.path().filename().string();
      if (util::EndsWith(n, ".tfrecord")) {
        ++shards_;
        total_ += e.file_size();
      } else if (util::EndsWith(n, ".idx")) {
        total_ += e.file_size();
      }
    }
    ASSERT_GE(shards_, 12);
    ReadThroughProxy();
  }

  std::shared_ptr<reader::Dataset> Open(const std::string& src, const std::string& cache, uint64_t limit = 0,
                                        int download_threads = 8) {
    reader::DatasetOptions o;
    o.cache_dir = cache;
    o.cache_limit = limit;
    o.download_threads = download_threads;
    StatusOr<std::unique_ptr<reader::Dataset>> ds = reader::Dataset::Open({src}, o);
    EXPECT_TRUE(ds.ok()) << ds.status();
    return ds.ok() ? std::shared_ptr<reader::Dataset>(std::move(*ds)) : nullptr;
  }

  static reader::BatchLoaderOptions Options(OrderKind kind, int threads) {
    reader::BatchLoaderOptions o;
    o.batch_size = 4;
    o.height = o.width = 8;
    o.threads = threads;
    o.order.kind = kind;
    o.order.seed = 7;
    o.order.block_size = 4;
    o.order.window_blocks = 2;
    return o;
  }

  // `epochs` epochs of batches; `each` runs after every batch.
  static Got Run(std::shared_ptr<const reader::Dataset> ds, const reader::BatchLoaderOptions& o, int epochs,
                 const std::function<void()>& each = nullptr) {
    Got g;
    StatusOr<std::unique_ptr<reader::BatchLoader>> l = reader::BatchLoader::Create(ds, o);
    EXPECT_TRUE(l.ok()) << l.status();
    if (!l.ok()) return g;
    for (uint64_t b = 0; b < (*l)->batches_per_epoch() * epochs; ++b) {
      reader::Batch batch;
      Status s = (*l)->Next(&batch);
      EXPECT_TRUE(s.ok()) << s;
      if (!s.ok()) return g;
      g.labels.emplace_back(batch.labels, batch.labels + batch.size);
      g.images.emplace_back(reinterpret_cast<const char*>(batch.images), batch.size * 8 * 8 * 3);
      if (each) each();
    }
    return g;
  }

  int shards_ = 0;
  uint64_t total_ = 0;  // shards and indexes
};

TEST_F(StoreStreamTest, FirstBatchComesBeforeTheSplitIsDownloaded) {
  auto ds = Open("s3://bkt/data/ds", dir_ + "/cache", 0, /*download_threads=*/1);
  ASSERT_TRUE(ds);
  EXPECT_EQ(proxy_->Count("GET"), 1);  // Open: the manifest only
  EXPECT_EQ(ds->downloads(), 0u);
  auto l = reader::BatchLoader::Create(ds, Options(OrderKind::kSequential, 1));
  ASSERT_TRUE(l.ok()) << l.status();
  reader::Batch batch;
  ASSERT_TRUE((*l)->Next(&batch).ok());
  // A batch of 4 reaches at most 2 shards; with 2 intervals ahead at most 4
  // shards (and their indexes) are fetched by then, of the split's many.
  EXPECT_LE(ds->downloads(), 8u);
  EXPECT_LT(proxy_->Count("GET"), 1 + 2 * shards_ / 2);
  EXPECT_FALSE(fs::exists(ds->shard_path(ds->num_shards() - 1)));  // the last shard is far outside the window
}

TEST_F(StoreStreamTest, SameBatchesAsTheLocalFolderForEveryOrderThreadsRankAndWorker) {
  auto local = Open(dir_ + "/ds", "");
  ASSERT_TRUE(local);
  for (OrderKind kind : {OrderKind::kSequential, OrderKind::kShuffle, OrderKind::kBlockShuffle}) {
    const std::string cache = dir_ + "/cache-" + reader::OrderKindName(kind);
    for (int threads : {1, 3}) {
      for (int part = 0; part < 3; ++part) {
        reader::BatchLoaderOptions o = Options(kind, threads);
        if (part == 1) {
          o.order.rank = 1;
          o.order.world_size = 2;
        } else if (part == 2) {
          o.order.worker = 1;
          o.order.num_workers = 2;
        }
        auto remote = Open("s3://bkt/data/ds", cache);
        ASSERT_TRUE(remote);
        const Got want = Run(local, o, 2);
        ASSERT_FALSE(want.labels.empty());
        EXPECT_TRUE(Run(remote, o, 2) == want)
            << reader::OrderKindName(kind) << " threads " << threads << " part " << part;
      }
    }
  }
}

TEST_F(StoreStreamTest, APartDownloadsOnlyTheShardsItReads) {
  auto ds = Open("s3://bkt/data/ds", dir_ + "/cache");
  ASSERT_TRUE(ds);
  reader::BatchLoaderOptions o = Options(OrderKind::kSequential, 2);
  o.order.rank = 0;
  o.order.world_size = 3;
  Run(ds, o, 2);
  auto order = reader::SampleOrder::Create(ds->size(), [&] {
    reader::OrderOptions oo = o.order;
    oo.batch_size = o.batch_size;
    return oo;
  }());
  ASSERT_TRUE(order.ok());
  std::set<size_t> read;
  for (uint64_t s : order->EpochSamples(0)) read.insert(ds->Locate(s).shard);
  ASSERT_LT(read.size(), ds->num_shards());
  for (size_t i = 0; i < ds->num_shards(); ++i) {
    EXPECT_EQ(fs::exists(ds->shard_path(i)), read.count(i) > 0) << ds->shard_path(i);
  }
  EXPECT_EQ(ds->downloads(), 2 * read.size());  // each shard read and its index, once
}

TEST_F(StoreStreamTest, SecondEpochMakesNoRequestWhenEverythingFits) {
  auto ds = Open("s3://bkt/data/ds", dir_ + "/cache", /*limit=*/2 * total_);
  ASSERT_TRUE(ds);
  reader::BatchLoaderOptions o = Options(OrderKind::kShuffle, 2);
  auto l = reader::BatchLoader::Create(ds, o);
  ASSERT_TRUE(l.ok()) << l.status();
  reader::Batch batch;
  for (uint64_t b = 0; b < (*l)->batches_per_epoch(); ++b) ASSERT_TRUE((*l)->Next(&batch).ok());
  const int after_first = proxy_->Count("GET");
  EXPECT_EQ(after_first, 1 + 2 * shards_);
  for (uint64_t b = 0; b < (*l)->batches_per_epoch(); ++b) ASSERT_TRUE((*l)->Next(&batch).ok());
  EXPECT_EQ(proxy_->Count("GET"), after_first);
}

// The bytes a cache_limit refusal asks for ("raise cache_limit to at least N"); 0 when it names none.
uint64_t AtLeast(const Status& s) {
  const std::string m(s.message());
  const size_t at = m.find("at least ");
  return at == std::string::npos ? 0 : std::stoull(m.substr(at + 9));
}

TEST_F(StoreStreamTest, StreamsASplitThreeTimesTheCacheLimit) {
  auto local = Open(dir_ + "/ds", "");
  ASSERT_TRUE(local);
  for (OrderKind kind : {OrderKind::kBlockShuffle, OrderKind::kSequential}) {
    // Block shuffle's windows need more than a sequential read: what every epoch may need, as Create names it.
    uint64_t limit = total_ / 3;
    if (kind == OrderKind::kBlockShuffle) {
      auto l = reader::BatchLoader::Create(Open("s3://bkt/data/ds", dir_ + "/probe", limit), Options(kind, 1));
      if (!l.ok()) limit = AtLeast(l.status());
      ASSERT_GT(limit, 0u) << l.status();
      ASSERT_LT(limit, total_ * 2 / 3);
    }
    for (int threads : {1, 3}) {
      const std::string cache = dir_ + "/cache-" + reader::OrderKindName(kind) + std::to_string(threads);
      auto remote = Open("s3://bkt/data/ds", cache, limit, /*download_threads=*/3);
      ASSERT_TRUE(remote);
      const reader::BatchLoaderOptions o = Options(kind, threads);
      uint64_t most = 0;
      const Got got = Run(remote, o, 2, [&] { most = std::max(most, CacheBytes(cache)); });
      EXPECT_TRUE(got == Run(local, o, 2)) << reader::OrderKindName(kind) << " threads " << threads;
      EXPECT_GT(most, 0u);
      EXPECT_LE(most, limit) << reader::OrderKindName(kind);
      EXPECT_LE(CacheBytes(cache), limit);
      // Streamed: shards were evicted and downloaded again in the second epoch.
      EXPECT_GT(remote->downloads(), 2u * shards_) << reader::OrderKindName(kind);
    }
  }
}

TEST_F(StoreStreamTest, ABlockShuffleLimitAcceptedAtCreateHoldsForEveryEpoch) {
  // The least the first epoch needs (issue 32: such a limit was accepted, and a later epoch's windows,
  // spanning other shards, needed more).
  auto local = Open(dir_ + "/ds", "");
  ASSERT_TRUE(local);
  reader::BatchLoaderOptions o = Options(OrderKind::kBlockShuffle, 2);
  o.order.seed = 1;
  uint64_t largest = 0;
  for (const auto& e : fs::directory_iterator(dir_ + "/ds")) {
    if (util::EndsWith(e.path().string(), ".tfrecord")) largest = std::max<uint64_t>(largest, e.file_size());
  }
  auto first = reader::BatchLoader::Create(Open("s3://bkt/data/ds", dir_ + "/probe", largest + 400), o);
  ASSERT_FALSE(first.ok());
  uint64_t limit = AtLeast(first.status());
  ASSERT_GT(limit, largest + 400) << first.status();
  auto l = reader::BatchLoader::Create(Open("s3://bkt/data/ds", dir_ + "/probe", limit), o);
  if (!l.ok()) {  // refused at Create, naming what every epoch may need
    ASSERT_EQ(l.status().code(), StatusCode::kInvalidArgument) << l.status();
    EXPECT_NE(l.status().message().find("in some epoch"), std::string::npos) << l.status();
    EXPECT_NE(l.status().message().find("block_size 4, window_blocks 2"), std::string::npos) << l.status();
    ASSERT_GT(AtLeast(l.status()), limit) << l.status();
    limit = AtLeast(l.status());
  }
  ASSERT_LT(limit, total_);  // still streams
  auto remote = Open("s3://bkt/data/ds", dir_ + "/cache", limit, /*download_threads=*/3);
  ASSERT_TRUE(remote);
  uint64_t most = 0;
  const int epochs = 12;
  const Got got = Run(remote, o, epochs, [&] { most = std::max(most, CacheBytes(dir_ + "/cache")); });
  EXPECT_TRUE(got == Run(local, o, epochs));
  EXPECT_LE(most, limit);
}

TEST_F(StoreStreamTest, ExtrasComeWithTheirBatchThroughASmallLimit) {
  // Read with the pixels, inside the plan: a split three times the limit streams with them (issue 32).
  auto ds = Open("s3://bkt/data/ds", dir_ + "/cache", total_ / 3);
  ASSERT_TRUE(ds);
  reader::BatchLoaderOptions o = Options(OrderKind::kSequential, 2);
  o.extras = {"image/class/label", "image/filename", "absent"};
  auto l = reader::BatchLoader::Create(ds, o);
  ASSERT_TRUE(l.ok()) << l.status();
  std::set<std::string> names;
  for (uint64_t b = 0; b < 2 * (*l)->batches_per_epoch(); ++b) {
    reader::Batch batch;
    ASSERT_TRUE((*l)->Next(&batch).ok());
    ASSERT_EQ(batch.extras.size(), batch.size);
    for (size_t i = 0; i < batch.size; ++i) {
      const std::vector<reader::ExtraValues>& e = batch.extras[i];
      ASSERT_EQ(e.size(), 3u);
      EXPECT_EQ(e[0].kind, example::FeatureKind::kInt64);
      EXPECT_EQ(e[0].ints, std::vector<int64_t>{batch.labels[i]});
      ASSERT_EQ(e[1].bytes.size(), 1u);
      names.insert(e[1].bytes[0]);
      EXPECT_EQ(e[2].kind, example::FeatureKind::kNone);
    }
  }
  EXPECT_EQ(names.size(), ds->size());
  EXPECT_LE(CacheBytes(dir_ + "/cache"), total_ / 3);
}

TEST_F(StoreStreamTest, GlobalShuffleOverTheLimitIsRefusedNamingBlockShuffle) {
  auto ds = Open("s3://bkt/data/ds", dir_ + "/cache", total_ / 3);
  ASSERT_TRUE(ds);
  auto l = reader::BatchLoader::Create(ds, Options(OrderKind::kShuffle, 2));
  ASSERT_EQ(l.status().code(), StatusCode::kInvalidArgument) << l.status();
  EXPECT_NE(l.status().message().find("cache_limit " + std::to_string(total_ / 3) + " bytes"), std::string::npos)
      << l.status();
  EXPECT_NE(l.status().message().find("block shuffle (OrderKind::kBlockShuffle; Python order=\"block-shuffle\")"),
            std::string::npos)
      << l.status();
  EXPECT_EQ(proxy_->Count("GET"), 1);  // the manifest only
}

TEST_F(StoreStreamTest, ALimitBelowWhatABatchNeedsIsRefusedWithTheBytes) {
  // Enough for the largest shard, not for a batch's shards plus one ahead.
  uint64_t largest = 0;
  for (const auto& e : fs::directory_iterator(dir_ + "/ds")) {
    const std::string n = e.path().filename().string();
    if (util::EndsWith(n, ".tfrecord")) largest = std::max<uint64_t>(largest, e.file_size());
  }
  auto ds = Open("s3://bkt/data/ds", dir_ + "/cache", largest + 400);
  ASSERT_TRUE(ds);
  reader::BatchLoaderOptions o = Options(OrderKind::kBlockShuffle, 2);
  o.batch_size = 16;
  auto l = reader::BatchLoader::Create(ds, o);
  ASSERT_EQ(l.status().code(), StatusCode::kInvalidArgument) << l.status();
  EXPECT_NE(l.status().message().find("cache_limit " + std::to_string(largest + 400) + " bytes cannot hold the "),
            std::string::npos)
      << l.status();
  EXPECT_NE(l.status().message().find("bytes that must be resident at once"), std::string::npos) << l.status();
}

TEST_F(StoreStreamTest, ADownloadErrorComesFromTheReadNamingTheObject) {
  std::string victim;
  for (const auto& e : fs::directory_iterator(dir_ + "/ds")) {
    const std::string n = e.path().filename().string();
    if (n.find("-00003-of-") != std::string::npos && util::EndsWith(n, ".tfrecord")) victim = n;
  }
  ASSERT_FALSE(victim.empty());
  std::string bytes = testing::ReadFileOrDie(dir_ + "/ds/" + victim);
  bytes[bytes.size() / 2] ^= 0x40;
  store::StoreConfig c = s3_->Config();
  ASSERT_TRUE(store::NewS3Store(c, "bkt", store::NewCurlTransport(c))->Put("data/ds/" + victim, bytes).ok());
  auto ds = Open("s3://bkt/data/ds", dir_ + "/cache");
  ASSERT_TRUE(ds);
  auto l = reader::BatchLoader::Create(ds, Options(OrderKind::kSequential, 2));
  ASSERT_TRUE(l.ok()) << l.status();
  Status s;
  reader::Batch batch;
  for (uint64_t b = 0; b < (*l)->batches_per_epoch() && s.ok(); ++b) s = (*l)->Next(&batch);
  ASSERT_EQ(s.code(), StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("s3://bkt/data/ds/" + victim), std::string::npos) << s;
  for (const std::string& f : testing::ListFilesRecursive(dir_ + "/cache")) {
    EXPECT_EQ(f.find(victim + ".libshard-partial"), std::string::npos) << f;
    EXPECT_NE(fs::path(f).filename().string(), victim) << f;
  }
}

}  // namespace
}  // namespace libshard

#include "libshard/reader/batch_loader.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <oneapi/tbb/info.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>
#include <thread>
#include <tuple>

#include "libshard/example/example_view.h"
#include "libshard/image/decode.h"
#include "libshard/image/pipeline.h"
#include "reader_fixtures.h"
#include "testutil.h"

namespace libshard::reader {
namespace {

using testing::FixtureOptions;
using testing::RunInForkChild;
using testing::WriteImageShard;

struct Written {
  std::shared_ptr<const Dataset> ds;
  std::vector<std::string> encoded;  // by global sample number
};

Written MakeDataset(const std::string& dir, const FixtureOptions& fo = {}, int shards = 2, int per_shard = 10) {
  Written w;
  std::vector<std::string> files;
  for (int s = 0; s < shards; ++s) {
    const std::string path = dir + "/d-" + std::to_string(s) + ".tfrecord";
    auto enc = WriteImageShard(path, per_shard, s * per_shard, fo);
    w.encoded.insert(w.encoded.end(), enc.begin(), enc.end());
    files.push_back(path);
  }
  auto ds = Dataset::Open(files);
  EXPECT_TRUE(ds.ok()) << ds.status();
  w.ds = std::move(*ds);
  return w;
}

// Batches of `batch_size` samples of the fixtures' size (32 x 24), as decoded.
BatchLoaderOptions FixtureSized(size_t batch_size) {
  BatchLoaderOptions o;
  o.batch_size = batch_size;
  o.width = 32;
  o.height = 24;
  return o;
}

std::vector<uint8_t> Copy(const Batch& b, const BatchLoaderOptions& o) {
  const size_t n = b.size * o.height * o.width * o.channels;
  std::vector<uint8_t> v(b.images, b.images + n);
  for (size_t i = 0; i < b.size; ++i) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(&b.labels[i]);
    v.insert(v.end(), p, p + 8);
  }
  return v;
}

TEST(BatchLoaderTest, PixelsEqualDecodeImageWhenNoResizeIsNeeded) {
  const std::string dir = testing::MakeTempDir();
  FixtureOptions fo;
  fo.width = 32;
  fo.height = 24;
  Written w = MakeDataset(dir, fo);
  BatchLoaderOptions o;
  o.batch_size = 8;
  o.width = 32;
  o.height = 24;
  o.threads = 2;
  auto loader = BatchLoader::Create(w.ds, o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  ASSERT_EQ((*loader)->batches_per_epoch(), 3u);  // 20 samples: 8 + 8 + 4
  uint64_t sample = 0;
  for (uint64_t b = 0; b < 3; ++b) {
    Batch batch;
    ASSERT_TRUE((*loader)->Next(&batch).ok());
    EXPECT_EQ(batch.position.epoch, 0u);
    EXPECT_EQ(batch.position.batch, b);
    EXPECT_EQ(batch.size, b < 2 ? 8u : 4u);
    for (size_t i = 0; i < batch.size; ++i, ++sample) {
      auto ref = image::DecodeImage(w.encoded[sample]);
      ASSERT_TRUE(ref.ok());
      ASSERT_EQ(ref->byte_size(), 32u * 24 * 3);
      EXPECT_EQ(std::memcmp(batch.images + i * ref->byte_size(), ref->data(), ref->byte_size()), 0) << sample;
      EXPECT_EQ(batch.labels[i], static_cast<int64_t>(sample));
    }
  }
  Batch next;  // the stream goes on into epoch 1
  ASSERT_TRUE((*loader)->Next(&next).ok());
  EXPECT_EQ(next.position.epoch, 1u);
  EXPECT_EQ(next.position.batch, 0u);
}

TEST(BatchLoaderTest, ResizedPixelsEqualTheImagePipeline) {
  const std::string dir = testing::MakeTempDir();
  FixtureOptions fo;
  fo.width = 64;
  fo.height = 48;
  fo.format = "png";
  Written w = MakeDataset(dir, fo, 1, 5);
  BatchLoaderOptions o;
  o.batch_size = 5;
  o.width = o.height = 16;
  o.channels = 1;
  auto loader = BatchLoader::Create(w.ds, o);
  ASSERT_TRUE(loader.ok());
  Batch batch;
  ASSERT_TRUE((*loader)->Next(&batch).ok());
  image::TransformSpec spec;
  spec.mode = image::ResizeMode::kCenterCrop;
  spec.width = spec.height = 16;
  image::DecodeOptions d;
  d.channels = image::ChannelMode::kGray;
  for (size_t i = 0; i < 5; ++i) {
    auto ref = image::DecodeAndTransform(w.encoded[i], d, spec);
    ASSERT_TRUE(ref.ok());
    EXPECT_EQ(std::memcmp(batch.images + i * 256, ref->data(), 256), 0) << i;
  }
}

TEST(BatchLoaderTest, RawArraysGoStraightIntoTheBatch) {
  for (const char* fmt : {"raw", "raw.zst"}) {
    const std::string dir = testing::MakeTempDir() + "/" + fmt;
    std::filesystem::create_directories(dir);
    FixtureOptions fo;
    fo.format = fmt;
    Written w = MakeDataset(dir, fo, 1, 4);
    BatchLoaderOptions o;
    o.batch_size = 4;
    o.width = fo.width;
    o.height = fo.height;
    auto loader = BatchLoader::Create(w.ds, o);
    ASSERT_TRUE(loader.ok());
    Batch batch;
    ASSERT_TRUE((*loader)->Next(&batch).ok());
    for (int i = 0; i < 4; ++i) {
      image::Image ref = testing::PatternImage(fo.width, fo.height, 3, i);
      EXPECT_EQ(std::memcmp(batch.images + i * ref.byte_size(), ref.data(), ref.byte_size()), 0) << fmt << i;
    }
  }
}

TEST(BatchLoaderTest, ResumeGivesIdenticalBatchesWhateverTheThreads) {
  const std::string dir = testing::MakeTempDir();
  Written w = MakeDataset(dir, {}, 3, 10);
  BatchLoaderOptions o;
  o.batch_size = 4;
  o.width = o.height = 16;
  o.augment = Augment::kRandomResizedCrop;
  o.order.kind = OrderKind::kShuffle;
  o.order.seed = 5;
  o.order.rank = 1;
  o.order.world_size = 2;  // 15 samples per rank, 4 batches per epoch
  o.threads = 2;
  auto a = BatchLoader::Create(w.ds, o);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ((*a)->batches_per_epoch(), 4u);
  std::vector<std::vector<uint8_t>> ref;
  Position saved;
  for (int i = 0; i < 10; ++i) {  // into epoch 2
    if (i == 6) saved = (*a)->position();
    Batch b;
    ASSERT_TRUE((*a)->Next(&b).ok());
    ref.push_back(Copy(b, o));
  }
  EXPECT_EQ(saved.epoch, 1u);
  EXPECT_EQ(saved.batch, 2u);
  EXPECT_NE(ref[0], ref[4]);  // epochs differ (shuffle and augmentation)
  o.threads = 1;
  o.prefetch = 1;
  auto b = BatchLoader::Create(w.ds, o);
  ASSERT_TRUE((*b)->Seek(saved).ok());
  for (int i = 6; i < 10; ++i) {
    Batch batch;
    ASSERT_TRUE((*b)->Next(&batch).ok());
    EXPECT_EQ(Copy(batch, o), ref[i]) << i;
  }
  // Seeking the first loader back works too, mid-stream.
  ASSERT_TRUE((*a)->Seek({0, 1}).ok());
  Batch again;
  ASSERT_TRUE((*a)->Next(&again).ok());
  EXPECT_EQ(Copy(again, o), ref[1]);
  EXPECT_EQ((*a)->Seek({0, 5}).code(), StatusCode::kInvalidArgument);
}

// threads = 0 is one thread per core, as for convert and verify (it was
// refused): options() says how many, and the batches are those of 1 thread.
TEST(BatchLoaderTest, ZeroThreadsIsOnePerCore) {
  Written w = MakeDataset(testing::MakeTempDir(), {}, 2, 7);
  BatchLoaderOptions o = FixtureSized(4);
  o.augment = Augment::kRandomResizedCrop;
  o.order.kind = OrderKind::kShuffle;
  std::vector<std::vector<uint8_t>> by_threads[2];
  for (int threads : {0, 1}) {
    o.threads = threads;
    auto loader = BatchLoader::Create(w.ds, o);
    ASSERT_TRUE(loader.ok()) << loader.status();
    EXPECT_EQ((*loader)->options().threads, threads == 0 ? tbb::info::default_concurrency() : 1);
    Batch b;
    while (by_threads[threads].size() < 5 && (*loader)->Next(&b).ok()) by_threads[threads].push_back(Copy(b, o));
  }
  EXPECT_EQ(by_threads[0].size(), 5u);  // into epoch 2
  EXPECT_EQ(by_threads[0], by_threads[1]);
}

TEST(BatchLoaderTest, RandomResizedCropMatchesItsOwnCropAndFlip) {
  const std::string dir = testing::MakeTempDir();
  FixtureOptions fo;
  fo.format = "png";  // lossless, so the crop can be checked exactly
  fo.width = 40;
  fo.height = 30;
  Written w = MakeDataset(dir, fo, 1, 6);
  BatchLoaderOptions o;
  o.batch_size = 6;
  o.width = o.height = 12;
  o.augment = Augment::kRandomResizedCrop;
  o.rrc.scale_min = o.rrc.scale_max = 0.3;
  o.filter = image::Filter::kNearest;
  auto loader = BatchLoader::Create(w.ds, o);
  Batch batch;
  ASSERT_TRUE((*loader)->Next(&batch).ok());
  // Each output pixel must exist in the source image (nearest sampling) and
  // different samples get different crops.
  std::set<std::vector<uint8_t>> distinct;
  for (int i = 0; i < 6; ++i) {
    auto src = image::DecodeImage(w.encoded[i]);
    std::set<uint32_t> colours;
    for (size_t p = 0; p < src->byte_size(); p += 3)
      colours.insert(src->data()[p] | src->data()[p + 1] << 8 | src->data()[p + 2] << 16);
    const uint8_t* out = batch.images + i * 12 * 12 * 3;
    for (size_t p = 0; p < 12 * 12 * 3; p += 3) {
      EXPECT_TRUE(colours.count(out[p] | out[p + 1] << 8 | out[p + 2] << 16)) << i;
    }
    distinct.insert(std::vector<uint8_t>(out, out + 12 * 12 * 3));
  }
  EXPECT_GT(distinct.size(), 1u);
}

TEST(BatchLoaderTest, CropDecodeGivesTheFullDecodesPixels) {
  const std::string dir = testing::MakeTempDir();
  for (auto [w, h, sub] :
       {std::tuple{300, 200, image::ChromaSubsampling::k420}, std::tuple{257, 333, image::ChromaSubsampling::k444}}) {
    // Photo-sized JPEGs so that the crops get DCT scaling and iMCU cropping.
    const std::string path = dir + "/big" + std::to_string(w) + ".tfrecord";
    {
      auto wr = record::RecordWriter::Create(path);
      for (int i = 0; i < 12; ++i) {
        image::JpegEncodeOptions jo;
        jo.subsampling = sub;
        example::ExampleBuilder b;
        b.AddBytes(keys::kEncoded, *image::EncodeJpeg(testing::PatternImage(w, h, 3, i), jo));
        b.AddInt64(keys::kLabel, i);
        ASSERT_TRUE((*wr)->Write(b.Serialize()).ok());
      }
      ASSERT_TRUE((*wr)->Close().ok());
    }
    std::shared_ptr<const Dataset> ds = std::move(*Dataset::Open({path}));
    for (auto filter : {image::Filter::kBilinear, image::Filter::kLanczos3}) {
      for (int channels : {3, 1}) {
        BatchLoaderOptions o;
        o.batch_size = 12;
        o.width = o.height = 32;
        o.channels = channels;
        o.filter = filter;
        o.augment = Augment::kRandomResizedCrop;
        o.order.seed = 11;
        auto fast = BatchLoader::Create(ds, o);
        o.crop_decode = false;
        auto full = BatchLoader::Create(ds, o);
        Batch a, b;
        ASSERT_TRUE((*fast)->Next(&a).ok());
        ASSERT_TRUE((*full)->Next(&b).ok());
        EXPECT_EQ(std::memcmp(a.images, b.images, 12 * 32 * 32 * channels), 0) << w << " " << channels;
      }
    }
  }
}

// dct_scale = false: each sample is exactly DecodeImage at full scale +
// Transform of the crop box the loader draws (RandomResizedCropOf: the
// geometry is the augment's, whatever the decode); crop decode or not. The
// default (DCT scaling) is today's DecodeAndTransform, and differs.
TEST(BatchLoaderTest, DctScaleOffGivesTheFullScalePixelsOfTheSameCrops) {
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/big.tfrecord";
  constexpr int kW = 400, kH = 300, kN = 16, kOut = 32;
  std::vector<std::string> jpegs;
  {
    auto wr = record::RecordWriter::Create(path);
    for (int i = 0; i < kN; ++i) {
      jpegs.push_back(*image::EncodeJpeg(testing::PatternImage(kW, kH, 3, i)));
      example::ExampleBuilder b;
      b.AddBytes(keys::kEncoded, jpegs.back());
      b.AddInt64(keys::kLabel, i);
      ASSERT_TRUE((*wr)->Write(b.Serialize()).ok());
    }
    ASSERT_TRUE((*wr)->Close().ok());
  }
  std::shared_ptr<const Dataset> ds = std::move(*Dataset::Open({path}));
  BatchLoaderOptions o;
  o.batch_size = kN;
  o.width = o.height = kOut;
  o.augment = Augment::kRandomResizedCrop;
  o.rrc.flip = false;
  o.order.seed = 5;
  const size_t px = kOut * kOut * 3;
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::vector<std::vector<uint8_t>> exact(kN), scaled(kN);
    for (int i = 0; i < kN; ++i) {
      image::TransformSpec spec;
      spec.crop = RandomResizedCropOf(o, epoch, i, kW, kH);
      spec.mode = image::ResizeMode::kStretch;
      spec.width = spec.height = kOut;
      image::PipelineOptions full_scale;
      full_scale.shrink_on_load = false;
      auto e = image::DecodeAndTransform(jpegs[i], {}, spec, full_scale);
      auto d = image::DecodeAndTransform(jpegs[i], {}, spec);
      ASSERT_TRUE(e.ok() && d.ok());
      exact[i].assign(e->data(), e->data() + px);
      scaled[i].assign(d->data(), d->data() + px);
    }
    int differ = 0;
    for (bool crop_decode : {true, false}) {
      for (bool dct_scale : {false, true}) {
        BatchLoaderOptions lo = o;
        lo.crop_decode = crop_decode;
        lo.dct_scale = dct_scale;
        auto loader = BatchLoader::Create(ds, lo);
        ASSERT_TRUE(loader.ok());
        Batch b;
        for (int e = 0; e <= epoch; ++e) ASSERT_TRUE((*loader)->Next(&b).ok());
        for (int i = 0; i < kN; ++i) {
          const auto& want = dct_scale ? scaled[i] : exact[i];
          EXPECT_EQ(std::memcmp(b.images + i * px, want.data(), px), 0)
              << "epoch " << epoch << " sample " << i << " crop_decode " << crop_decode << " dct " << dct_scale;
          differ += dct_scale && crop_decode && scaled[i] != exact[i];
        }
      }
    }
    EXPECT_GT(differ, kN / 2) << "the crops should mostly be DCT-scaled at " << kW << "x" << kH << " -> " << kOut;
  }
}

TEST(BatchLoaderTest, MasksGetTheImagesGeometry) {
  const std::string dir = testing::MakeTempDir();
  FixtureOptions fo;
  fo.masks = true;
  fo.width = 32;
  fo.height = 24;
  Written w = MakeDataset(dir, fo, 1, 3);
  BatchLoaderOptions o;
  o.batch_size = 3;
  o.width = 32;
  o.height = 24;
  o.masks = true;
  auto loader = BatchLoader::Create(w.ds, o);
  Batch batch;
  ASSERT_TRUE((*loader)->Next(&batch).ok());
  ASSERT_NE(batch.masks, nullptr);
  for (int i = 0; i < 3; ++i)
    for (int y = 0; y < 24; ++y)
      for (int x = 0; x < 32; ++x) ASSERT_EQ(batch.masks[i * 768 + y * 32 + x], (x / 4 + y / 4 + i) % 5);
  // Resized with nearest: every mask value stays a class value.
  o.width = o.height = 16;
  o.augment = Augment::kRandomResizedCrop;
  loader = BatchLoader::Create(w.ds, o);
  ASSERT_TRUE((*loader)->Next(&batch).ok());
  for (int i = 0; i < 3 * 256; ++i) EXPECT_LT(batch.masks[i], 5);
}

TEST(BatchLoaderTest, CallerBuffersAreFilledInTurn) {
  const std::string dir = testing::MakeTempDir();
  Written w = MakeDataset(dir, {}, 1, 8);
  BatchLoaderOptions o;
  o.batch_size = 2;
  o.width = 32;
  o.height = 24;
  std::vector<std::vector<uint8_t>> images(3, std::vector<uint8_t>(2 * 32 * 24 * 3));
  std::vector<std::vector<int64_t>> labels(3, std::vector<int64_t>(2));
  std::vector<BatchBuffers> bufs;
  for (int i = 0; i < 3; ++i) bufs.push_back({images[i].data(), labels[i].data(), nullptr});
  auto loader = BatchLoader::Create(w.ds, o, bufs);
  ASSERT_TRUE(loader.ok());
  for (int b = 0; b < 4; ++b) {
    Batch batch;
    ASSERT_TRUE((*loader)->Next(&batch).ok());
    EXPECT_EQ(batch.images, images[b % 3].data());
    EXPECT_EQ(batch.labels[1], 2 * b + 1);
  }
  bufs[1].labels = nullptr;
  EXPECT_EQ(BatchLoader::Create(w.ds, o, bufs).status().code(), StatusCode::kInvalidArgument);
}

TEST(BatchLoaderTest, OwnedBatchesStayIntactWhateverTheLoaderDoesNext) {
  const std::string dir = testing::MakeTempDir();
  Written w = MakeDataset(dir, {}, 2, 10);
  BatchLoaderOptions o = FixtureSized(3);
  o.order.kind = OrderKind::kShuffle;
  o.order.seed = 4;
  o.prefetch = 2;
  auto loader = BatchLoader::Create(w.ds, o);
  auto ref = BatchLoader::Create(w.ds, o);
  ASSERT_TRUE(loader.ok() && ref.ok());
  // Keep every batch of two epochs (more than the ring and the pool's cache
  // hold), then compare each with a second loader's batch.
  std::vector<std::pair<Batch, std::shared_ptr<BatchBlock>>> kept;
  for (uint64_t i = 0; i < 2 * (*loader)->batches_per_epoch(); ++i) {
    Batch b;
    std::shared_ptr<BatchBlock> owner;
    bool ready = false;
    while (!ready) ASSERT_TRUE((*loader)->NextOwned(&b, &owner, std::chrono::milliseconds(100), &ready).ok());
    ASSERT_NE(owner, nullptr);
    EXPECT_EQ(b.images, owner->buffers().images);
    kept.emplace_back(b, std::move(owner));
  }
  loader->reset();  // the batches outlive their loader
  for (const auto& [b, owner] : kept) {
    Batch r;
    ASSERT_TRUE((*ref)->Next(&r).ok());
    EXPECT_EQ(b.position, r.position);
    EXPECT_EQ(Copy(b, o), Copy(r, o)) << "epoch " << b.position.epoch << " batch " << b.position.batch;
  }
}

TEST(BatchLoaderTest, AConsumerThatLetsGoOfItsBatchesReusesTheirMemory) {
  const std::string dir = testing::MakeTempDir();
  Written w = MakeDataset(dir, {}, 2, 10);
  BatchLoaderOptions o = FixtureSized(2);
  o.prefetch = 2;
  auto pool = BatchPool::Heap(BatchLoader::ShapeOf(o), 5);
  ASSERT_TRUE(pool.ok());
  auto loader = BatchLoader::CreateWithPool(w.ds, o, *pool);
  ASSERT_TRUE(loader.ok()) << loader.status();
  for (int i = 0; i < 40; ++i) {
    Batch b;
    std::shared_ptr<BatchBlock> owner;
    bool ready = false;
    while (!ready) ASSERT_TRUE((*loader)->NextOwned(&b, &owner, std::chrono::milliseconds(100), &ready).ok());
    EXPECT_EQ(b.labels[0], static_cast<int64_t>((2 * i) % 20));
  }
  // The ring (3 slots) and one held batch: no new block after the first few.
  EXPECT_LE((*pool)->heap_blocks_made(), 5u);
  // Plain Next() lends its batch from the same pool.
  for (int i = 0; i < 10; ++i) {
    Batch b;
    ASSERT_TRUE((*loader)->Next(&b).ok());
  }
  EXPECT_LE((*pool)->heap_blocks_made(), 5u);
}

TEST(BatchLoaderTest, OwnedBatchesNeedAPoolOfTheirSize) {
  const std::string dir = testing::MakeTempDir();
  Written w = MakeDataset(dir, {}, 1, 4);
  BatchLoaderOptions o = FixtureSized(2);
  std::vector<uint8_t> images(2 * 32 * 24 * 3);
  std::vector<int64_t> labels(2);
  auto fixed = BatchLoader::Create(w.ds, o, {{images.data(), labels.data(), nullptr}});
  ASSERT_TRUE(fixed.ok());
  Batch b;
  std::shared_ptr<BatchBlock> owner;
  bool ready = true;
  EXPECT_EQ((*fixed)->NextOwned(&b, &owner, std::chrono::milliseconds(10), &ready).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_FALSE(ready);
  BatchShape small = BatchLoader::ShapeOf(o);
  small.image_bytes -= 1;
  EXPECT_EQ(BatchLoader::CreateWithPool(w.ds, o, *BatchPool::Heap(small, 1)).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(BatchLoader::CreateWithPool(w.ds, o, nullptr).status().code(), StatusCode::kInvalidArgument);
}

TEST(BatchLoaderTest, AForkChildOfAnOwnedBatchesLoaderRestartsWithItsOwnPool) {
#ifdef LIBSHARD_TEST_ASAN
  GTEST_SKIP() << "fork() with allocating threads can hang under AddressSanitizer's allocator";
#endif
  const std::string dir = testing::MakeTempDir();
  Written w = MakeDataset(dir, {}, 2, 10);
  BatchLoaderOptions o = FixtureSized(3);
  auto loader = BatchLoader::Create(w.ds, o);
  auto ref = BatchLoader::Create(w.ds, o);
  ASSERT_TRUE(loader.ok() && ref.ok());
  Batch b, r;
  std::shared_ptr<BatchBlock> held;
  bool ready = false;
  while (!ready) ASSERT_TRUE((*loader)->NextOwned(&b, &held, std::chrono::milliseconds(100), &ready).ok());
  ASSERT_TRUE((*ref)->Next(&r).ok());
  const std::vector<uint8_t> first = Copy(r, o);
  ASSERT_TRUE((*ref)->Next(&r).ok());
  const std::vector<uint8_t> second = Copy(r, o);
  const int rc = RunInForkChild(
      [&] {
        if (Copy(b, o) != first) return 1;  // the inherited batch is intact
        held.reset();
        Batch c;
        std::shared_ptr<BatchBlock> owner;
        bool ok = false;
        while (!ok) {
          if (!(*loader)->NextOwned(&c, &owner, std::chrono::milliseconds(100), &ok).ok()) return 2;
        }
        return Copy(c, o) == second ? 0 : 3;
      },
      20);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(Copy(b, o), first);
}

TEST(BatchLoaderTest, ABadSampleFailsItsBatchNamingTheRecord) {
  const std::string dir = testing::MakeTempDir();
  Written w = MakeDataset(dir, {}, 1, 4);
  // Append a record whose image is not an image.
  {
    const std::string path = dir + "/bad.tfrecord";
    auto wr = record::RecordWriter::Create(path);
    example::ExampleBuilder b;
    b.AddBytes(keys::kEncoded, "definitely not a jpeg");
    b.AddInt64(keys::kLabel, 1);
    ASSERT_TRUE((*wr)->Write(b.Serialize()).ok());
    ASSERT_TRUE((*wr)->Close().ok());
  }
  auto ds = Dataset::Open({dir + "/d-0.tfrecord", dir + "/bad.tfrecord"});
  ASSERT_TRUE(ds.ok());
  BatchLoaderOptions o;
  o.batch_size = 4;
  o.width = 32;
  o.height = 24;
  auto loader = BatchLoader::Create(std::move(*ds), o);
  Batch batch;
  ASSERT_TRUE((*loader)->Next(&batch).ok());
  Status s = (*loader)->Next(&batch);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("bad.tfrecord: record 0 at byte 0"), std::string::npos) << s;
  EXPECT_EQ((*loader)->Next(&batch), s);  // sticky until Seek
  ASSERT_TRUE((*loader)->Seek({0, 0}).ok());
  EXPECT_TRUE((*loader)->Next(&batch).ok());
}

TEST(BatchLoaderTest, SkipReplacesABadRecordWithTheNextSampleWhateverTheThreads) {
  const std::string dir = testing::MakeTempDir();
  Written w = MakeDataset(dir, {}, 1, 6);  // labels 0..5
  {
    const std::string path = dir + "/bad.tfrecord";
    auto wr = record::RecordWriter::Create(path);
    example::ExampleBuilder b;
    b.AddBytes(keys::kEncoded, "definitely not a jpeg");
    b.AddInt64(keys::kLabel, 99);
    ASSERT_TRUE((*wr)->Write(b.Serialize()).ok());
    ASSERT_TRUE((*wr)->Close().ok());
  }
  std::vector<std::vector<int64_t>> by_threads;
  for (int threads : {1, 3}) {
    // Sample 6 (the bad record) is the second batch's first: the order's next sample (0, wrapping) takes its place.
    auto ds = Dataset::Open({dir + "/d-0.tfrecord", dir + "/bad.tfrecord"});
    ASSERT_TRUE(ds.ok());
    BatchLoaderOptions o = FixtureSized(4);
    o.threads = threads;
    o.on_error = BatchLoaderOptions::OnError::kSkip;
    auto loader = BatchLoader::Create(std::move(*ds), o);
    ASSERT_TRUE(loader.ok());
    std::vector<int64_t> labels;
    for (int b = 0; b < 2; ++b) {
      Batch batch;
      ASSERT_TRUE((*loader)->Next(&batch).ok());
      labels.insert(labels.end(), batch.labels, batch.labels + batch.size);
    }
    EXPECT_EQ(labels, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 0})) << "threads " << threads;
    EXPECT_EQ((*loader)->BatchSamples({0, 1}), (std::vector<uint64_t>{4, 5, 0})) << "the replacement is named";
    EXPECT_EQ((*loader)->BatchSamples({0, 0}), (std::vector<uint64_t>{0, 1, 2, 3}));
    const std::vector<SkippedRecord> skipped = (*loader)->skipped();
    ASSERT_EQ(skipped.size(), 1u);
    EXPECT_EQ(skipped[0].path, dir + "/bad.tfrecord");
    EXPECT_EQ(skipped[0].record, 0u);
    EXPECT_EQ(skipped[0].offset, 0u);
    EXPECT_FALSE(skipped[0].reason.empty());
    by_threads.push_back(labels);
  }
  EXPECT_EQ(by_threads[0], by_threads[1]);
}

// `n` records whose image is not an image (label 99).
void WriteBadShard(const std::string& path, int n) {
  auto wr = record::RecordWriter::Create(path);
  ASSERT_TRUE(wr.ok()) << wr.status();
  for (int i = 0; i < n; ++i) {
    example::ExampleBuilder b;
    b.AddBytes(keys::kEncoded, "definitely not a jpeg");
    b.AddInt64(keys::kLabel, 99);
    ASSERT_TRUE((*wr)->Write(b.Serialize()).ok());
  }
  ASSERT_TRUE((*wr)->Close().ok());
}

// Global batch k, as the ranks' batch k together (rank order).
std::vector<int64_t> GlobalBatch(std::vector<std::unique_ptr<BatchLoader>>& ranks) {
  std::vector<int64_t> labels;
  for (auto& l : ranks) {
    Batch b;
    EXPECT_TRUE(l->Next(&b).ok());
    labels.insert(labels.end(), b.labels, b.labels + b.size);
  }
  return labels;
}

TEST(BatchLoaderTest, ElasticResumeContinuesTheGlobalOrderAndKeepsTheSkips) {
  // Samples 0..10 (labels 0..10), 11 and 12 bad, 13..23 (labels 11..21).
  const std::string dir = testing::MakeTempDir();
  MakeDataset(dir, {}, 2, 11);
  WriteBadShard(dir + "/bad.tfrecord", 2);
  auto opened = Dataset::Open({dir + "/d-0.tfrecord", dir + "/bad.tfrecord", dir + "/d-1.tfrecord"});
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::shared_ptr<const Dataset> ds = std::move(*opened);
  auto make = [&](int world, size_t batch) {
    std::vector<std::unique_ptr<BatchLoader>> ranks;
    for (int r = 0; r < world; ++r) {
      BatchLoaderOptions o = FixtureSized(batch);
      o.order.rank = r;
      o.order.world_size = world;
      o.on_error = BatchLoaderOptions::OnError::kSkip;
      ranks.push_back(std::move(BatchLoader::Create(ds, o).value()));
    }
    return ranks;
  };
  // 2 ranks x 3: global batches of 6. Bad sample 11 is replaced by the next
  // of the global order that decodes (12 is bad too: 13, label 11), on
  // whichever rank it falls.
  const std::vector<std::vector<int64_t>> want = {
      {0, 1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11}, {11, 11, 12, 13, 14, 15}, {16, 17, 18, 19, 20, 21}};
  auto two = make(2, 3);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(GlobalBatch(two), want[k]) << "uninterrupted global batch " << k;
  // Interrupted after 2 global batches, resumed on 3 ranks x 2 (the same
  // global batch): the same batches, sample for sample.
  two = make(2, 3);
  for (int k = 0; k < 2; ++k) GlobalBatch(two);
  std::vector<SkippedRecord> saved;
  for (auto& l : two) {
    const GlobalPosition g = l->global_position().value();
    EXPECT_EQ(g, (GlobalPosition{0, 12}));  // every rank says the same
    for (const SkippedRecord& r : l->skipped()) saved.push_back(r);
  }
  // 11 and 12, met by rank 1 (12 perhaps by rank 0 too, decoding ahead):
  // restoring a record twice lists it once.
  std::set<uint64_t> saved_samples;
  for (const SkippedRecord& r : saved) saved_samples.insert(r.sample);
  EXPECT_EQ(saved_samples, (std::set<uint64_t>{11, 12}));
  auto three = make(3, 2);
  for (auto& l : three) {
    ASSERT_TRUE(l->RestoreSkipped(saved).ok());
    ASSERT_TRUE(l->SeekGlobal({0, 12}).ok());
    EXPECT_EQ(l->batches_per_epoch(), 4u);  // a whole epoch: 24 / 6
    EXPECT_EQ(l->position(), (Position{0, 0, 12}));
  }
  for (int k = 2; k < 4; ++k) EXPECT_EQ(GlobalBatch(three), want[k]) << "resumed global batch " << k;
  for (auto& l : three) {
    EXPECT_EQ(l->global_position().value(), (GlobalPosition{1, 0}));  // the next epoch, from its start
    ASSERT_EQ(l->skipped().size(), 2u);                               // sample 12 met again by rank 0: listed once
    EXPECT_EQ(l->skipped()[1].path, dir + "/bad.tfrecord");
    EXPECT_EQ(l->skipped()[0].sample + l->skipped()[1].sample, 23u);
  }
  // The next epoch is the uninterrupted run's.
  for (int k = 0; k < 1; ++k) EXPECT_EQ(GlobalBatch(three), want[k]);
  // A record that is not this dataset's is refused.
  SkippedRecord wrong = saved[0];
  wrong.sample = 11;  // bad.tfrecord's record 0
  wrong.record = 1;
  EXPECT_EQ(three[0]->RestoreSkipped({wrong}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(three[0]->SeekGlobal({0, 25}).code(), StatusCode::kInvalidArgument);
}

TEST(BatchLoaderTest, ReadsTensorFlowWrittenFilesThroughAKeyMapping) {
  // tfx's CIFAR-10 sample (PNG under "image", label "label") and flowers
  // sample (JPEGs of assorted sizes under "image_raw").
  const std::string cifar = testing::SharedPath("interop/tfrecord/tfx_cifar10_train.tfrecord");
  const std::string flowers = testing::SharedPath("interop/tfrecord/tfx_flowers_jpeg.tfrecord");
  if (cifar.empty() || flowers.empty()) GTEST_SKIP() << "shared interop data not found";
  DatasetOptions dopt;
  dopt.keys.image = "image";
  dopt.keys.label = "label";
  std::shared_ptr<const Dataset> ds = std::move(*Dataset::Open({cifar}, dopt));
  ASSERT_EQ(ds->size(), 128u);
  BatchLoaderOptions o;
  o.batch_size = 50;
  o.width = o.height = 32;
  auto loader = BatchLoader::Create(ds, o);
  ASSERT_TRUE(loader.ok());
  RecordBuffer buf;
  for (uint64_t b = 0; b < 3; ++b) {
    Batch batch;
    ASSERT_TRUE((*loader)->Next(&batch).ok());
    for (size_t i = 0; i < batch.size; ++i) {
      std::string_view rec;
      ASSERT_TRUE(ds->ReadRecord(b * 50 + i, &buf, &rec).ok());
      auto ex = example::ExampleView::Parse(rec);
      example::FeatureView img, label;
      ASSERT_TRUE(ex->Find("image", &img) && ex->Find("label", &label));
      auto ref = image::DecodeImage(img.bytes(0));
      ASSERT_TRUE(ref.ok());
      EXPECT_EQ(std::memcmp(batch.images + i * 3072, ref->data(), 3072), 0);
      EXPECT_EQ(batch.labels[i], label.int64(0));
    }
  }
  dopt.keys.image = "image_raw";
  ds = std::move(*Dataset::Open({flowers}, dopt));
  ASSERT_EQ(ds->size(), 25u);
  o.batch_size = 25;
  o.width = o.height = 64;
  loader = BatchLoader::Create(ds, o);
  Batch batch;
  ASSERT_TRUE((*loader)->Next(&batch).ok());
  image::TransformSpec spec;
  spec.mode = image::ResizeMode::kCenterCrop;
  spec.width = spec.height = 64;
  for (size_t i = 0; i < 25; ++i) {
    std::string_view rec;
    ASSERT_TRUE(ds->ReadRecord(i, &buf, &rec).ok());
    example::FeatureView img;
    ASSERT_TRUE(example::ExampleView::Parse(rec)->Find("image_raw", &img));
    auto ref = image::DecodeAndTransform(img.bytes(0), {}, spec);
    ASSERT_TRUE(ref.ok());
    EXPECT_EQ(std::memcmp(batch.images + i * 64 * 64 * 3, ref->data(), 64 * 64 * 3), 0) << i;
  }
}

// zstd frame of `size` zero bytes, compressed in pieces (no buffer of `size`).
std::string ZstdZeros(uint64_t size) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setPledgedSrcSize(cctx, size);
  std::string out;
  std::vector<char> zeros(1 << 20, 0), buf(ZSTD_CStreamOutSize());
  uint64_t left = size;
  for (;;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(left, zeros.size()));
    left -= n;
    ZSTD_inBuffer in{zeros.data(), n, 0};
    const ZSTD_EndDirective mode = left == 0 ? ZSTD_e_end : ZSTD_e_continue;
    size_t rest = 0;
    do {
      ZSTD_outBuffer o{buf.data(), buf.size(), 0};
      rest = ZSTD_compressStream2(cctx, &o, &in, mode);
      out.append(buf.data(), o.pos);
    } while (mode == ZSTD_e_end ? rest != 0 : in.pos < in.size);
    if (left == 0) break;
  }
  ZSTD_freeCCtx(cctx);
  return out;
}

TEST(BatchLoaderTest, OutOfMemoryIsAnErrorForItsBatchNotAnAbort) {
#ifdef LIBSHARD_TEST_ASAN
  GTEST_SKIP() << "address space limits do not work under AddressSanitizer";
#endif
  const std::string dir = testing::MakeTempDir();
  const std::string path = dir + "/huge.tfrecord";
  {
    // 9000 x 9000 x 4 stated in a record of a few KB: within the pixel limit
    // (so the record contract lets it through), 324 MB to decode.
    auto wr = record::RecordWriter::Create(path);
    ASSERT_TRUE(wr.ok());
    example::ExampleBuilder b;
    b.AddBytes(keys::kEncoded, ZstdZeros(uint64_t{9000} * 9000 * 4));
    b.AddBytes(keys::kFormat, "raw.zst");
    const int64_t shape[3] = {9000, 9000, 4};
    b.AddInt64List(keys::kShape, shape, 3);
    b.AddBytes(keys::kDtype, "uint8");
    ASSERT_TRUE((*wr)->Write(b.Serialize()).ok());
    ASSERT_TRUE((*wr)->Close().ok());
  }
  const std::string report = dir + "/report.txt";
  const int rc = RunInForkChild([&] {
    auto ds = Dataset::Open({path});
    if (!ds.ok()) return 3;
    BatchLoaderOptions o;
    o.batch_size = 1;
    o.width = o.height = 16;
    o.threads = 2;
    auto loader = BatchLoader::Create(std::shared_ptr<const Dataset>(std::move(*ds)), o);
    if (!loader.ok()) return 4;
    if (!testing::LimitAddressSpace(uint64_t{256} << 20)) return 5;
    Batch batch;
    const Status s = (*loader)->Next(&batch);
    testing::WriteFileOrDie(report, s.ToString());
    if (s.code() != StatusCode::kResourceExhausted) return 6;
    return (*loader)->Next(&batch) == s ? 0 : 7;  // the error stays, as any batch error does
  });
  EXPECT_EQ(rc, 0) << "child: " << (std::filesystem::exists(report) ? testing::ReadFileOrDie(report) : "no report");
  EXPECT_EQ(testing::ReadFileOrDie(report), "RESOURCE_EXHAUSTED: out of memory decoding " + path + " record 0");
}

TEST(BatchLoaderTest, AForkChildRestartsTheLoaderWhereItStood) {
#ifdef LIBSHARD_TEST_ASAN
  // GCC 12's libasan does not lock its allocator across fork(): a child forked
  // while a decode thread is inside malloc can hang there (2 of 6 runs here),
  // which glibc's malloc (fork-safe) never does; 20 of 20 release runs pass.
  GTEST_SKIP() << "fork() with allocating threads can hang under AddressSanitizer's allocator";
#endif
  const std::string dir = testing::MakeTempDir();
  Written w = MakeDataset(dir, {}, 2, 10);
  BatchLoaderOptions o = FixtureSized(3);
  o.threads = 3;
  o.order.kind = OrderKind::kShuffle;
  o.order.seed = 9;
  auto loader = BatchLoader::Create(w.ds, o);
  ASSERT_TRUE(loader.ok());
  // What the batches after the first two must be, from a loader of its own.
  auto ref = BatchLoader::Create(w.ds, o);
  std::vector<std::vector<uint8_t>> expected;
  for (int b = 0; b < 10; ++b) {
    Batch batch;
    ASSERT_TRUE((*ref)->Next(&batch).ok());
    if (b >= 2) expected.push_back(Copy(batch, o));
  }
  Batch batch;
  ASSERT_TRUE((*loader)->Next(&batch).ok());
  ASSERT_TRUE((*loader)->Next(&batch).ok());  // the producer is running, batches prefetched
  for (int round = 0; round < 2; ++round) {
    const int rc = RunInForkChild(
        [&] {
          for (size_t i = 0; i < expected.size(); ++i) {
            Batch b;
            if (!(*loader)->Next(&b).ok()) return 10;
            if (Copy(b, o) != expected[i]) return 11 + static_cast<int>(i);
          }
          loader->reset();  // joins the child's own producer
          // A loader made in the child works too.
          auto fresh = BatchLoader::Create(w.ds, o);
          Batch b;
          if (!fresh.ok() || !(*fresh)->Seek({0, 2}).ok() || !(*fresh)->Next(&b).ok()) return 30;
          return Copy(b, o) == expected[0] ? 0 : 31;
        },
        20);
    EXPECT_EQ(rc, 0) << "round " << round;
  }
  // The parent's loader is untouched by its children.
  ASSERT_TRUE((*loader)->Next(&batch).ok());
  EXPECT_EQ(Copy(batch, o), expected[0]);
}

TEST(BatchLoaderTest, SeekRefusesPositionsPastTheLastEpoch) {
  const std::string dir = testing::MakeTempDir();
  Written w = MakeDataset(dir, {}, 1, 4);
  BatchLoaderOptions o = FixtureSized(2);
  auto loader = BatchLoader::Create(w.ds, o);
  ASSERT_TRUE(loader.ok());
  Status s = (*loader)->Seek({~uint64_t{0}, 0});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "epoch 18446744073709551615 is past the last epoch (9223372036854775807)");
  EXPECT_EQ((*loader)->Seek({Position::kMaxEpoch, 2}).message(), "batch 2 of the last epoch has no next epoch");
  EXPECT_EQ((*loader)->Seek({0, 3}).message(), "batch 3 is past the epoch's 2 batches");
  // The last epoch itself is an ordinary epoch.
  ASSERT_TRUE((*loader)->Seek({Position::kMaxEpoch, 1}).ok());
  Batch batch;
  ASSERT_TRUE((*loader)->Next(&batch).ok());
  EXPECT_EQ(batch.position, (Position{Position::kMaxEpoch, 1}));
  EXPECT_EQ(batch.size, 2u);
  EXPECT_EQ((*loader)->Next(&batch).code(), StatusCode::kOutOfRange);
}

TEST(BatchLoaderTest, NextForWaitsAtMostItsTime) {
  const std::string dir = testing::MakeTempDir();
  Written w = MakeDataset(dir, {}, 1, 8);
  BatchLoaderOptions o = FixtureSized(2);
  auto polled = BatchLoader::Create(w.ds, o);
  auto plain = BatchLoader::Create(w.ds, o);
  for (int b = 0; b < 6; ++b) {
    Batch want, got;
    ASSERT_TRUE((*plain)->Next(&want).ok());
    bool ready = false;
    int polls = 0;
    while (!ready) {
      ASSERT_TRUE((*polled)->NextFor(&got, std::chrono::milliseconds(0), &ready).ok());
      ++polls;
      ASSERT_LT(polls, 1000000);
    }
    EXPECT_EQ(got.position, want.position);
    EXPECT_EQ(Copy(got, o), Copy(want, o));
  }
}

TEST(BatchLoaderTest, MasksAreRefusedWhenTheManifestSaysThereAreNone) {
  const std::string dir = testing::MakeTempDir();
  WriteImageShard(dir + "/train-00000-of-00001.tfrecord", 2, 0);
  auto manifest = [&](bool masks) {
    testing::WriteFileOrDie(dir + "/manifest.json", std::string(R"({"format": "libshard.manifest/1", "complete": true,
      "schema": [{"key": "image/encoded", "kind": "bytes", "required": true},
                 {"key": "image/segmentation/class/encoded", "kind": "bytes", "required": )") +
                                                        (masks ? "true" : "false") + R"(}],
      "splits": [{"name": "train", "records": "2", "shards": [
        {"file": "train-00000-of-00001.tfrecord", "records": "2"}]}]})");
    return std::shared_ptr<const Dataset>(std::move(*Dataset::Open({dir})));
  };
  BatchLoaderOptions o;
  o.masks = true;
  auto refused = BatchLoader::Create(manifest(false), o);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "masks requested, but the manifest's schema has no \"image/segmentation/class/encoded\" in every record "
            "(shards without masks)");
  EXPECT_TRUE(BatchLoader::Create(manifest(true), o).ok());
  o.masks = false;
  EXPECT_TRUE(BatchLoader::Create(manifest(false), o).ok());
}

TEST(BatchLoaderTest, RejectsBadOptions) {
  const std::string dir = testing::MakeTempDir();
  Written w = MakeDataset(dir, {}, 1, 2);
  BatchLoaderOptions o;
  o.channels = 4;
  EXPECT_EQ(BatchLoader::Create(w.ds, o).status().code(), StatusCode::kInvalidArgument);
  o = {};
  o.resize = image::ResizeMode::kKeepRatio;
  EXPECT_EQ(BatchLoader::Create(w.ds, o).status().code(), StatusCode::kInvalidArgument);
  o = {};
  o.threads = -1;
  EXPECT_EQ(BatchLoader::Create(w.ds, o).status().message(), "threads must be in 0..256 (0: one per core)");
  o.threads = 257;
  EXPECT_EQ(BatchLoader::Create(w.ds, o).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseAugment("random-resized-crop").value(), Augment::kRandomResizedCrop);
  EXPECT_FALSE(ParseAugment("mixup").ok());
}

// issue 21: batch_size=2000 on 37 samples allocated 925 MB (10 s); larger
// values threw std::bad_alloc or std::length_error out of the allocation.
TEST(BatchLoaderTest, OwnBuffersHoldNoMoreThanAnEpochAndAreBoundedByMemory) {
  const std::string dir = testing::MakeTempDir();
  Written w = MakeDataset(dir, {}, 1, 3);
  BatchLoaderOptions o = FixtureSized(size_t{1} << 40);  // 2^40 x 32 x 24 x 3 bytes: beyond any memory
  auto loader = BatchLoader::Create(w.ds, o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  Batch b;
  ASSERT_TRUE((*loader)->Next(&b).ok());
  EXPECT_EQ(b.size, 3u);
  EXPECT_EQ((*loader)->batches_per_epoch(), 1u);

  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0 || static_cast<double>(pages) * page > 200e9) {
    GTEST_SKIP() << "physical memory unknown or over 200 GB: the bound is not reached by these sizes";
  }
  // Three 65535 x 65535 x 3 float32 samples are 154 GB a slot.
  o = FixtureSized(64);
  o.width = o.height = 65535;
  o.dtype = PixelType::kFloat32;
  auto big = BatchLoader::Create(w.ds, o);
  ASSERT_EQ(big.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(
      std::string(big.status().message())
          .rfind("batch_size: 3 buffers (prefetch 2 + 1) of 3 samples of 65535x65535x3 float32 would need 463.8 GB, "
                 "more than half of this machine's ",
                 0),
      0u)
      << big.status().message();
  // A prefetch beyond memory names prefetch.
  o = FixtureSized(2);
  o.prefetch = size_t{1} << 40;
  auto deep = BatchLoader::Create(w.ds, o);
  ASSERT_EQ(deep.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(
      std::string(deep.status().message())
          .rfind(
              "prefetch: 1099511627777 buffers (prefetch 1099511627776 + 1) of 2 samples of 24x32x3 uint8 would need ",
              0),
      0u)
      << deep.status();
}

// issue 21: with no size given (height = width = 0), the stored size when
// the manifest says every image has it; else an error naming the sizes.
TEST(BatchLoaderTest, ZeroSizeTakesTheStoredSizeFromTheManifest) {
  const std::string dir = testing::MakeTempDir();
  WriteImageShard(dir + "/train-00000-of-00001.tfrecord", 4, 0);  // 32 x 24 RGB
  auto manifest = [&](const std::string& sizes, const std::string& channels) {
    testing::WriteFileOrDie(dir + "/manifest.json", R"({"format": "libshard.manifest/1", "complete": true,
      "options": {"resize_mode": "none"},
      "splits": [{"name": "train", "records": "4", "stats": {"source_sizes": )" +
                                                        sizes + R"(, "channels": )" + channels + R"(}, "shards": [
        {"file": "train-00000-of-00001.tfrecord", "records": "4"}]}]})");
    return std::shared_ptr<const Dataset>(std::move(*Dataset::Open({dir})));
  };
  BatchLoaderOptions o;
  o.width = o.height = o.channels = 0;
  auto loader = BatchLoader::Create(
      manifest(R"([{"name": "32x24", "count": "4"}])", R"([{"count": "3072"}, {"count": "3072"}, {"count": "3072"}])"),
      o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  EXPECT_EQ((*loader)->options().width, 32);
  EXPECT_EQ((*loader)->options().height, 24);
  EXPECT_EQ((*loader)->options().channels, 3);
  Batch b;
  ASSERT_TRUE((*loader)->Next(&b).ok());
  // Gray stored images: one channel.
  loader = BatchLoader::Create(manifest(R"([{"name": "32x24", "count": "4"}])", R"([{"count": "3072"}])"), o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  EXPECT_EQ((*loader)->options().channels, 1);
  auto mixed = BatchLoader::Create(
      manifest(R"([{"name": "32x24", "count": "3"}, {"name": "28x28", "count": "1"}])", R"([])"), o);
  ASSERT_EQ(mixed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(mixed.status().message(),
            "image_size: not given, and the stored images do not all have one size (32x24, 28x28); give the output "
            "size (image_size=(height, width))");
  // A size given is used whatever is stored.
  o.width = 8;
  o.height = 8;
  loader = BatchLoader::Create(
      manifest(R"([{"name": "32x24", "count": "3"}, {"name": "28x28", "count": "1"}])", R"([])"), o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  EXPECT_EQ((*loader)->options().channels, 3);
}

}  // namespace
}  // namespace libshard::reader

namespace libshard::reader {
namespace {

// Issue 32 item 4: a dataset of 0 records says "no samples" first, whether
// or not the image size is given (not something about image_size).
TEST(BatchLoaderTest, AnEmptyDatasetSaysNoSamples) {
  const std::string dir = testing::MakeTempDir();
  Written w = MakeDataset(dir, {}, 1, 0);
  ASSERT_NE(w.ds, nullptr);
  ASSERT_EQ(w.ds->size(), 0u);
  for (BatchLoaderOptions o : {FixtureSized(4), BatchLoaderOptions()}) {
    o.batch_size = 4;
    auto loader = BatchLoader::Create(w.ds, o);
    ASSERT_EQ(loader.status().code(), StatusCode::kInvalidArgument) << loader.status();
    EXPECT_EQ(loader.status().message(), "no samples: the sources hold 0 records (1 shard(s), the first " + dir +
                                             "/d-0.tfrecord); an empty dataset cannot be loaded");
  }
}

}  // namespace
}  // namespace libshard::reader

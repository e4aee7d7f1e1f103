#include "libshard/reader/sample_decoder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "libshard/reader/batch_loader.h"
#include "reader_fixtures.h"
#include "testutil.h"

namespace libshard::reader {
namespace {

using testing::FixtureOptions;
using testing::WriteImageShard;

std::shared_ptr<const Dataset> MakeDataset(const std::string& dir, const FixtureOptions& fo, int shards,
                                           int per_shard) {
  std::vector<std::string> files;
  for (int s = 0; s < shards; ++s) {
    files.push_back(dir + "/d-" + std::to_string(s) + ".tfrecord");
    WriteImageShard(files.back(), per_shard, s * per_shard, fo);
  }
  auto ds = Dataset::Open(files);
  EXPECT_TRUE(ds.ok()) << ds.status();
  return std::shared_ptr<const Dataset>(std::move(*ds));
}

// The decoder alone gives each sample exactly as the loader's batches hold
// it, augmentation of its epoch included, in any layout and dtype: the loader
// is composed of it, and map-style access (libshard.Dataset[i]) relies on it.
TEST(SampleDecoderTest, GivesEachSampleAsTheLoadersBatchesHoldIt) {
  FixtureOptions fo;
  fo.format = "png";
  fo.width = 40;
  fo.height = 30;
  auto ds = MakeDataset(testing::MakeTempDir(), fo, 2, 7);
  for (PixelType dtype : {PixelType::kUint8, PixelType::kFloat32}) {
    BatchLoaderOptions o;
    o.batch_size = 4;
    o.width = 16;
    o.height = 12;
    o.augment = Augment::kRandomResizedCrop;
    o.order.kind = OrderKind::kShuffle;
    o.order.seed = 7;
    o.dtype = dtype;
    if (dtype != PixelType::kUint8) {
      o.layout = Layout::kNCHW;
      o.mean = {0.5, 0.4, 0.3};
      o.std = {0.2, 0.25, 0.3};
    }
    auto loader = BatchLoader::Create(ds, o);
    ASSERT_TRUE(loader.ok()) << loader.status();
    auto decoder = SampleDecoder::Create(ds, o);
    ASSERT_TRUE(decoder.ok()) << decoder.status();
    ASSERT_EQ(decoder->sample_bytes(), 16u * 12 * 3 * PixelTypeSize(dtype));
    std::vector<uint8_t> image(decoder->sample_bytes());
    int checked = 0;
    for (uint64_t b = 0; b < 2 * (*loader)->batches_per_epoch(); ++b) {
      Batch batch;
      ASSERT_TRUE((*loader)->Next(&batch).ok());
      const std::vector<uint64_t> samples = (*loader)->BatchSamples(batch.position);
      ASSERT_EQ(samples.size(), batch.size);
      for (size_t i = 0; i < batch.size; ++i) {
        int64_t label = -2;
        ASSERT_TRUE(decoder->Decode(samples[i], batch.position.epoch, image.data(), nullptr, &label).ok());
        EXPECT_EQ(label, batch.labels[i]);
        EXPECT_EQ(std::memcmp(image.data(), batch.images + i * image.size(), image.size()), 0)
            << "epoch " << batch.position.epoch << " sample " << samples[i];
        ++checked;
      }
    }
    EXPECT_EQ(checked, 28);
    // Another epoch draws other crops.
    std::vector<uint8_t> e0(image.size()), e1(image.size());
    int64_t label = 0;
    int differ = 0;
    for (uint64_t s = 0; s < ds->size(); ++s) {
      ASSERT_TRUE(decoder->Decode(s, 0, e0.data(), nullptr, &label).ok());
      ASSERT_TRUE(decoder->Decode(s, 1, e1.data(), nullptr, &label).ok());
      differ += e0 != e1;
    }
    EXPECT_GT(differ, 0);
  }
}

TEST(SampleDecoderTest, ChecksTheOptionsAndTheSampleNumber) {
  auto ds = MakeDataset(testing::MakeTempDir(), {}, 1, 3);
  BatchLoaderOptions o;
  EXPECT_EQ(SampleDecoder::Create(nullptr, o).status().code(), StatusCode::kInvalidArgument);
  o.channels = 4;
  EXPECT_EQ(SampleDecoder::Create(ds, o).status().message(), "channels must be 1 or 3");
  o = {};
  o.dtype = PixelType::kUint8;
  o.mean = {0.5, 0.5, 0.5};  // normalisation needs a float dtype
  EXPECT_EQ(SampleDecoder::Create(ds, o).status().code(), StatusCode::kInvalidArgument);
  o = {};
  o.width = o.height = 8;
  o.threads = 0;
  auto d = SampleDecoder::Create(ds, o);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_GE(d->options().threads, 1);  // resolved
  EXPECT_EQ(d->mask_bytes(), 0u);
  std::vector<uint8_t> image(d->sample_bytes());
  uint8_t mask[64];
  std::memset(mask, 0xAB, sizeof(mask));
  int64_t label = -2;
  SampleBoxes boxes;
  boxes.dropped = 5;
  ASSERT_TRUE(d->Decode(2, 0, image.data(), mask, &label, nullptr, &boxes).ok());
  EXPECT_EQ(label, 2);
  EXPECT_EQ(mask[0], 0xAB);      // no masks asked for: the mask is not touched
  EXPECT_EQ(boxes.dropped, 0u);  // no boxes asked for: cleared
  const Status past = d->Decode(3, 0, image.data(), nullptr, &label);
  EXPECT_EQ(past.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(past.message(), "sample 3 out of range (3 samples)");
  SampleDecoder empty;
  EXPECT_EQ(empty.Decode(0, 0, image.data(), nullptr, &label).code(), StatusCode::kOutOfRange);
}

// Decode() runs on many threads at once (the loader's decode pool does).
TEST(SampleDecoderTest, DecodesFromManyThreadsAtOnce) {
  auto ds = MakeDataset(testing::MakeTempDir(), {}, 2, 8);
  BatchLoaderOptions o;
  o.width = o.height = 20;
  o.augment = Augment::kRandomResizedCrop;
  auto d = SampleDecoder::Create(ds, o);
  ASSERT_TRUE(d.ok()) << d.status();
  const size_t n = ds->size(), bytes = d->sample_bytes();
  std::vector<uint8_t> alone(n * bytes);
  for (uint64_t s = 0; s < n; ++s) {
    int64_t label;
    ASSERT_TRUE(d->Decode(s, 3, alone.data() + s * bytes, nullptr, &label).ok());
  }
  std::vector<std::vector<uint8_t>> together(4, std::vector<uint8_t>(n * bytes));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        for (uint64_t k = 0; k < n; ++k) {
          const uint64_t s = (k * 5 + static_cast<uint64_t>(t)) % n;
          int64_t label;
          if (!d->Decode(s, 3, together[t].data() + s * bytes, nullptr, &label).ok()) together[t].clear();
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& v : together) EXPECT_EQ(v, alone);
}

}  // namespace
}  // namespace libshard::reader

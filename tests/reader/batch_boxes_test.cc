// BatchLoaderOptions::boxes: the boxes follow the loader's own geometry. Each
// record's rectangles are drawn in their class colours; the returned boxes
// must frame the rectangles found again in the returned pixels (+-1 px).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "box_fixtures.h"
#include "libshard/reader/batch_loader.h"
#include "testutil.h"

namespace libshard::reader {
namespace {

using testing::BoxSample;
using testing::PixelBox;

// Three rectangles, one per class, and a record with none.
std::vector<BoxSample> Samples() {
  BoxSample a;
  a.boxes = {{10, 8, 30, 28, 1}, {50, 20, 90, 40, 2}, {30, 50, 60, 70, 3}};
  BoxSample b;
  b.boxes = {{0, 0, 24, 18, 3}, {70, 40, 96, 72, 1}};
  BoxSample none;
  none.box_keys = false;
  BoxSample c;
  c.boxes = {{40, 10, 56, 62, 2}};
  return {a, b, none, c};
}

std::shared_ptr<const Dataset> WriteDataset(const std::string& dir, const std::vector<BoxSample>& samples) {
  const std::string path = dir + "/boxes.tfrecord";
  testing::WriteBoxShard(path, samples);
  auto ds = Dataset::Open({path});
  EXPECT_TRUE(ds.ok()) << ds.status();
  return ds.ok() ? std::shared_ptr<const Dataset>(std::move(*ds)) : nullptr;
}

struct Found {
  int x0 = 1 << 30, y0 = 1 << 30, x1 = -1, y1 = -1;
  int pixels = 0;
};

// The extent of class `label`'s colour in an H x W x 3 image: pixels whose
// channel (label - 1) is over half and the others under.
Found FindColour(const uint8_t* px, int w, int h, int64_t label) {
  Found f;
  const int c = static_cast<int>((label - 1) % 3);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const uint8_t* p = px + (static_cast<size_t>(y) * w + x) * 3;
      bool on = p[c] > 127;
      for (int k = 0; k < 3; ++k)
        if (k != c && p[k] > 127) on = false;
      if (!on) continue;
      f.x0 = std::min(f.x0, x);
      f.y0 = std::min(f.y0, y);
      f.x1 = std::max(f.x1, x + 1);
      f.y1 = std::max(f.y1, y + 1);
      ++f.pixels;
    }
  return f;
}

// Every returned box frames its colour's pixels within 1 px; every colour
// with no box returned shows less than `max_dropped_pixels` pixels.
void ExpectBoxesMatchPixels(const Batch& batch, size_t i, int w, int h, const std::string& what,
                            int max_dropped_pixels = 0) {
  const BatchBoxes& b = batch.boxes;
  const uint8_t* px = batch.images + i * static_cast<size_t>(w) * h * 3;
  std::vector<bool> seen(4, false);
  for (int k = 0; k < b.counts[i]; ++k) {
    const float* box = &b.boxes[(i * b.max_boxes + k) * 4];
    const int64_t label = b.labels[i * b.max_boxes + k];
    seen[label] = true;
    const Found f = FindColour(px, w, h, label);
    SCOPED_TRACE(what + " sample " + std::to_string(i) + " label " + std::to_string(label));
    ASSERT_GT(f.pixels, 0);
    EXPECT_NEAR(box[0] * w, f.x0, 1.0);
    EXPECT_NEAR(box[1] * h, f.y0, 1.0);
    EXPECT_NEAR(box[2] * w, f.x1, 1.0);
    EXPECT_NEAR(box[3] * h, f.y1, 1.0);
  }
  for (int64_t label = 1; label <= 3; ++label) {
    if (seen[label]) continue;
    EXPECT_LE(FindColour(px, w, h, label).pixels, max_dropped_pixels)
        << what << " sample " << i << ": label " << label << " is visible but has no box";
  }
}

// The first batch of a loader of `o`; the loader lives on (the pixels are its).
struct Loaded {
  std::unique_ptr<BatchLoader> loader;
  Batch batch;
};

Loaded First(const std::shared_ptr<const Dataset>& ds, const BatchLoaderOptions& o) {
  Loaded l;
  auto loader = BatchLoader::Create(ds, o);
  EXPECT_TRUE(loader.ok()) << loader.status();
  if (!loader.ok()) return l;
  l.loader = std::move(*loader);
  const Status s = l.loader->Next(&l.batch);
  EXPECT_TRUE(s.ok()) << s;
  return l;
}

TEST(BatchBoxesTest, BoxesFollowEveryResizeMode) {
  const std::string dir = testing::MakeTempDir();
  const std::vector<BoxSample> samples = Samples();
  auto ds = WriteDataset(dir, samples);
  struct Mode {
    image::ResizeMode mode;
    int w, h;
  };
  for (const Mode& m : {Mode{image::ResizeMode::kCenterCrop, 48, 48}, Mode{image::ResizeMode::kStretch, 40, 60},
                        Mode{image::ResizeMode::kLetterbox, 48, 48}, Mode{image::ResizeMode::kCropOrPad, 64, 80},
                        Mode{image::ResizeMode::kCenterCrop, 96, 72}}) {
    BatchLoaderOptions o;
    o.batch_size = samples.size();
    o.width = m.w;
    o.height = m.h;
    o.resize = m.mode;
    o.boxes = true;
    const Loaded loaded = First(ds, o);
    const Batch& batch = loaded.batch;
    const std::string what = std::string(image::ResizeModeName(m.mode)) + " " + std::to_string(m.w);
    ASSERT_EQ(batch.boxes.counts.size(), samples.size()) << what;
    EXPECT_EQ(batch.boxes.max_boxes, 100u);
    EXPECT_EQ(batch.boxes.counts[2], 0) << what << ": a record without box keys";
    for (size_t i = 0; i < samples.size(); ++i) ExpectBoxesMatchPixels(batch, i, m.w, m.h, what);
    // Padding past each count.
    EXPECT_EQ(batch.boxes.labels[3 * 100 + 1], -1);
    EXPECT_EQ(batch.boxes.boxes[(3 * 100 + 1) * 4], 0.0f);
  }
  // centre-crop 48x48 reads the centre 72x72 (x 12..84): it cuts sample 0's red and
  // green boxes and sample 1's two corner boxes.
  BatchLoaderOptions o;
  o.batch_size = 4;
  o.width = o.height = 48;
  o.boxes = true;
  const Loaded loaded = First(ds, o);
  const Batch& crop = loaded.batch;
  EXPECT_EQ(crop.boxes.counts[0], 3);
  EXPECT_EQ(crop.boxes.clipped, 4u);
  EXPECT_EQ(crop.boxes.dropped, 0u);
  EXPECT_NEAR(crop.boxes.boxes[0], 0.0f, 1e-6);  // red: its left part cut off
}

TEST(BatchBoxesTest, RandomResizedCropClipsDropsAndFlipsBoxesWithThePixels) {
  const std::string dir = testing::MakeTempDir();
  std::vector<BoxSample> samples;
  for (int r = 0; r < 6; ++r)
    for (const BoxSample& s : Samples()) samples.push_back(s);
  auto ds = WriteDataset(dir, samples);
  BatchLoaderOptions o;
  o.batch_size = samples.size();
  o.width = o.height = 64;
  o.augment = Augment::kRandomResizedCrop;
  o.rrc.scale_min = 0.2;
  o.rrc.scale_max = 0.6;
  o.order.seed = 7;
  o.boxes = true;
  o.rrc.flip = false;
  const Loaded plain_loaded = First(ds, o);
  const Batch& plain = plain_loaded.batch;
  o.rrc.flip = true;
  const Loaded flipped_loaded = First(ds, o);
  const Batch& flipped = flipped_loaded.batch;
  EXPECT_GT(flipped.boxes.clipped, 0u);
  EXPECT_GT(flipped.boxes.dropped, 0u);
  int mirrored = 0, same = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    // A dropped box keeps under 0.3 of its area: at most that many pixels
    // (plus an edge) of its colour remain.
    const PixelBox* largest = nullptr;
    for (const PixelBox& p : samples[i].boxes)
      if (largest == nullptr ||
          (p.x1 - p.x0) * (p.y1 - p.y0) > (largest->x1 - largest->x0) * (largest->y1 - largest->y0))
        largest = &p;
    const image::PixelRect crop = RandomResizedCropOf(o, 0, i, 96, 72);
    const double scale = (64.0 / crop.width) * (64.0 / crop.height);
    const int most =
        largest == nullptr
            ? 0
            : static_cast<int>(0.3 * (largest->x1 - largest->x0) * (largest->y1 - largest->y0) * scale + 2 * 64);
    ExpectBoxesMatchPixels(flipped, i, 64, 64, "random-resized-crop", most);
    ExpectBoxesMatchPixels(plain, i, 64, 64, "random-resized-crop without flip", most);
    // The flip draws after the crop: the same crop, mirrored or not.
    ASSERT_EQ(plain.boxes.counts[i], flipped.boxes.counts[i]);
    if (plain.boxes.counts[i] == 0) continue;
    const float* a = &plain.boxes.boxes[i * 100 * 4];
    const float* b = &flipped.boxes.boxes[i * 100 * 4];
    if (std::fabs(a[0] - b[0]) < 1e-6f && std::fabs(a[2] - b[2]) < 1e-6f) {
      ++same;
    } else {
      EXPECT_NEAR(b[0], 1.0f - a[2], 1e-5f) << i;
      EXPECT_NEAR(b[2], 1.0f - a[0], 1e-5f) << i;
      EXPECT_FLOAT_EQ(b[1], a[1]) << i;
      ++mirrored;
    }
  }
  EXPECT_GT(mirrored, 0);
  EXPECT_GT(same, 0);
}

TEST(BatchBoxesTest, DecodeSampleGivesTheBatchsBoxes) {
  const std::string dir = testing::MakeTempDir();
  auto ds = WriteDataset(dir, Samples());
  BatchLoaderOptions o;
  o.batch_size = 4;
  o.width = o.height = 40;
  o.augment = Augment::kRandomResizedCrop;
  o.boxes = true;
  auto loader = BatchLoader::Create(ds, o);
  ASSERT_TRUE(loader.ok()) << loader.status();
  Batch batch;
  ASSERT_TRUE((*loader)->Next(&batch).ok());
  std::vector<uint8_t> image(40 * 40 * 3);
  for (uint64_t i = 0; i < 4; ++i) {
    SampleBoxes sb;
    int64_t label = 0;
    ASSERT_TRUE((*loader)->DecodeSample(i, 0, image.data(), nullptr, &label, &sb).ok());
    ASSERT_EQ(static_cast<int>(sb.boxes.size()), batch.boxes.counts[i]);
    for (size_t k = 0; k < sb.boxes.size(); ++k) {
      EXPECT_EQ(sb.boxes[k].xmin, batch.boxes.boxes[(i * 100 + k) * 4]);
      EXPECT_EQ(sb.boxes[k].ymax, batch.boxes.boxes[(i * 100 + k) * 4 + 3]);
      EXPECT_EQ(sb.labels[k], batch.boxes.labels[i * 100 + k]);
    }
  }
}

TEST(BatchBoxesTest, MaxBoxesTruncatesAndCounts) {
  const std::string dir = testing::MakeTempDir();
  auto ds = WriteDataset(dir, Samples());
  BatchLoaderOptions o;
  o.batch_size = 4;
  o.width = 96;
  o.height = 72;
  o.boxes = true;
  o.max_boxes = 2;
  const Loaded loaded = First(ds, o);
  const Batch& batch = loaded.batch;
  EXPECT_EQ(batch.boxes.boxes.size(), 4u * 2 * 4);
  EXPECT_EQ(batch.boxes.counts, (std::vector<int32_t>{2, 2, 0, 1}));
  EXPECT_EQ(batch.boxes.truncated, 1u);
  EXPECT_EQ(batch.boxes.labels[0], 1);
  EXPECT_EQ(batch.boxes.labels[1], 2);
  o.max_boxes = 0;
  EXPECT_EQ(BatchLoader::Create(ds, o).status().code(), StatusCode::kInvalidArgument);
  o.max_boxes = 5;
  o.box_min_visible = 1.5f;
  EXPECT_EQ(BatchLoader::Create(ds, o).status().code(), StatusCode::kInvalidArgument);
  // Without boxes the batch carries none.
  o.boxes = false;
  EXPECT_TRUE(First(ds, o).batch.boxes.counts.empty());
}

TEST(BatchBoxesTest, MalformedBoxKeysAreDataLossNamingTheRecordOrSkipped) {
  const std::string dir = testing::MakeTempDir();
  std::vector<BoxSample> samples = Samples();
  BoxSample bad;
  bad.raw_lists = true;
  bad.xmin = {0.1f, 0.2f};
  bad.ymin = {0.1f};
  bad.xmax = {0.3f};
  bad.ymax = {0.4f};
  bad.labels = {1};
  samples.insert(samples.begin() + 1, bad);
  BoxSample nan = bad;
  nan.xmin = {std::nanf("")};
  samples.push_back(nan);
  auto ds = WriteDataset(dir, samples);
  BatchLoaderOptions o;
  o.batch_size = 2;
  o.width = o.height = 32;
  o.boxes = true;
  auto loader = BatchLoader::Create(ds, o);
  ASSERT_TRUE(loader.ok());
  Batch batch;
  const Status s = (*loader)->Next(&batch);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_TRUE(testing::Contains(std::string(s.message()), dir + "/boxes.tfrecord: record 1 at byte ")) << s;
  EXPECT_TRUE(testing::Contains(std::string(s.message()), "unequal box lists")) << s;
  // Without boxes the same records load.
  o.boxes = false;
  EXPECT_EQ(First(ds, o).batch.size, 2u);
  o.boxes = true;
  o.on_error = BatchLoaderOptions::OnError::kSkip;
  o.batch_size = samples.size();
  auto skipping = BatchLoader::Create(ds, o);
  ASSERT_TRUE((*skipping)->Next(&batch).ok());
  const auto skipped = (*skipping)->skipped();
  ASSERT_EQ(skipped.size(), 2u);
  EXPECT_EQ(skipped[0].record, 1u);
  EXPECT_EQ(skipped[1].record, 5u);
  EXPECT_TRUE(testing::Contains(skipped[1].reason, "nan is not in [0, 1]")) << skipped[1].reason;
}

}  // namespace
}  // namespace libshard::reader

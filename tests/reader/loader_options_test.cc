#include "libshard/reader/loader_options.h"

#include <gtest/gtest.h>

#include <oneapi/tbb/info.h>

#include <string>
#include <vector>

#include "reader_fixtures.h"
#include "testutil.h"

namespace libshard::reader {
namespace {

std::shared_ptr<const Dataset> TwoRecords() {
  const std::string path = testing::MakeTempDir() + "/d.tfrecord";
  testing::WriteImageShard(path, 2, 0);
  return std::shared_ptr<const Dataset>(std::move(*Dataset::Open({path})));
}

// Each refusal names what is wrong; BatchLoader::Create and
// SampleDecoder::Create say the same (they run this check).
TEST(LoaderOptionsTest, RefusesEachBadValueByName) {
  auto ds = TwoRecords();
  struct Case {
    void (*set)(BatchLoaderOptions*);
    std::string message;
  };
  const std::vector<Case> cases = {
      {[](BatchLoaderOptions* o) { o->batch_size = 0; }, "batch_size must be > 0"},
      {[](BatchLoaderOptions* o) { o->width = 65536; }, "image size 65536x224 out of range"},
      {[](BatchLoaderOptions* o) { o->height = -1; }, "image size 224x-1 out of range"},
      {[](BatchLoaderOptions* o) { o->channels = 2; }, "channels must be 1 or 3"},
      {[](BatchLoaderOptions* o) { o->threads = 257; }, "threads must be in 0..256 (0: one per core)"},
      {[](BatchLoaderOptions* o) { o->threads = -1; }, "threads must be in 0..256 (0: one per core)"},
      {[](BatchLoaderOptions* o) { o->batch_size = size_t{1} << 62; },
       "batch_size 4611686018427387904 of 150528-byte samples overflows memory sizes"},
      {[](BatchLoaderOptions* o) { o->resize = image::ResizeMode::kKeepRatio; },
       "resize mode keep-ratio does not give a fixed size (use center-crop, stretch, letterbox or crop-or-pad)"},
      {[](BatchLoaderOptions* o) { o->rrc.scale_min = 0; },
       "random-resized-crop: need 0 < scale_min <= scale_max <= 1, 0 < ratio_min <= ratio_max"},
      {[](BatchLoaderOptions* o) { o->rrc.ratio_min = 2; },
       "random-resized-crop: need 0 < scale_min <= scale_max <= 1, 0 < ratio_min <= ratio_max"},
      {[](BatchLoaderOptions* o) {
         o->boxes = true;
         o->max_boxes = 0;
       },
       "boxes: need 1 <= max_boxes <= 100000 and 0 <= box_min_visible <= 1, got max_boxes 0, box_min_visible "
       "0.300000"},
  };
  for (const Case& c : cases) {
    BatchLoaderOptions o;
    c.set(&o);
    const Status s = ResolveLoaderOptions(*ds, &o);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.message;
    EXPECT_EQ(s.message(), c.message);
  }
  BatchLoaderOptions fine;
  fine.boxes = false;
  fine.max_boxes = 0;  // unused without boxes
  EXPECT_TRUE(ResolveLoaderOptions(*ds, &fine).ok());
}

TEST(LoaderOptionsTest, ResolvesTheThreadCountAndKeepsWhatIsGiven) {
  auto ds = TwoRecords();
  BatchLoaderOptions o;
  o.threads = 0;
  o.width = 10;
  o.height = 7;
  o.channels = 1;
  ASSERT_TRUE(ResolveLoaderOptions(*ds, &o).ok());
  EXPECT_EQ(o.threads, tbb::info::default_concurrency());
  EXPECT_EQ(o.width, 10);
  EXPECT_EQ(o.height, 7);
  EXPECT_EQ(o.channels, 1);
  o.threads = 5;
  ASSERT_TRUE(ResolveLoaderOptions(*ds, &o).ok());
  EXPECT_EQ(o.threads, 5);
  // Without a manifest the stored size is unknown: a size must be given.
  BatchLoaderOptions stored;
  stored.width = stored.height = 0;
  const Status s = ResolveLoaderOptions(*ds, &stored);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(s.message()).rfind("image_size: not given, and the stored image size is unknown (", 0), 0u)
      << s;
}

TEST(LoaderOptionsTest, AugmentNamesRoundTrip) {
  for (Augment a : {Augment::kNone, Augment::kRandomResizedCrop}) EXPECT_EQ(ParseAugment(AugmentName(a)).value(), a);
  EXPECT_EQ(ParseAugment("mixup").status().message(),
            "unknown augment \"mixup\" (expected none or random-resized-crop)");
}

}  // namespace
}  // namespace libshard::reader

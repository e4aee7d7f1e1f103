// Box geometry: boxes mapped through each resize mode and EXIF orientation
// land where the pixels of a filled rectangle land (found again in the
// transformed image, +-1 px); clipping, dropping and flips.
#include "libshard/image/box_geometry.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <optional>
#include <tuple>

#include "libshard/image/transform.h"

namespace libshard::image {
namespace {

struct Rect {
  int x0, y0, x1, y1;  // pixels [x0, x1) x [y0, y1)
};

constexpr std::array<std::array<uint8_t, 3>, 3> kColors = {{{255, 0, 0}, {0, 255, 0}, {0, 0, 255}}};

Image Canvas(int w, int h, const std::vector<Rect>& rects) {
  Image img(w, h, 3, 8);
  std::memset(img.data(), 0, img.byte_size());
  for (size_t i = 0; i < rects.size(); ++i) {
    for (int y = rects[i].y0; y < rects[i].y1; ++y) {
      for (int x = rects[i].x0; x < rects[i].x1; ++x) std::memcpy(img.row(y) + 3 * x, kColors[i].data(), 3);
    }
  }
  return img;
}

// The bounding rectangle of the pixels nearer colour `c` than black.
std::optional<Rect> Find(const Image& img, const std::array<uint8_t, 3>& c) {
  Rect r{img.width(), img.height(), -1, -1};
  for (int y = 0; y < img.height(); ++y) {
    for (int x = 0; x < img.width(); ++x) {
      const uint8_t* p = img.row(y) + 3 * x;
      bool match = true;
      for (int k = 0; k < 3; ++k) match = match && ((c[k] > 127) == (p[k] > 127));
      if (!match || (p[0] <= 127 && p[1] <= 127 && p[2] <= 127)) continue;
      r.x0 = std::min(r.x0, x);
      r.y0 = std::min(r.y0, y);
      r.x1 = std::max(r.x1, x + 1);
      r.y1 = std::max(r.y1, y + 1);
    }
  }
  if (r.x1 < 0) return std::nullopt;
  return r;
}

Box Normalised(const Rect& r, int w, int h) {
  return Box{float(r.x0) / w, float(r.y0) / h, float(r.x1) / w, float(r.y1) / h};
}

void ExpectBoxOnRect(const Box& b, const Rect& r, int w, int h) {
  EXPECT_NEAR(b.xmin * w, r.x0, 1.0);
  EXPECT_NEAR(b.xmax * w, r.x1, 1.0);
  EXPECT_NEAR(b.ymin * h, r.y0, 1.0);
  EXPECT_NEAR(b.ymax * h, r.y1, 1.0);
}

// Three rectangles on a 120x80 image: one in the middle, one at the left
// edge (cut by a centre crop), one in the top-right corner.
const std::vector<Rect> kRects = {{50, 30, 70, 50}, {2, 10, 22, 70}, {96, 4, 116, 20}};

class BoxGoldenTest : public ::testing::TestWithParam<std::tuple<ResizeMode, int, int>> {};

TEST_P(BoxGoldenTest, BoxesFollowPixels) {
  const auto [mode, W, H] = GetParam();
  const int sw = 120, sh = 80;
  const Image src = Canvas(sw, sh, kRects);
  TransformSpec spec;
  spec.mode = mode;
  spec.width = W;
  spec.height = H;
  StatusOr<Image> out = Transform(src, spec);
  ASSERT_TRUE(out.ok()) << out.status();
  StatusOr<PixelMap> m = PlanPixelMap(sw, sh, spec);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->out_w, out->width());
  EXPECT_EQ(m->out_h, out->height());
  std::vector<Box> in;
  for (const Rect& r : kRects) in.push_back(Normalised(r, sw, sh));
  BoxMapOptions o;
  o.min_visible = 0;  // every box with a visible pixel
  const MappedBoxes mapped = MapBoxes(in, *m, o);
  ASSERT_EQ(mapped.fate.size(), in.size());
  size_t next = 0;
  for (size_t i = 0; i < kRects.size(); ++i) {
    SCOPED_TRACE("rectangle " + std::to_string(i) + " mode " + ResizeModeName(mode));
    const std::optional<Rect> found = Find(*out, kColors[i]);
    if (!found) {
      EXPECT_EQ(mapped.fate[i], kBoxDropped);
      continue;
    }
    ASSERT_NE(mapped.fate[i], kBoxDropped);
    ASSERT_LT(next, mapped.kept.size());
    ASSERT_EQ(mapped.kept[next], i);
    ExpectBoxOnRect(mapped.boxes[next++], *found, out->width(), out->height());
  }
  EXPECT_EQ(next, mapped.boxes.size());
}

INSTANTIATE_TEST_SUITE_P(
    Modes, BoxGoldenTest,
    ::testing::Values(
        std::make_tuple(ResizeMode::kNone, 0, 0), std::make_tuple(ResizeMode::kStretch, 64, 64),
        std::make_tuple(ResizeMode::kStretch, 200, 90), std::make_tuple(ResizeMode::kCenterCrop, 64, 64),
        std::make_tuple(ResizeMode::kCenterCrop, 60, 20), std::make_tuple(ResizeMode::kKeepRatio, 64, 64),
        std::make_tuple(ResizeMode::kLetterbox, 64, 64), std::make_tuple(ResizeMode::kLetterbox, 300, 100),
        std::make_tuple(ResizeMode::kShorterSide, 40, 40), std::make_tuple(ResizeMode::kShorterSide, 160, 160),
        std::make_tuple(ResizeMode::kCropOrPad, 64, 64), std::make_tuple(ResizeMode::kCropOrPad, 100, 140)));

TEST(BoxGeometryTest, OrientationMovesBoxesWithPixels) {
  const int sw = 120, sh = 80;
  const Image src = Canvas(sw, sh, kRects);
  for (int o = 1; o <= 8; ++o) {
    SCOPED_TRACE("orientation " + std::to_string(o));
    const Image out = Orient(src, o);
    for (size_t i = 0; i < kRects.size(); ++i) {
      const std::optional<Rect> found = Find(out, kColors[i]);
      ASSERT_TRUE(found);
      const Box b = OrientBox(Normalised(kRects[i], sw, sh), o);
      // Exact up to float rounding: orientation only moves whole pixels.
      EXPECT_NEAR(b.xmin * out.width(), found->x0, 1e-3);
      EXPECT_NEAR(b.xmax * out.width(), found->x1, 1e-3);
      EXPECT_NEAR(b.ymin * out.height(), found->y0, 1e-3);
      EXPECT_NEAR(b.ymax * out.height(), found->y1, 1e-3);
    }
  }
}

TEST(BoxGeometryTest, ClipsAndDropsByVisibleFraction) {
  // Centre crop of 100x100 to 50x50 at scale 1: the visible region is
  // [25, 75) on both axes.
  TransformSpec spec;
  spec.mode = ResizeMode::kCropOrPad;
  spec.width = spec.height = 50;
  StatusOr<PixelMap> m = PlanPixelMap(100, 100, spec);
  ASSERT_TRUE(m.ok());
  const std::vector<Box> in = {
      {0.30f, 0.30f, 0.40f, 0.40f},  // inside: kept whole
      {0.15f, 0.30f, 0.35f, 0.40f},  // half outside: clipped (0.5 visible)
      {0.00f, 0.30f, 0.30f, 0.40f},  // 1/6 visible: dropped at 0.3
      {0.80f, 0.80f, 0.90f, 0.90f},  // wholly outside: dropped
      {0.50f, 0.50f, 0.50f, 0.60f},  // zero width inside: kept
  };
  const MappedBoxes r = MapBoxes(in, *m, BoxMapOptions{});
  EXPECT_EQ(r.kept, (std::vector<size_t>{0, 1, 4}));
  EXPECT_EQ(r.clipped, 1u);
  EXPECT_EQ(r.dropped, 2u);
  EXPECT_EQ(r.fate, (std::vector<unsigned char>{kBoxKept, kBoxClipped, kBoxDropped, kBoxDropped, kBoxKept}));
  EXPECT_NEAR(r.boxes[0].xmin, 0.10f, 1e-6);
  EXPECT_NEAR(r.boxes[0].xmax, 0.30f, 1e-6);
  EXPECT_NEAR(r.boxes[1].xmin, 0.0f, 1e-6);
  EXPECT_NEAR(r.boxes[1].xmax, 0.20f, 1e-6);
  // A lower threshold keeps the 1/6 box, clipped.
  BoxMapOptions low;
  low.min_visible = 0.1f;
  const MappedBoxes r2 = MapBoxes(in, *m, low);
  EXPECT_EQ(r2.kept, (std::vector<size_t>{0, 1, 2, 4}));
  EXPECT_EQ(r2.clipped, 2u);
}

TEST(BoxGeometryTest, FlipMirrorsAfterTheScale) {
  TransformSpec spec;
  spec.mode = ResizeMode::kStretch;
  spec.width = 20;
  spec.height = 10;
  StatusOr<PixelMap> m = PlanPixelMap(40, 40, spec);
  ASSERT_TRUE(m.ok());
  m->flip_x = true;
  const MappedBoxes r = MapBoxes({{0.1f, 0.2f, 0.3f, 0.4f}}, *m);
  ASSERT_EQ(r.boxes.size(), 1u);
  EXPECT_NEAR(r.boxes[0].xmin, 0.7f, 1e-6);
  EXPECT_NEAR(r.boxes[0].xmax, 0.9f, 1e-6);
  EXPECT_NEAR(r.boxes[0].ymin, 0.2f, 1e-6);
  EXPECT_NEAR(r.boxes[0].ymax, 0.4f, 1e-6);
}

TEST(BoxGeometryTest, PlanErrorsPassThrough) {
  TransformSpec spec;
  spec.mode = ResizeMode::kCenterCrop;  // no size
  EXPECT_FALSE(PlanPixelMap(10, 10, spec).ok());
  EXPECT_FALSE(PlanPixelMap(0, 10, TransformSpec{}).ok());
}

}  // namespace
}  // namespace libshard::image

// Colour masks through a CamVid-style label map, and index-mask PNGs.
#include "libshard/image/mask_colors.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "golden.h"
#include "libshard/image/encode.h"
#include "libshard/image/transform.h"
#include "testutil.h"

namespace libshard::image {
namespace {

using ::libshard::testing::GoldenPath;
using ::libshard::testing::LoadGoldenSet;
using ::libshard::testing::ReadFileOrDie;
using ::libshard::testing::SharedPath;

// The first lines of CamVid's class_dict.csv, with a CRLF and a blank line.
constexpr char kCamVid[] =
    "name,r,g,b\r\n"
    "Animal,64,128,64\r\n"
    "Archway,192,0,128\n"
    "\n"
    "Bicyclist,0,128, 192\n"
    "\"Car, parked\",64,0,128\n";

TEST(MaskColorMapTest, UnknownColorPolicyParses) {
  EXPECT_EQ(*ParseUnknownColor("error"), UnknownColor::kError);
  EXPECT_EQ(*ParseUnknownColor("ignore"), UnknownColor::kIgnore);
  EXPECT_EQ(ParseUnknownColor("skip").status().message(), "unknown colour policy 'skip' (expected error or ignore)");
}

TEST(MaskColorMapTest, ParsesCamVidCsv) {
  StatusOr<MaskColorMap> map = MaskColorMap::FromCsv(kCamVid);
  ASSERT_TRUE(map.ok()) << map.status();
  ASSERT_EQ(map->size(), 4);
  EXPECT_EQ(map->classes()[2].name, "Bicyclist");
  EXPECT_EQ(map->classes()[3].name, "Car, parked");
  EXPECT_EQ(map->Find(0, 128, 192), 2);
  EXPECT_EQ(map->Find(64, 0, 128), 3);
  EXPECT_FALSE(map->Find(0, 0, 0).has_value());
}

// Issue 23 item 7: a class_dict.csv saved with a byte order mark (Excel,
// Notepad) is read, not refused as "the header must be name,r,g,b".
TEST(MaskColorMapTest, ByteOrderMarkIsSkipped) {
  StatusOr<MaskColorMap> map = MaskColorMap::FromCsv(std::string("\xEF\xBB\xBF") + kCamVid);
  ASSERT_TRUE(map.ok()) << map.status();
  ASSERT_EQ(map->size(), 4);
  EXPECT_EQ(map->classes()[0].name, MaskColorMap::FromCsv(kCamVid)->classes()[0].name);
}

TEST(MaskColorMapTest, MalformedCsvNamesTheLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "empty"},
      {"label,red,green,blue\nA,1,2,3\n", "line 1: the header"},
      {"name,r,g,b\nA,1,2\n", "line 2: expected 4 fields"},
      {"name,r,g,b\nA,1,2,3\nB,1,256,3\n", "line 3: colour values"},
      {"name,r,g,b\nA,1,2,x\n", "line 2"},
      {"name,r,g,b\nA,1,2,3\nB,1,2,3\n", "'A' and 'B' share the colour (1, 2, 3)"},
      {"name,r,g,b\n", "no classes"},
  };
  for (const auto& [csv, want] : cases) {
    StatusOr<MaskColorMap> map = MaskColorMap::FromCsv(csv);
    ASSERT_FALSE(map.ok()) << csv;
    EXPECT_EQ(map.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(map.status().message().find(want), std::string::npos) << map.status();
  }
}

Image ColorMask() {
  // 4x2: Animal, Archway, Bicyclist, Animal / unknown (1,1,1), Car x3.
  const uint8_t px[8][3] = {{64, 128, 64}, {192, 0, 128}, {0, 128, 192}, {64, 128, 64},
                            {1, 1, 1},     {64, 0, 128},  {64, 0, 128},  {64, 0, 128}};
  Image img(4, 2, 3);
  for (int i = 0; i < 8; ++i)
    for (int k = 0; k < 3; ++k) img.data()[i * 3 + k] = px[i][k];
  return img;
}

TEST(MaskColorMapTest, ApplyMapsColoursAndReportsUnknowns) {
  const MaskColorMap map = *MaskColorMap::FromCsv(kCamVid);
  StatusOr<Image> strict = map.Apply(ColorMask());
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.status().message().find("colour (1, 1, 1) at pixel (0, 1)"), std::string::npos) << strict.status();

  MaskColorOptions o;
  o.unknown = UnknownColor::kIgnore;
  StatusOr<Image> idx = map.Apply(ColorMask(), o);
  ASSERT_TRUE(idx.ok()) << idx.status();
  ASSERT_EQ(idx->channels(), 1);
  EXPECT_EQ(std::vector<uint8_t>(idx->data(), idx->data() + 8), (std::vector<uint8_t>{0, 1, 2, 0, 255, 3, 3, 3}));

  o.ignore_index = 2;  // collides with Bicyclist
  EXPECT_EQ(map.Apply(ColorMask(), o).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(map.Apply(Image(2, 2, 4)).status().code(), StatusCode::kInvalidArgument);
}

TEST(MaskColorMapTest, IndexMaskPngRoundTripAndPairTransform) {
  const MaskColorMap map = *MaskColorMap::FromCsv(kCamVid);
  MaskColorOptions o;
  o.unknown = UnknownColor::kIgnore;
  const Image idx = *map.Apply(ColorMask(), o);
  StatusOr<std::string> png = EncodePng(idx);
  ASSERT_TRUE(png.ok());
  StatusOr<Image> back = DecodeIndexMask(*png);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, idx);

  // Doubling with the pair transform: each mask pixel becomes a 2x2 block.
  TransformSpec spec;
  spec.mode = ResizeMode::kStretch;
  spec.width = 8;
  spec.height = 4;
  spec.filter = Filter::kLanczos3;
  StatusOr<ImageAndMask> both = ApplyGeometryPair(ColorMask(), idx, *PlanGeometry(4, 2, spec), spec, o.ignore_index);
  ASSERT_TRUE(both.ok());
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 8; ++x) ASSERT_EQ(both->mask.row(y)[x], idx.row(y / 2)[x / 2]);
}

TEST(MaskColorMapTest, PaletteAndGrayPngsKeepTheirIndices) {
  const std::string dir = SharedPath("interop/pngsuite");
  if (dir.empty()) GTEST_SKIP() << "shared interop/pngsuite not found";
  auto golden = LoadGoldenSet("pngsuite");
  for (const char* name :
       {"basn3p01.png", "basn3p02.png", "basn3p04.png", "basn3p08.png", "basi3p04.png", "tbbn3p08.png"}) {
    SCOPED_TRACE(name);
    StatusOr<Image> idx = DecodeIndexMask(ReadFileOrDie(dir + "/" + name));
    ASSERT_TRUE(idx.ok()) << idx.status();
    ASSERT_EQ(idx->channels(), 1);
    const auto& g = golden.at(name);
    ASSERT_EQ(idx->width(), g.width);
    // Indices fit the bit depth, and each index always shows the same colour.
    const int depth = std::stoi(std::string(name).substr(6, 2));
    std::map<int, uint32_t> colour_of;
    for (size_t i = 0; i < idx->byte_size(); ++i) {
      const int k = idx->data()[i];
      ASSERT_LT(k, 1 << depth);
      const uint32_t rgba =
          (g.values[i * 4] << 24) | (g.values[i * 4 + 1] << 16) | (g.values[i * 4 + 2] << 8) | g.values[i * 4 + 3];
      auto [it, fresh] = colour_of.emplace(k, rgba);
      ASSERT_EQ(it->second, rgba) << "index " << k << " at " << i;
    }
    EXPECT_GT(colour_of.size(), 1u);
  }
  // Gray values are kept, not rescaled: a 2-bit gray PNG holds 0..3.
  StatusOr<Image> gray = DecodeIndexMask(ReadFileOrDie(dir + "/basn0g02.png"));
  ASSERT_TRUE(gray.ok());
  std::set<int> values(gray->data(), gray->data() + gray->byte_size());
  EXPECT_EQ(values, (std::set<int>{0, 1, 2, 3}));
  // Colour PNGs and JPEGs are not index masks.
  EXPECT_EQ(DecodeIndexMask(ReadFileOrDie(dir + "/basn2c08.png")).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(DecodeIndexMask(*EncodeJpeg(Image(8, 8, 1))).status().code(), StatusCode::kInvalidArgument);
}

// 16-bit gray label PNGs: a golden one written by Pillow (make_golden.py
// make_masks) gives its values as 8-bit classes; PngSuite's 16-bit gradient
// (values to 65535) is refused naming the first value above 255.
TEST(MaskColorMapTest, SixteenBitGrayMasksGiveTheirClassesOrAreRefused) {
  StatusOr<Image> idx = DecodeIndexMask(ReadFileOrDie(GoldenPath("mask_gray16.png")));
  ASSERT_TRUE(idx.ok()) << idx.status();
  ASSERT_EQ(idx->width(), 29);
  ASSERT_EQ(idx->height(), 17);
  ASSERT_EQ(idx->channels(), 1);
  ASSERT_EQ(idx->bit_depth(), 8);
  for (int y = 0; y < 17; ++y) {
    for (int x = 0; x < 29; ++x) {
      ASSERT_EQ(idx->row(y)[x], x < 4 && y < 4 ? 255 : (x + 2 * y) / 5 % 7) << x << "," << y;
    }
  }
  const std::string dir = SharedPath("interop/pngsuite");
  if (dir.empty()) GTEST_SKIP() << "shared interop/pngsuite not found";
  StatusOr<Image> wide = DecodeIndexMask(ReadFileOrDie(dir + "/basn0g16.png"));
  ASSERT_EQ(wide.status().code(), StatusCode::kInvalidArgument) << wide.status();
  EXPECT_EQ(wide.status().message().rfind("index mask: 16-bit gray value ", 0), 0u) << wide.status();
  EXPECT_NE(wide.status().message().find(" is above 255; class indices are 0..255"), std::string::npos)
      << wide.status();
}

}  // namespace
}  // namespace libshard::image

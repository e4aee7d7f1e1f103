#include "libshard/example/box_record.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "libshard/example/example_builder.h"

namespace libshard::example {
namespace {

struct Lists {
  std::vector<float> xmin, ymin, xmax, ymax;
  std::vector<int64_t> label;
};

std::string Record(const Lists& l, bool with_label = true) {
  ExampleBuilder b;
  b.AddFloatList(keys::kObjectXmin, l.xmin.data(), l.xmin.size());
  b.AddFloatList(keys::kObjectYmin, l.ymin.data(), l.ymin.size());
  b.AddFloatList(keys::kObjectXmax, l.xmax.data(), l.xmax.size());
  b.AddFloatList(keys::kObjectYmax, l.ymax.data(), l.ymax.size());
  if (with_label) b.AddInt64List(keys::kObjectLabel, l.label.data(), l.label.size());
  return b.Serialize();
}

Status Read(const std::string& rec, BoxRecord* out) {
  auto ex = ExampleView::Parse(rec);
  EXPECT_TRUE(ex.ok()) << ex.status();
  return ReadBoxes(*ex, out);
}

TEST(BoxRecordTest, ReadsTheObjectDetectionApisKeys) {
  const Lists l{{0.1f, 0.5f}, {0.2f, 0.0f}, {0.3f, 1.0f}, {0.4f, 0.5f}, {3, 1}};
  BoxRecord b;
  ASSERT_TRUE(Read(Record(l), &b).ok());
  ASSERT_EQ(b.boxes.size(), 2u);
  EXPECT_FLOAT_EQ(b.boxes[0].xmin, 0.1f);
  EXPECT_FLOAT_EQ(b.boxes[0].ymin, 0.2f);
  EXPECT_FLOAT_EQ(b.boxes[0].xmax, 0.3f);
  EXPECT_FLOAT_EQ(b.boxes[0].ymax, 0.4f);
  EXPECT_FLOAT_EQ(b.boxes[1].xmax, 1.0f);
  EXPECT_EQ(b.labels, (std::vector<int64_t>{3, 1}));
}

TEST(BoxRecordTest, ARecordWithoutBoxKeysHasZeroBoxes) {
  ExampleBuilder e;
  e.AddInt64("image/class/label", 4);
  BoxRecord b;
  b.boxes.resize(3);
  ASSERT_TRUE(Read(e.Serialize(), &b).ok());
  EXPECT_TRUE(b.boxes.empty());
  EXPECT_TRUE(b.labels.empty());
  // Empty lists are zero boxes too.
  ASSERT_TRUE(Read(Record(Lists{}), &b).ok());
  EXPECT_TRUE(b.boxes.empty());
}

TEST(BoxRecordTest, MalformedBoxesAreDataLossNamingTheKeyAndBox) {
  struct Case {
    Lists l;
    const char* want;
  };
  const float nan = std::nanf("");
  const std::vector<Case> cases = {
      {{{0.1f, 0.2f}, {0.1f}, {0.3f}, {0.4f}, {1}}, "unequal box lists"},
      {{{0.1f}, {0.1f}, {0.3f}, {0.4f}, {1, 2}}, "image/object/class/label has 2 values for 1 boxes"},
      {{{nan}, {0.1f}, {0.3f}, {0.4f}, {1}}, "box 0: image/object/bbox/xmin nan is not in [0, 1]"},
      {{{0.1f, 0.5f}, {0.1f, 0.1f}, {0.3f, 0.4f}, {0.4f, 0.4f}, {1, 1}}, "box 1: min > max"},
      {{{0.1f}, {0.1f}, {1.5f}, {0.4f}, {1}}, "image/object/bbox/xmax 1.5 is not in [0, 1]"},
      {{{0.1f}, {-0.1f}, {0.5f}, {0.4f}, {1}}, "image/object/bbox/ymin -0.100000001 is not in [0, 1]"},
      {{{0.1f}, {0.1f}, {0.5f}, {0.4f}, {-2}}, "box 0: image/object/class/label -2 is negative"},
  };
  for (const Case& c : cases) {
    BoxRecord b;
    const Status s = Read(Record(c.l), &b);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << c.want;
    EXPECT_NE(s.message().find(c.want), std::string::npos) << s.message();
  }
  BoxRecord b;
  const Status s = Read(Record(Lists{{0.1f}, {0.1f}, {0.3f}, {0.4f}, {}}, /*with_label=*/false), &b);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("1 boxes without image/object/class/label"), std::string::npos) << s.message();
  ExampleBuilder e;
  e.AddFloat(keys::kObjectXmin, 0.1f);
  const Status missing = Read(e.Serialize(), &b);
  EXPECT_NE(missing.message().find("box keys without image/object/bbox/ymin"), std::string::npos) << missing.message();
  // An optional list of another length.
  ExampleBuilder t;
  const float x0 = 0.1f, x1 = 0.2f;
  t.AddFloat(keys::kObjectXmin, x0);
  t.AddFloat(keys::kObjectYmin, x0);
  t.AddFloat(keys::kObjectXmax, x1);
  t.AddFloat(keys::kObjectYmax, x1);
  t.AddInt64(keys::kObjectLabel, 1);
  t.AddBytesList(keys::kObjectText, {"a", "b"});
  const Status text = Read(t.Serialize(), &b);
  EXPECT_NE(text.message().find("image/object/class/text has 2 values for 1 boxes"), std::string::npos)
      << text.message();
}

}  // namespace
}  // namespace libshard::example

// The report on a detection set: thumbnails carry their boxes as an SVG in
// class colours, and a section gives the boxes per class and a size
// histogram over the records looked at.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "box_fixtures.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/report/report.h"
#include "report/page_parts.h"
#include "testutil.h"

namespace libshard::report {
namespace {

using testing::BoxSample;
using testing::Contains;

size_t Count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The bundled samples converted, then each shard rewritten with as many
// detection records (labels 0..9 as the set's classes; boxes of classes 1
// and 3 in every record, a record without boxes every fifth).
std::string DetectionSet(const std::string& dir) {
  const std::string out = dir + "/fashion";
  auto r = testing::RunShard("convert " + testing::SourceDir() + "/samples/images -o " + out +
                             " --records-per-shard 32 --seed 1 -q");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  StatusOr<Manifest> m = manifest::ReadManifest(out + "/manifest.json");
  EXPECT_TRUE(m.ok());
  for (const SplitEntry& split : m->splits()) {
    for (const ShardEntry& shard : split.shards()) {
      auto w = record::RecordWriter::Create(out + "/" + shard.file(), {});
      EXPECT_TRUE(w.ok());
      for (uint64_t i = 0; i < shard.records(); ++i) {
        BoxSample s;
        s.boxes = {{4, 4, 20, 20, 1}, {30, 10, 90, 70, 3}};  // 16 px and 60 px sides
        s.box_keys = i % 5 != 4;
        EXPECT_TRUE((*w)->Write(testing::BoxRecordBytes(s, static_cast<int64_t>(i % 10))).ok());
      }
      EXPECT_TRUE((*w)->Close().ok());
    }
  }
  return out;
}

TEST(ReportBoxesTest, ThumbnailsShowTheirBoxesAndASectionCountsThem) {
  const std::string out = DetectionSet(testing::MakeTempDir());
  StatusOr<std::string> html = RenderReport(out, {});
  ASSERT_TRUE(html.ok()) << html.status().message();
  // Every thumbnail of a record with boxes has both, in their class colours.
  const size_t overlays = Count(*html, "<svg class=\"boxes\"");
  EXPECT_GT(overlays, 0u);
  EXPECT_EQ(Count(*html, "<rect x=\"0.04167\" y=\"0.05556\" width=\"0.1667\" height=\"0.2222\" stroke=\"" +
                             CssColor(PaletteColor(1)) + "\" data-label=\"1\"><title>red</title>"),
            overlays);
  EXPECT_EQ(Count(*html, "stroke=\"" + CssColor(PaletteColor(3)) + "\" data-label=\"3\"><title>blue</title>"),
            overlays);
  // The section: per class, sizes (16 px -> 16-32, 60 px -> 32-64).
  EXPECT_TRUE(Contains(*html, "<h3>Detection boxes</h3>"));
  EXPECT_TRUE(Contains(*html, "data-chart=\"boxes-per-class\""));
  EXPECT_TRUE(Contains(*html, "red (1)"));
  EXPECT_TRUE(Contains(*html, "blue (3)"));
  EXPECT_TRUE(Contains(*html, "data-chart=\"box-sizes\""));
  EXPECT_TRUE(Contains(*html, "16-32"));
  EXPECT_TRUE(Contains(*html, "32-64"));
  // Each split's scan looks at every record (fewer than max_scan_records): in each shard, 4 of 5 have 2 boxes.
  StatusOr<Manifest> m = manifest::ReadManifest(out + "/manifest.json");
  ASSERT_TRUE(m.ok());
  for (const SplitEntry& split : m->splits()) {
    uint64_t with_boxes = 0;
    for (const ShardEntry& shard : split.shards()) with_boxes += shard.records() - (shard.records() + 1) / 5;
    EXPECT_TRUE(Contains(*html, FormatCount(2 * with_boxes) + " boxes in " + FormatCount(with_boxes) + " of the " +
                                    FormatCount(split.records()) + " records looked at"))
        << split.name();
  }
}

}  // namespace
}  // namespace libshard::report

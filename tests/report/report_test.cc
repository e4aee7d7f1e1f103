// The report module: the page's pieces (escaping, colours, charts) and pages
// of converted sets (determinism, 10k classes, rejects, verify, errors).
// The browser checks are tests/report/report_browser_test.py.
#include "libshard/report/report.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "formats_testutil.h"
#include "libshard/image/encode.h"
#include "libshard/manifest/manifest_json.h"
#include "report/page_parts.h"
#include "testutil.h"

namespace libshard::report {
namespace {

using testing::Contains;
using testing::MakeTempDir;
using testing::ReadFileOrDie;
using testing::RunShard;
using testing::SourceDir;
using testing::WriteFileOrDie;

size_t Count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(ReportPagePartsTest, HtmlEscapeEscapesMarkupAndInvalidUtf8) {
  EXPECT_EQ(HtmlEscape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
  EXPECT_EQ(HtmlEscape("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(HtmlEscape(std::string("a\xff<", 3)), "a\\xff&lt;");
  EXPECT_EQ(HtmlEscape("rtl\xe2\x80\xaegpj.exe<"), "rtl\\u202egpj.exe&lt;");  // not shown as "rtlexe.jpg"
}

TEST(ReportPagePartsTest, DataUrlIsBase64) {
  EXPECT_EQ(DataUrl("image/png", "abc"), "data:image/png;base64,YWJj");
  EXPECT_EQ(DataUrl("image/png", "ab"), "data:image/png;base64,YWI=");
  EXPECT_EQ(DataUrl("image/png", ""), "data:image/png;base64,");
}

TEST(ReportPagePartsTest, PaletteColoursContrastWithWhiteAndDiffer) {
  const Rgb white = {255, 255, 255};
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_GE(ContrastRatio(PaletteColor(i), white), 3.0) << i << " " << CssColor(PaletteColor(i));
    if (i < 32) {
      EXPECT_TRUE(seen.insert(CssColor(PaletteColor(i))).second) << i;
    }
  }
}

TEST(ReportPagePartsTest, SwatchBorderContrastsWithAnyColour) {
  for (int r = 0; r < 256; r += 15) {
    for (int g = 0; g < 256; g += 15) {
      for (int b = 0; b < 256; b += 15) {
        const Rgb c = {uint8_t(r), uint8_t(g), uint8_t(b)};
        EXPECT_GE(ContrastRatio(c, BorderFor(c)), 4.5) << CssColor(c);
      }
    }
  }
  EXPECT_NEAR(ContrastRatio({0, 0, 0}, {255, 255, 255}), 21.0, 1e-9);
}

TEST(ReportPagePartsTest, BarChartHasTitleLabelsAndValues) {
  const std::string svg =
      HorizontalBarChart("Samples <per> class", {{"cat", 30, "", "cat"}, {"dog", 10, "", "dog"}}, 40);
  EXPECT_TRUE(Contains(svg, "<title>Samples &lt;per&gt; class</title>"));
  EXPECT_TRUE(Contains(svg, "<tspan class=\"name\">cat</tspan><tspan class=\"value\" dx=\"8\">30 (75.0%)</tspan>"));
  EXPECT_TRUE(Contains(svg, "<title>dog: 10 (25.0%)</title>"));
  EXPECT_TRUE(Contains(svg, "data-key=\"dog\" data-count=\"10\""));
  EXPECT_TRUE(Contains(svg, "width=\"100.000%\""));  // the longest bar
  EXPECT_TRUE(Contains(svg, "width=\"33.333%\""));
}

TEST(ReportPagePartsTest, HistogramLabelsFirstMiddleLast) {
  std::vector<Bin> bins;
  for (int i = 0; i < 12; ++i) bins.push_back({"b" + std::to_string(i), uint64_t(i)});
  const std::string svg = Histogram("Widths", "width (pixels)", bins);
  EXPECT_EQ(Count(svg, "<rect"), 12u);
  EXPECT_TRUE(Contains(svg, ">b0</text>"));
  EXPECT_TRUE(Contains(svg, ">b6</text>"));
  EXPECT_TRUE(Contains(svg, ">b11</text>"));
  EXPECT_FALSE(Contains(svg, ">b3</text>"));
  EXPECT_TRUE(Contains(svg, ">width (pixels)</text>"));
}

// The bundled Fashion-MNIST samples, converted once per test.
std::string ConvertSamples(const std::string& dir) {
  const std::string out = dir + "/fashion";
  auto r = RunShard("convert " + SourceDir() + "/samples/images -o " + out + " --records-per-shard 32 --seed 1 -q");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out;
}

std::set<std::string> ThumbFiles(const std::string& html) {
  std::set<std::string> files;
  const std::string start = "<figure title=\"";
  for (size_t at = html.find(start); at != std::string::npos; at = html.find(start, at + 1)) {
    const size_t from = at + start.size();
    files.insert(html.substr(from, html.find('"', from) - from));
  }
  return files;
}

TEST(ReportTest, SameSeedSameBytesOtherSeedOtherThumbnails) {
  const std::string out = ConvertSamples(MakeTempDir());
  ReportOptions o;
  o.thumbnails_per_class = 2;
  StatusOr<std::string> a = RenderReport(out, o), b = RenderReport(out + "/manifest.json", o);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  o.seed = 7;
  StatusOr<std::string> c = RenderReport(out, o);
  ASSERT_TRUE(c.ok());
  // 10 classes x 2 thumbnails in each of two splits (train 80, val 20 samples).
  EXPECT_EQ(Count(*a, "<figure title="), 40u);  // (the duplicates section has its own figures)
  EXPECT_EQ(ThumbFiles(*a), ThumbFiles(*b));
  EXPECT_NE(ThumbFiles(*a), ThumbFiles(*c));
  EXPECT_FALSE(Contains(*a, "<script"));
  EXPECT_FALSE(Contains(*a, "src=\"http"));
  EXPECT_TRUE(Contains(*a, "<h3>Class balance</h3>"));
  EXPECT_TRUE(Contains(*a, "Every source image is 28&times;28."));
  EXPECT_TRUE(Contains(*a, "No input was rejected."));
  // Per-channel mean and std, as the manifest has them.
  StatusOr<Manifest> m = manifest::ReadManifest(out + "/manifest.json");
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->splits(0).stats().channels_size(), 3);
  char cells[128];
  std::snprintf(cells, sizeof(cells), "<td>red</td><td class=\"num\">%.3f</td><td class=\"num\">%.3f</td>",
                m->splits(0).stats().channels(0).mean(), m->splits(0).stats().channels(0).std());
  EXPECT_TRUE(Contains(*a, cells)) << cells;
  EXPECT_FALSE(Contains(*a, "id=\"verify\""));
}

TEST(ReportTest, WriteReportDefaultsBesideTheManifest) {
  const std::string out = ConvertSamples(MakeTempDir());
  std::string path;
  ASSERT_TRUE(WriteReport(out + "/", "", {}, &path).ok());
  EXPECT_EQ(path, out + "/report.html");
  EXPECT_TRUE(Contains(ReadFileOrDie(path), "<!DOCTYPE html>"));
}

TEST(ReportTest, WriteReportPageReturnsThePathWritten) {
  const std::string dir = MakeTempDir();
  const std::string out = ConvertSamples(dir);
  StatusOr<std::string> beside = WriteReportPage(out + "/manifest.json", "", {});
  ASSERT_TRUE(beside.ok()) << beside.status();
  EXPECT_EQ(*beside, out + "/report.html");
  StatusOr<std::string> elsewhere = WriteReportPage(out, dir + "/page.html", {});
  ASSERT_TRUE(elsewhere.ok()) << elsewhere.status();
  EXPECT_EQ(*elsewhere, dir + "/page.html");
  EXPECT_EQ(ReadFileOrDie(*elsewhere), ReadFileOrDie(*beside));
  // A folder that is not there: the error names the page, nothing is left behind.
  StatusOr<std::string> nowhere = WriteReportPage(out, dir + "/no/page.html", {});
  ASSERT_FALSE(nowhere.ok());
  EXPECT_TRUE(Contains(nowhere.status().message(), dir + "/no/page.html")) << nowhere.status();
  EXPECT_EQ(WriteReportPage(dir + "/none", "", {}).status().code(), StatusCode::kNotFound);
}

TEST(ReportTest, TenThousandClassesShowTopNAndMore) {
  const std::string out = ConvertSamples(MakeTempDir());
  StatusOr<Manifest> m = manifest::ReadManifest(out + "/manifest.json");
  ASSERT_TRUE(m.ok());
  // The same shards, described with 10,000 classes.
  m->clear_labels();
  for (int i = 0; i < 10000; ++i) {
    LabelEntry* l = m->add_labels();
    l->set_label(i);
    l->set_name("class_" + std::to_string(i));
  }
  for (SplitEntry& s : *m->mutable_splits()) {
    s.mutable_stats()->clear_labels();
    for (int i = 0; i < 10000; ++i) {
      LabelCount* c = s.mutable_stats()->add_labels();
      c->set_label(i);
      c->set_count(1 + (i * 7919) % 1000);
    }
  }
  WriteFileOrDie(out + "/manifest.json", manifest::ToJson(*m));
  StatusOr<std::string> html = RenderReport(out, {});
  ASSERT_TRUE(html.ok()) << html.status().message();
  EXPECT_TRUE(Contains(*html, "and 9,960 more classes")) << html->substr(0, 2000);
  EXPECT_EQ(Count(*html, "<g class=\"bar\""), 80u);  // 40 per split
  EXPECT_LT(html->size(), 3'000'000u);
  // The largest class (count 1000) is listed first.
  const size_t first = html->find("<g class=\"bar\"");
  EXPECT_TRUE(Contains(html->substr(first, 200), "data-count=\"1000\""));
  EXPECT_TRUE(Contains(*html, "10,000 classes; largest 1,000, smallest 1."));
}

TEST(ReportTest, RejectsAreGroupedByReason) {
  const std::string dir = MakeTempDir();
  const std::string in = dir + "/in";
  ASSERT_EQ(
      std::system(
          ("mkdir -p " + in + "/cat && cp " + SourceDir() + "/samples/images/train/bag/*.png " + in + "/cat/").c_str()),
      0);
  for (int i = 0; i < 7; ++i) WriteFileOrDie(in + "/cat/bad" + std::to_string(i) + ".png", "not a png at all");
  auto r = RunShard("convert " + in + " -o " + dir + "/out -q");
  ASSERT_EQ(r.exit_code, 3) << r.err;
  StatusOr<std::string> html = RenderReport(dir + "/out", {});
  ASSERT_TRUE(html.ok());
  EXPECT_TRUE(Contains(*html, "7 rejected in 1 group(s)")) << *html;
  EXPECT_TRUE(Contains(*html, "data-count=\"7\""));
  EXPECT_TRUE(Contains(*html, "and 2 more</li>"));  // five files shown per group
}

// Issue 32: the BMP, GIF and TIFF decoders' rejects group by cause, not one
// group per file: three files of each format, of different sizes, cut at
// different points (each format's own "truncated" reason), and three of each
// with a zero width in the header, give one group per format and cause.
TEST(ReportTest, BmpGifTiffRejectsGroupByCause) {
  const std::string dir = MakeTempDir();
  const std::string in = dir + "/in/cat";
  std::filesystem::create_directories(in);
  ASSERT_EQ(std::system(("cp " + SourceDir() + "/samples/images/train/bag/*.png " + in + "/").c_str()), 0);
  for (int i = 0; i < 3; ++i) {
    const int w = 16 + 7 * i, h = 9 + 5 * i;
    const std::vector<uint8_t> rgb = testing::PatternBytes(size_t(w) * h * 3, i);
    std::vector<uint8_t> gray(size_t(w) * h);
    for (size_t k = 0; k < gray.size(); ++k) gray[k] = uint8_t(k * 7 + i);
    testing::TiffPage page;
    page.width = w;
    page.height = h;
    page.channels = 3;
    page.samples = rgb;
    testing::GifFrame frame;
    frame.width = w;
    frame.height = h;
    frame.indices.assign(gray.size(), 0);
    for (size_t k = 0; k < gray.size(); ++k) frame.indices[k] = gray[k] % 4;
    const std::vector<uint8_t> palette = {0, 0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 255};
    const std::map<std::string, std::string> files = {
        {"bmp", testing::Bmp24Bytes(w, h, rgb)},
        {"gif", testing::GifBytes(w, h, palette, 0, {frame})},
        {"tif", testing::TiffBytes({page}, dir)},
    };
    for (const auto& [ext, bytes] : files) {
      const size_t cut = bytes.size() - 4 - i;  // in the pixels (TIFF: its directory, written last)
      WriteFileOrDie(in + "/cut" + std::to_string(i) + "." + ext, bytes.substr(0, cut));
      std::string zero = bytes;  // width 0: BMP bytes 18..21, GIF 6..7; TIFF's first tag's value
      if (ext == "bmp") zero.replace(18, 4, std::string(4, '\0'));
      if (ext == "gif") zero.replace(6, 2, std::string(2, '\0'));
      if (ext == "tif") {  // little-endian (libtiff writes the host's order): ImageWidth's value
        const uint32_t ifd =
            uint8_t(bytes[4]) | uint8_t(bytes[5]) << 8 | uint8_t(bytes[6]) << 16 | uint32_t(uint8_t(bytes[7])) << 24;
        const size_t entries = uint8_t(bytes[ifd]) | uint8_t(bytes[ifd + 1]) << 8;
        for (size_t e = 0; e < entries; ++e) {
          const size_t at = ifd + 2 + 12 * e;
          if ((uint8_t(bytes[at]) | uint8_t(bytes[at + 1]) << 8) == 256) zero.replace(at + 8, 4, std::string(4, '\0'));
        }
      }
      WriteFileOrDie(in + "/bad" + std::to_string(i) + "." + ext, zero);
    }
  }
  auto r = RunShard("convert " + dir + "/in -o " + dir + "/out -q --no-sync");
  ASSERT_EQ(r.exit_code, 3) << r.err;
  StatusOr<Manifest> m = manifest::ReadManifest(dir + "/out/manifest.json");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->rejects_size(), 18);
  StatusOr<std::string> html = RenderReport(dir + "/out", {});
  ASSERT_TRUE(html.ok()) << html.status();
  std::string reasons;
  for (const Reject& j : m->rejects()) reasons += j.path() + ": " + j.reason() + "\n";
  EXPECT_TRUE(Contains(*html, "18 rejected in 6 group(s)")) << reasons;
  EXPECT_EQ(Count(*html, "<div class=\"reject-group\" data-count=\"3\">"), 6u) << reasons;
}

// Issue 32: a repeated option (--feature's "COLUMN:TYPE" list) is shown in
// the options table; reading it as a single string aborted the report.
TEST(ReportTest, RepeatedOptionsAreListed) {
  const std::string dir = MakeTempDir();
  ASSERT_EQ(std::system(
                ("mkdir -p " + dir + "/in && cp " + SourceDir() + "/samples/images/train/bag/0003*.png " + dir + "/in/")
                    .c_str()),
            0);
  std::string csv = "path,label,score,tags\n";
  int k = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/in")) {
    csv += e.path().filename().string() + "," + std::to_string(k % 2) + ",0.5,1 " + std::to_string(k) + "\n";
    ++k;
  }
  WriteFileOrDie(dir + "/in/labels.csv", csv);
  auto r = RunShard("convert " + dir + "/in/labels.csv -o " + dir +
                    "/out -q --no-sync --feature score:float "
                    "--feature tags:int_list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  StatusOr<std::string> html = RenderReport(dir + "/out", {});
  ASSERT_TRUE(html.ok()) << html.status();
  EXPECT_TRUE(Contains(*html, "<tr><th>features</th><td><code>score:float, tags:int_list</code></td></tr>")) << *html;
}

// Issue 33: the duplicates section shows the leak check's counts and the
// first kShownLeaks (24) leaked pairs side by side, each with both
// thumbnails; the rest are counted.
TEST(ReportTest, LeakedPairsSideBySideAndMoreCounted) {
  const std::string dir = MakeTempDir();
  const std::string in = dir + "/in";
  // The sample's train images again in val: 80 exact leaks.
  ASSERT_EQ(std::system(("mkdir -p " + in + " && cp -r " + SourceDir() + "/samples/images/train " + in +
                         "/train && cp -r " + SourceDir() + "/samples/images/train " + in + "/val")
                            .c_str()),
            0);
  auto r = RunShard("convert " + in + " -o " + dir + "/out -q --no-sync");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  StatusOr<Manifest> m = manifest::ReadManifest(dir + "/out/manifest.json");
  ASSERT_TRUE(m.ok());
  const uint64_t leaks = m->duplicates().leaks();
  ASSERT_GE(leaks, 80u);
  StatusOr<std::string> html = RenderReport(dir + "/out", {});
  ASSERT_TRUE(html.ok()) << html.status().message();
  EXPECT_TRUE(Contains(*html, "data-leaks=\"" + std::to_string(leaks) + "\"")) << *html;
  EXPECT_TRUE(Contains(*html, "data-within=\"" + std::to_string(m->duplicates().within()) + "\""));
  EXPECT_EQ(Count(*html, "<div class=\"leak-pair\""), 24u);
  EXPECT_TRUE(Contains(*html, "and " + std::to_string(leaks - 24) + " more leaked pair(s)"));
  // Both sides of each shown pair have their picture: 48 thumbnails, none missing.
  const std::string section = html->substr(html->find("<section id=\"duplicates\">"));
  EXPECT_EQ(Count(section.substr(0, section.find("</section>")), "<img class=\"image"), 48u);
  EXPECT_FALSE(Contains(*html, "not found in its split"));
  // Issue 46: the images, not only the pairs (each split's 80), and each
  // figure's whole path (its class folder), not its base name alone.
  EXPECT_EQ(m->duplicates().leaked_images(), 160u);
  EXPECT_TRUE(Contains(*html, "<b id=\"leaked-images\" data-images=\"160\">160 image(s)</b> have a copy in another "
                              "split (train 80, val 80)"))
      << section.substr(0, 600);
  EXPECT_TRUE(Contains(section, "</div><figcaption><b>val</b> <span class=\"path\">val/<wbr>")) << section.substr(0, 900);
  EXPECT_TRUE(Contains(*html,
                       "<div class=\"leak-pair\" data-kind=\"exact\" data-distance=\"0\"><figure "
                       "data-split=\"train\" data-file=\"train/"))
      << section.substr(0, 600);
  // Without the list the counts still show, with what went wrong.
  ASSERT_EQ(std::remove((dir + "/out/duplicates.tsv").c_str()), 0);
  html = RenderReport(dir + "/out", {});
  ASSERT_TRUE(html.ok());
  EXPECT_TRUE(Contains(*html, "duplicates.tsv")) << *html;
  EXPECT_EQ(Count(*html, "<div class=\"leak-pair\""), 0u);
}

// Issue 30 item 4: a right-to-left override in a class or a file name is
// shown as \u202e, never copied into the page raw.
TEST(ReportTest, BidirectionalControlsInNamesAreShownEscaped) {
  const std::string dir = MakeTempDir();
  const std::string rlo = "\xe2\x80\xae";
  const std::string in = dir + "/in", cls = in + "/rtl" + rlo + "tac";
  ASSERT_EQ(std::system(("mkdir -p '" + cls + "' '" + in + "/dog' && cp " + SourceDir() +
                         "/samples/images/train/bag/*.png '" + cls + "/' && cp " + SourceDir() +
                         "/samples/images/train/coat/*.png " + in + "/dog/")
                            .c_str()),
            0);
  ASSERT_EQ(std::system(("cp " + SourceDir() + "/samples/images/train/bag/$(ls " + SourceDir() +
                         "/samples/images/train/bag | head -1) '" + cls + "/x" + rlo + "gnp.exe.png'")
                            .c_str()),
            0);
  WriteFileOrDie(cls + "/bad" + rlo + "gpj.exe.png", "not an image");
  auto r = RunShard("convert '" + in + "' -o " + dir + "/out -q");
  ASSERT_EQ(r.exit_code, 3) << r.err;  // one reject
  ReportOptions o;
  o.thumbnails_per_class = 64;
  StatusOr<std::string> html = RenderReport(dir + "/out", o);
  ASSERT_TRUE(html.ok()) << html.status().message();
  EXPECT_FALSE(Contains(*html, rlo));
  EXPECT_TRUE(Contains(*html, "rtl\\u202etac")) << html->substr(0, 3000);
  EXPECT_TRUE(Contains(*html, "x\\u202egnp.exe.png"));
  EXPECT_TRUE(Contains(*html, "bad\\u202egpj.exe.png"));
}

// The part of `html` from the section of split `name` to the next section.
std::string SplitSection(const std::string& html, const std::string& name) {
  const size_t at = html.find("<section class=\"split\" id=\"split-" + name + "\"");
  if (at == std::string::npos) return "";
  return html.substr(at, html.find("</section>", at) - at);
}

// Issue 32 (Confusing, report): a class without samples in a split gets a
// zero bar (the header's count and the bars agree); splits are shown train,
// val, test.
TEST(ReportTest, EveryClassHasABarAndSplitsAreInTrainValTestOrder) {
  const std::string dir = MakeTempDir(), in = dir + "/in", bags = SourceDir() + "/samples/images/train/bag/";
  std::string script = "set -e";
  for (const char* folder : {"train/a", "train/b", "train/c", "val/a", "val/b", "test/a", "test/b", "test/c"}) {
    script += std::string("; mkdir -p ") + in + "/" + folder + " && cp " + bags + "0003*.png " + in + "/" + folder;
  }
  ASSERT_EQ(std::system(script.c_str()), 0);
  auto r = RunShard("convert -q " + in + " -o " + dir + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  StatusOr<std::string> html = RenderReport(dir + "/out", {});
  ASSERT_TRUE(html.ok()) << html.status().message();
  EXPECT_TRUE(Contains(*html, " classes, 0 rejected")) << html->substr(0, 2000);
  const std::string val = SplitSection(*html, "val");
  EXPECT_EQ(Count(val, "<g class=\"bar\""), 3u) << val;
  EXPECT_TRUE(Contains(val, "data-key=\"c\" data-count=\"0\"")) << val;
  EXPECT_TRUE(Contains(val, "3 classes; largest ")) << val;
  EXPECT_TRUE(Contains(val, ", smallest 0.")) << val;
  const size_t train = html->find("id=\"split-train\""), v = html->find("id=\"split-val\""),
               test = html->find("id=\"split-test\"");
  ASSERT_NE(test, std::string::npos);
  EXPECT_LT(train, v);
  EXPECT_LT(v, test);
  EXPECT_LT(html->find("href=\"#split-train\""), html->find("href=\"#split-val\""));
  EXPECT_LT(html->find("href=\"#split-val\""), html->find("href=\"#split-test\""));
}

// A segmentation set: the header names its mask classes (not "0 classes"),
// and the legend keeps a class without pixels.
TEST(ReportTest, SegmentationHeaderAndLegendNameEveryMaskClass) {
  const std::string dir = MakeTempDir();
  WriteFileOrDie(dir + "/class_dict.csv", "name,r,g,b\nsky,0,0,255\nroad,128,64,128\nunused,9,9,9\n");
  std::filesystem::create_directories(dir + "/in");
  std::filesystem::create_directories(dir + "/masks");
  for (int k = 0; k < 2; ++k) {
    image::Image img(8, 6, 3), mask(8, 6, 3);
    for (int y = 0; y < 6; ++y) {
      for (int x = 0; x < 8; ++x) {
        uint8_t* p = mask.row(y) + 3 * x;
        const bool sky = y < 3;
        p[0] = sky ? 0 : 128;
        p[1] = sky ? 0 : 64;
        p[2] = sky ? 255 : 128;
        img.row(y)[3 * x] = static_cast<uint8_t>(x * 30 + k);
      }
    }
    WriteFileOrDie(dir + "/in/img" + std::to_string(k) + ".png", *image::EncodePng(img));
    WriteFileOrDie(dir + "/masks/img" + std::to_string(k) + ".png", *image::EncodePng(mask));
  }
  auto r = RunShard("convert -q " + dir + "/in -o " + dir + "/out --masks " + dir + "/masks --mask-labels " + dir +
                    "/class_dict.csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  StatusOr<std::string> html = RenderReport(dir + "/out", {});
  ASSERT_TRUE(html.ok()) << html.status().message();
  EXPECT_FALSE(Contains(*html, "0 classes")) << html->substr(0, 2000);
  EXPECT_TRUE(Contains(*html, "3 mask classes")) << html->substr(0, 2000);
  EXPECT_TRUE(Contains(*html, "data-index=\"2\"")) << *html;
  EXPECT_TRUE(Contains(*html, "2 unused</li>")) << *html;
}

TEST(ReportTest, VerifyShowsFaultsAndDamagedRecordsAreCounted) {
  const std::string out = ConvertSamples(MakeTempDir());
  ReportOptions o;
  o.verify = true;
  o.thumbnails_per_class = 64;  // every record is looked at
  StatusOr<std::string> good = RenderReport(out, o);
  ASSERT_TRUE(good.ok());
  EXPECT_TRUE(Contains(*good, "data-faults=\"0\">verified: 4 files, 100 records, no faults"));
  // One byte of a record's payload in the first train shard.
  const std::string shard = out + "/images-train-00000-of-00003.tfrecord";
  std::string bytes = ReadFileOrDie(shard);
  bytes[200] ^= 0x40;
  WriteFileOrDie(shard, bytes);
  StatusOr<std::string> bad = RenderReport(out, o);
  ASSERT_TRUE(bad.ok()) << bad.status().message();
  EXPECT_TRUE(Contains(*bad, "fault(s) found by shard verify")) << *bad;
  EXPECT_TRUE(Contains(*bad, "data_crc_mismatch"));
  EXPECT_TRUE(Contains(*bad, "record(s) or shard(s) could not be shown; the first: " + shard));
  // A missing shard: still a page, which says so.
  ASSERT_EQ(::unlink(shard.c_str()), 0);
  StatusOr<std::string> missing = RenderReport(out, o);
  ASSERT_TRUE(missing.ok()) << missing.status().message();
  EXPECT_TRUE(Contains(*missing, "manifest_shard_missing")) << *missing;
  EXPECT_TRUE(Contains(*missing, "could not be shown; the first: open " + shard + ": No such file"));
}

TEST(ReportTest, ErrorsNameTheFile) {
  const std::string dir = MakeTempDir();
  StatusOr<std::string> r = RenderReport(dir, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(r.status().message(), dir + "/manifest.json")) << r.status().message();
  ReportOptions o;
  o.thumbnails_per_class = 65;
  EXPECT_EQ(RenderReport(dir, o).status().code(), StatusCode::kInvalidArgument);
  ReportOptions decode_alone;
  decode_alone.verify_decode = true;
  EXPECT_EQ(RenderReport(dir, decode_alone).status().code(), StatusCode::kInvalidArgument);
}

TEST(ReportTest, CliWritesThePageAndRejectsBadArguments) {
  const std::string dir = MakeTempDir();
  const std::string out = ConvertSamples(dir);
  auto ok = RunShard("report " + out + " -o " + dir + "/page.html --thumbnails 1");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(Contains(ok.err, "wrote " + dir + "/page.html"));
  EXPECT_EQ(Count(ReadFileOrDie(dir + "/page.html"), "<figure title="), 20u);
  EXPECT_EQ(RunShard("report " + dir + "/nowhere").exit_code, 2);
  EXPECT_EQ(RunShard("report " + out + " --thumbnails 65").exit_code, 2);
  EXPECT_EQ(RunShard("report " + out + " --decode").exit_code, 2);  // needs --verify
  auto decoded = RunShard("report " + out + " --verify --decode -o " + dir + "/decoded.html");
  EXPECT_EQ(decoded.exit_code, 0) << decoded.err;
  EXPECT_TRUE(Contains(ReadFileOrDie(dir + "/decoded.html"), "every image decoded"));
  auto conv = RunShard("convert " + SourceDir() + "/samples/photos -o " + dir + "/photos -q --report");
  EXPECT_EQ(conv.exit_code, 0) << conv.err;
  const std::string page = ReadFileOrDie(dir + "/photos/report.html");
  EXPECT_TRUE(Contains(page, "Unlabeled: no class balance to show."));
  EXPECT_EQ(Count(page, "<figure "), 5u);
  EXPECT_TRUE(Contains(page, "distinct source sizes"));
  EXPECT_TRUE(Contains(page, "<title>Source image widths</title>"));
  EXPECT_TRUE(Contains(page, "<title>Source aspect ratios (width / height)</title>"));
}

}  // namespace
}  // namespace libshard::report

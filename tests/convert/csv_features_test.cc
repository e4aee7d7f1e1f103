// CSV columns stored as record features (ListOptions::features, `shard
// convert --feature COLUMN:TYPE`): every type written and read back with
// TensorFlow's example.proto, bad fields as rejects naming the file, line and
// column, the header's and the flag's errors, and a changed value redoing its
// shard.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "fixtures.h"
#include "libshard/convert/converter.h"
#include "libshard/convert/source_listing.h"
#include "tensorflow/core/example/example.pb.h"
#include "testutil.h"

namespace libshard::convert {
namespace {

using testing::Contains;
using testing::MakeTempDir;
using testing::PngBytes;
using testing::ReadRecords;
using testing::WriteFileOrDie;
using testing::WriteTreeFile;

class CsvFeaturesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    for (int i = 0; i < 5; ++i) WriteTreeFile(dir_, "img/" + std::to_string(i) + ".png", PngBytes(6, 4, 3, i));
  }
  ConvertOptions Options(const std::string& csv_text) {
    WriteFileOrDie(dir_ + "/labels.csv", csv_text);
    ConvertOptions o;
    o.input = dir_ + "/labels.csv";
    o.output = dir_ + "/out";
    o.sync = false;
    o.threads = 2;
    o.leaks = LeakMode::kOff;
    o.plan.records_per_shard = 2;
    for (const char* spec : {"tags:int_list", "score:float", "caption:bytes", "box:float_list", "n:int"}) {
      o.list.features.push_back(*ParseCsvFeature(spec));
    }
    return o;
  }
  // Every record of the output, by image/filename.
  std::map<std::string, tensorflow::Example> Records() {
    std::map<std::string, tensorflow::Example> out;
    for (const auto& e : std::filesystem::directory_iterator(dir_ + "/out")) {
      if (e.path().extension() != ".tfrecord") continue;
      for (const std::string& rec : ReadRecords(e.path().string())) {
        tensorflow::Example ex;
        EXPECT_TRUE(ex.ParseFromString(rec));
        out[ex.features().feature().at("image/filename").bytes_list().value(0)] = ex;
      }
    }
    return out;
  }
  std::string dir_;
};

const char kCsv[] =
    "path,label,tags,score,caption,box,n\n"
    "img/0.png,0,1 4 7,0.5,\"a bag, brown\",0.25 -1e3,3\n"
    "img/1.png,1,,2,,,-4\n"
    "img/2.png,0,9223372036854775807,-0.125,x,1,0\n"
    "img/3.png,1,2,nan,y,1,5\n"
    "img/4.png,1,3 x,1.5,z,2,6\n";

TEST_F(CsvFeaturesTest, EachTypeIsStoredUnderItsColumnAndParsesWithExampleProto) {
  StatusOr<ConvertResult> r = Convert(Options(kCsv));
  ASSERT_TRUE(r.ok()) << r.status();
  std::map<std::string, tensorflow::Example> recs = Records();
  ASSERT_EQ(recs.size(), 3u);
  const auto& f0 = recs["img/0.png"].features().feature();
  ASSERT_EQ(f0.at("tags").int64_list().value_size(), 3);
  EXPECT_EQ(f0.at("tags").int64_list().value(2), 7);
  EXPECT_EQ(f0.at("score").float_list().value(0), 0.5f);
  EXPECT_EQ(f0.at("caption").bytes_list().value(0), "a bag, brown");
  ASSERT_EQ(f0.at("box").float_list().value_size(), 2);
  EXPECT_EQ(f0.at("box").float_list().value(1), -1000.0f);
  EXPECT_EQ(f0.at("n").int64_list().value(0), 3);
  // Empty fields: an empty list, an empty bytes value.
  const auto& f1 = recs["img/1.png"].features().feature();
  ASSERT_TRUE(f1.count("tags"));
  EXPECT_TRUE(f1.at("tags").has_int64_list());
  EXPECT_EQ(f1.at("tags").int64_list().value_size(), 0);
  EXPECT_EQ(f1.at("box").float_list().value_size(), 0);
  EXPECT_EQ(f1.at("caption").bytes_list().value(0), "");
  EXPECT_EQ(f1.at("n").int64_list().value(0), -4);
  EXPECT_EQ(recs["img/2.png"].features().feature().at("tags").int64_list().value(0), INT64_MAX);
  // The bad rows are rejects naming the CSV, the line and the column.
  std::map<std::string, std::string> rejects;
  for (const Reject& j : r->manifest.rejects()) rejects[j.path()] = j.reason();
  EXPECT_EQ(rejects["img/3.png"], dir_ + "/labels.csv:5: column 'score': 'nan' is not a finite float");
  EXPECT_EQ(rejects["img/4.png"], dir_ + "/labels.csv:6: column 'tags': 'x' is not an int (64-bit)");
  // The plan records them; the schema lists them with their kinds.
  ASSERT_EQ(r->manifest.options().features_size(), 5);
  EXPECT_EQ(r->manifest.options().features(0), "tags:int_list");
  std::map<std::string, std::string> kinds;
  for (const FeatureSpec& s : r->manifest.schema()) kinds[s.key()] = s.kind();
  EXPECT_EQ(kinds["tags"], "int64");
  EXPECT_EQ(kinds["score"], "float");
  EXPECT_EQ(kinds["caption"], "bytes");
}

TEST_F(CsvFeaturesTest, BadScalarsAreRejectsWithTheReason) {
  const std::string csv =
      "path,label,tags,score,caption,box,n\n"
      "img/0.png,0,1,,a,1,3\n"                      // empty float
      "img/1.png,0,1,1,a,1,1 2\n"                   // two ints for an int
      "img/2.png,0,1,1,a,1,99999999999999999999\n"  // past int64
      "img/3.png,0,1,1e39,a,1,1\n"                  // past float
      "img/4.png,0,1,1,a,0x10,1\n";                 // not decimal
  StatusOr<Listing> l = ReadSourceCsv(dir_ + "/labels.csv", Options(csv).list);
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_EQ(l->rejects.size(), 5u);
  const std::string at = dir_ + "/labels.csv:";
  EXPECT_EQ(l->rejects[0].reason, at + "2: column 'score': empty (a float is required)");
  EXPECT_EQ(l->rejects[1].reason,
            at + "3: column 'n': '1 2' is not an int (64-bit) (one value; --feature n:int_list reads several)");
  EXPECT_EQ(l->rejects[2].reason, at + "4: column 'n': '99999999999999999999' is not an int (64-bit)");
  EXPECT_EQ(l->rejects[3].reason, at + "5: column 'score': '1e39' is not a finite float");
  EXPECT_EQ(l->rejects[4].reason, at + "6: column 'box': '0x10' is not a finite float");
}

TEST_F(CsvFeaturesTest, TheFlagAndTheHeaderAreChecked) {
  for (const auto& [spec, message] : std::map<std::string, std::string>{
           {"tags", "give COLUMN:TYPE"},
           {"tags:list", "unknown type 'list'"},
           {":int", "the column name is empty"},
           {"image/class/label:int", "keys under image/ are the converter's own"},
       }) {
    StatusOr<CsvFeature> f = ParseCsvFeature(spec);
    ASSERT_FALSE(f.ok()) << spec;
    EXPECT_TRUE(Contains(f.status().message(), message)) << f.status();
  }
  StatusOr<CsvFeature> colon = ParseCsvFeature("a:b:float_list");
  ASSERT_TRUE(colon.ok());
  EXPECT_EQ(colon->column, "a:b");
  EXPECT_EQ(CsvFeatureText(*colon), "a:b:float_list");

  ConvertOptions o = Options(kCsv);
  o.list.features.push_back(*ParseCsvFeature("missing:int"));
  StatusOr<ConvertResult> r = Convert(o);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "labels.csv:1: no 'missing' column (--feature missing:int)"))
      << r.status();
  o = Options(kCsv);
  o.list.features.push_back(*ParseCsvFeature("label:int"));
  r = Convert(o);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "'label' is the path, label, mask or split column")) << r.status();
  o = Options(kCsv);
  o.list.features.push_back(*ParseCsvFeature("n:float"));
  r = Convert(o);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "column 'n' named twice")) << r.status();
  o = Options(kCsv);
  o.list.features.pop_back();  // the header's 'n' is then no known column
  r = Convert(o);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "unknown column 'n'")) << r.status();
  EXPECT_TRUE(Contains(r.status().message(), "--feature n:TYPE stores it")) << r.status();
  o = Options(kCsv);
  o.input = dir_ + "/img";  // a folder has no columns
  r = Convert(o);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "--feature tags:int_list stores a CSV manifest's column")) << r.status();
}

// A changed value in the CSV redoes the shard that holds it (plan_id), and
// only that one.
TEST_F(CsvFeaturesTest, AChangedValueRedoesItsShard) {
  const std::string csv =
      "path,label,tags,score,caption,box,n\n"
      "img/0.png,0,1,0.5,a,1,3\n"
      "img/1.png,1,2,0.5,b,1,3\n"
      "img/2.png,0,3,0.5,c,1,3\n"
      "img/3.png,1,4,0.5,d,1,3\n";
  ConvertOptions o = Options(csv);
  o.plan.shuffle = false;
  StatusOr<ConvertResult> first = Convert(o);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->shards_written, 2u);
  std::string changed = csv;
  changed.replace(changed.find(",c,"), 3, ",C,");
  o = Options(changed);
  o.plan.shuffle = false;
  StatusOr<ConvertResult> second = Convert(o);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->shards_written, 1u);
  EXPECT_EQ(second->shards_reused, 1u);
  EXPECT_EQ(Records()["img/2.png"].features().feature().at("caption").bytes_list().value(0), "C");
}

}  // namespace
}  // namespace libshard::convert

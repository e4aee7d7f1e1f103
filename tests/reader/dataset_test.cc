#include "libshard/reader/dataset.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "reader_fixtures.h"
#include "testutil.h"

namespace libshard::reader {
namespace {

TEST(DatasetTest, KeyRolesNameEveryKeyOnce) {
  KeyMap keys;
  std::set<std::string> names;
  for (const KeyRole& r : KeyRoles()) {
    EXPECT_TRUE(names.insert(r.name).second) << r.name;
    std::string* field = KeyForRole(&keys, r.name);
    ASSERT_NE(field, nullptr) << r.name;
    *field = std::string("custom/") + r.name;
  }
  EXPECT_EQ(names.size(), 7u);
  EXPECT_EQ(keys.label, "custom/label");
  EXPECT_EQ(keys.mask_format, "custom/mask_format");
  EXPECT_EQ(KeyForRole(&keys, "labels"), nullptr);
  EXPECT_EQ(KeyForRole(&keys, ""), nullptr);
}

TEST(DatasetTest, OpensListGlobAndFolderInOrder) {
  const std::string dir = testing::MakeTempDir();
  auto a = testing::WritePlainShard(dir + "/a-00000.tfrecord", 3);
  auto b = testing::WritePlainShard(dir + "/a-00001.tfrecord", 0);
  auto c = testing::WritePlainShard(dir + "/a-00002.tfrecord", 4);
  for (const std::vector<std::string>& src :
       {std::vector<std::string>{dir + "/a-00000.tfrecord", dir + "/a-00001.tfrecord", dir + "/a-00002.tfrecord"},
        std::vector<std::string>{dir + "/a-*.tfrecord"}, std::vector<std::string>{dir}}) {
    auto ds = Dataset::Open(src);
    ASSERT_TRUE(ds.ok()) << ds.status();
    ASSERT_EQ((*ds)->size(), 7u);
    ASSERT_EQ((*ds)->num_shards(), 3u);
    RecordBuffer buf;
    std::string_view v;
    for (uint64_t i = 0; i < 7; ++i) {
      ASSERT_TRUE((*ds)->ReadRecord(i, &buf, &v).ok());
      EXPECT_EQ(v, i < 3 ? a[i] : c[i - 3]);
    }
    EXPECT_EQ((*ds)->Locate(3).shard, 2u);
    EXPECT_EQ((*ds)->ReadRecord(7, &buf, &v).code(), StatusCode::kOutOfRange);
  }
}

// The Python module maps NotFound to FileNotFoundError (docs/reader.md).
TEST(DatasetTest, AMissingSourceIsNotFoundNamingIt) {
  const std::string dir = testing::MakeTempDir();
  testing::WritePlainShard(dir + "/a-00000.tfrecord", 1);
  std::filesystem::create_directories(dir + "/empty");
  const std::pair<std::string, std::string> cases[] = {
      {dir + "/missing.tfrecord", "NOT_FOUND: " + dir + "/missing.tfrecord: no such file or folder"},
      {dir + "/missing", "NOT_FOUND: " + dir + "/missing: no such file or folder"},
      {dir + "/nothing-*.tfrecord", "NOT_FOUND: " + dir + "/nothing-*.tfrecord: no file matches"},
  };
  for (const auto& [src, want] : cases) {
    EXPECT_EQ(Dataset::Open({dir + "/a-00000.tfrecord", src}).status().ToString(), want);
  }
  auto manifest = Dataset::Open({dir + "/missing/manifest.json"});
  EXPECT_EQ(manifest.status().code(), StatusCode::kNotFound) << manifest.status();
  EXPECT_NE(manifest.status().message().find(dir + "/missing/manifest.json"), std::string::npos);
  // There, but holding nothing to read: a bad argument, not a missing one.
  EXPECT_EQ(Dataset::Open({dir + "/empty"}).status().ToString(),
            "INVALID_ARGUMENT: " + dir + "/empty: no TFRecord files in this folder");
}

// A manifest as protobuf's JSON printer writes it (64-bit counts as strings).
std::string Manifest(const std::string& format, const std::string& records_b) {
  return R"({"format": ")" + format +
         R"(", "complete": true, "labels": [{"label": "0", "name": "cat"}, {"label": "1", "name": "dog"}],
  "splits": [
   {"name": "train", "records": "5", "shards": [
     {"file": "train-00000-of-00002.tfrecord", "records": "2"},
     {"file": "sub/train-00001-of-00002.tfrecord", "records": ")" +
         records_b + R"("}]},
   {"name": "val", "records": "1", "shards": [{"file": "val-00000-of-00001.tfrecord", "records": "1"}]}],
  "some_future_field": 1})";
}

TEST(DatasetTest, OpensTheConvertersManifest) {
  const std::string dir = testing::MakeTempDir();
  std::filesystem::create_directories(dir + "/sub");
  testing::WritePlainShard(dir + "/train-00000-of-00002.tfrecord", 2);
  testing::WritePlainShard(dir + "/sub/train-00001-of-00002.tfrecord", 3);
  testing::WritePlainShard(dir + "/val-00000-of-00001.tfrecord", 1);
  testing::WriteFileOrDie(dir + "/manifest.json", Manifest("libshard.manifest/1", "3"));
  DatasetOptions o;
  o.split = "train";
  auto ds = Dataset::Open({dir + "/manifest.json"}, o);
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_EQ((*ds)->size(), 5u);
  ASSERT_EQ((*ds)->labels().size(), 2u);
  EXPECT_EQ((*ds)->labels()[1].name, "dog");
  o.split = "*";
  EXPECT_EQ((*Dataset::Open({dir + "/manifest.json"}, o))->size(), 6u);
  o.split = "";  // two splits: which one?
  auto none = Dataset::Open({dir + "/manifest.json"}, o);
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(none.status().message(),
            dir + "/manifest.json: the manifest has splits train, val; pick one (split=NAME, or \"*\" for all)");
  o.split = "test";
  auto unknown = Dataset::Open({dir + "/manifest.json"}, o);
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message(), dir + "/manifest.json: no split named \"test\" (the manifest has train, val)");
  // The converter's output folder means its manifest, split and labels included.
  o.split = "val";
  auto folder = Dataset::Open({dir}, o);
  ASSERT_TRUE(folder.ok()) << folder.status();
  EXPECT_EQ((*folder)->size(), 1u);
  EXPECT_EQ((*folder)->shard_path(0), dir + "/val-00000-of-00001.tfrecord");
  EXPECT_EQ((*folder)->labels().size(), 2u);
  // A split means nothing to plain shards: refused rather than ignored.
  auto plain = Dataset::Open({dir + "/val-00000-of-00001.tfrecord"}, o);
  EXPECT_EQ(plain.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(plain.status().message(),
            "split \"val\" needs a manifest.json (or a folder holding one); the sources are plain shards");

  o.split = "train";
  testing::WriteFileOrDie(dir + "/manifest.json", Manifest("libshard.manifest/2", "3"));
  auto bad = Dataset::Open({dir + "/manifest.json"}, o);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("libshard.manifest/2"), std::string::npos);
  // A shard with another record count than its entry's: the open reads no
  // record table (issue 44), so the first read of that shard says it, and
  // every read after it; the other shard reads.
  testing::WriteFileOrDie(dir + "/manifest.json", Manifest("libshard.manifest/1", "4"));
  bad = Dataset::Open({dir + "/manifest.json"}, o);
  ASSERT_TRUE(bad.ok()) << bad.status();
  EXPECT_EQ((*bad)->size(), 6u);
  RecordBuffer buf;
  std::string_view rec;
  EXPECT_TRUE((*bad)->ReadRecord(0, &buf, &rec).ok());
  for (uint64_t sample : {2, 5, 2}) {
    Status s = (*bad)->ReadRecord(sample, &buf, &rec);
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s;
    EXPECT_EQ(s.message(), dir + "/sub/train-00001-of-00002.tfrecord: 3 records, the manifest says 4");
  }
  // A shard of another size than its entry's (when the entry has one) is
  // refused at the open.
  std::string sized = Manifest("libshard.manifest/1", "3");
  const std::string entry = R"("file": "sub/train-00001-of-00002.tfrecord", )";
  sized.insert(sized.find(entry) + entry.size(), R"("bytes": "7", )");
  testing::WriteFileOrDie(dir + "/manifest.json", sized);
  bad = Dataset::Open({dir + "/manifest.json"}, o);
  EXPECT_EQ(bad.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(bad.status().message(),
            dir + "/sub/train-00001-of-00002.tfrecord: " +
                std::to_string(std::filesystem::file_size(dir + "/sub/train-00001-of-00002.tfrecord")) +
                " bytes, the manifest says 7");
  testing::WriteFileOrDie(dir + "/manifest.json", "{not json");
  EXPECT_EQ(Dataset::Open({dir + "/manifest.json"}, o).status().code(), StatusCode::kInvalidArgument);
}

TEST(DatasetTest, HasFeatureComesFromTheManifestsSchema) {
  const std::string dir = testing::MakeTempDir();
  testing::WritePlainShard(dir + "/train-00000-of-00001.tfrecord", 2);
  testing::WriteFileOrDie(dir + "/manifest.json", R"({"format": "libshard.manifest/1", "complete": true,
    "schema": [{"key": "image/encoded", "kind": "bytes", "required": true},
               {"key": "image/segmentation/class/encoded", "kind": "bytes", "required": false},
               {"key": "tags", "kind": "int64", "required": true, "list": true}],
    "splits": [{"name": "train", "records": "2", "shards": [
      {"file": "train-00000-of-00001.tfrecord", "records": "2"}]}]})");
  auto ds = Dataset::Open({dir + "/manifest.json"});
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_EQ((*ds)->HasFeature("image/encoded"), std::optional<bool>(true));
  EXPECT_EQ((*ds)->HasFeature("image/segmentation/class/encoded"), std::optional<bool>(false));
  EXPECT_TRUE((*ds)->ListFeature("tags"));  // the schema says so (extras= gives a list in every row)
  EXPECT_FALSE((*ds)->ListFeature("image/encoded"));
  EXPECT_FALSE((*ds)->ListFeature("nowhere"));
  auto files = Dataset::Open({dir + "/train-00000-of-00001.tfrecord"});
  ASSERT_TRUE(files.ok());
  EXPECT_EQ((*files)->HasFeature("image/encoded"), std::nullopt);  // no manifest: unknown
}

// issue 21: a source named twice would be read twice; refused by file identity.
TEST(DatasetTest, AFileReachedTwiceIsRefusedNamingBothSources) {
  const std::string dir = testing::MakeTempDir();
  const std::string other = testing::MakeTempDir();
  testing::WritePlainShard(dir + "/a.tfrecord", 2);
  testing::WritePlainShard(dir + "/b.tfrecord", 3);
  std::filesystem::create_symlink(dir + "/a.tfrecord", other + "/link.tfrecord");
  const std::vector<std::vector<std::string>> cases = {
      {dir, dir},
      {dir + "/a.tfrecord", dir},
      {dir + "/*.tfrecord", dir},
      {other + "/link.tfrecord", dir + "/a.tfrecord"},
      {dir + "/b.tfrecord", dir + "/./b.tfrecord"},
  };
  for (const auto& src : cases) {
    auto ds = Dataset::Open(src);
    ASSERT_EQ(ds.status().code(), StatusCode::kInvalidArgument) << src[0] << " " << src[1];
    const std::string msg = ds.status().message();
    EXPECT_NE(msg.find(src[0]), std::string::npos) << msg;
    EXPECT_NE(msg.find(src[1]), std::string::npos) << msg;
    EXPECT_NE(msg.find("are the same file"), std::string::npos) << msg;
  }
  EXPECT_EQ(Dataset::Open({dir + "/b.tfrecord", dir + "/./b.tfrecord"}).status().message(),
            dir + "/./b.tfrecord and " + dir +
                "/b.tfrecord are the same file: each shard may be named once (drop one of the sources)");
  // Different files are fine, and so is the symbolic link alone.
  EXPECT_TRUE(Dataset::Open({dir + "/a.tfrecord", dir + "/b.tfrecord"}).ok());
  auto link = Dataset::Open({other + "/link.tfrecord"});
  ASSERT_TRUE(link.ok()) << link.status();
  EXPECT_EQ((*link)->size(), 2u);

  // A manifest and one of its shards.
  const std::string conv = testing::MakeTempDir();
  testing::WritePlainShard(conv + "/train-00000-of-00001.tfrecord", 2);
  testing::WriteFileOrDie(conv + "/manifest.json", R"({"format": "libshard.manifest/1", "complete": true,
    "splits": [{"name": "train", "records": "2", "shards": [
      {"file": "train-00000-of-00001.tfrecord", "records": "2"}]}]})");
  auto both = Dataset::Open({conv, conv + "/train-00000-of-00001.tfrecord"});
  ASSERT_EQ(both.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(both.status().message(),
            conv + "/train-00000-of-00001.tfrecord and " + conv + " (" + conv +
                "/train-00000-of-00001.tfrecord) are the same file: each shard may be named once (drop one of the "
                "sources)");
  EXPECT_EQ(Dataset::Open({conv + "/manifest.json", conv}).status().code(), StatusCode::kInvalidArgument);
}

// issue 21: an unfinished conversion (or task outputs not merged) read as
// if it were whole mixes splits and misses shards.
TEST(DatasetTest, AnUnfinishedConversionIsRefused) {
  const std::string dir = testing::MakeTempDir();
  testing::WritePlainShard(dir + "/x-train-00000-of-00003.tfrecord", 2);
  testing::WritePlainShard(dir + "/x-train-00002-of-00003.tfrecord", 2);
  testing::WritePlainShard(dir + "/x-val-00000-of-00001.tfrecord", 1);
  for (const std::string& src : {dir, dir + "/*.tfrecord"}) {
    auto ds = Dataset::Open({src});
    ASSERT_EQ(ds.status().code(), StatusCode::kInvalidArgument) << src;
    const std::string msg = ds.status().message();
    EXPECT_EQ(msg.rfind(src + ": " + dir +
                            "/x-train-*-of-00003.tfrecord: 2 of the 3 shards of this set are here; "
                            "1 missing (00001)",
                        0),
              0u)
        << msg;
    EXPECT_NE(msg.find("run `shard verify " + src + "`"), std::string::npos) << msg;
    EXPECT_NE(msg.find("shard merge"), std::string::npos) << msg;
  }
  // Named one by one, shards are read as they are.
  auto files = Dataset::Open({dir + "/x-train-00000-of-00003.tfrecord", dir + "/x-train-00002-of-00003.tfrecord"});
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ((*files)->size(), 4u);

  // The converter's state without a manifest: killed before the manifest
  // (the set may even be whole), or --num-tasks outputs not merged.
  const std::string killed = testing::MakeTempDir();
  testing::WritePlainShard(killed + "/x-train-00000-of-00001.tfrecord", 2);
  std::filesystem::create_directories(killed + "/.libshard");
  testing::WriteFileOrDie(killed + "/.libshard/x-train-00000-of-00001.tfrecord.json", "{}");
  auto k = Dataset::Open({killed});
  ASSERT_EQ(k.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(k.status().message(), killed +
                                      ": a `shard convert` that did not finish (no manifest.json, the converter's "
                                      ".libshard/ state is there); rerun the same command to finish it (`shard "
                                      "verify " +
                                      killed + "` says what is there)");
  testing::WriteFileOrDie(killed + "/.libshard/manifest.task-00000-of-00002.json", "{}");
  k = Dataset::Open({killed});
  ASSERT_EQ(k.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(k.status().message(), killed +
                                      ": task outputs of `shard convert --num-tasks` not merged yet (no "
                                      "manifest.json, partial manifests in .libshard/); run `shard merge " +
                                      killed + "` first");
  // A task's partial manifest given as the source.
  testing::WriteFileOrDie(killed + "/.libshard/manifest.task-00000-of-00002.json",
                          R"({"format": "libshard.manifest/1", "complete": false, "splits": [{"name": "train",
                              "records": "2", "shards": [{"file": "x-train-00000-of-00001.tfrecord", "records": "2"}]}]})");
  auto task = Dataset::Open({killed + "/.libshard/manifest.task-00000-of-00002.json"});
  ASSERT_EQ(task.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(task.status().message().find("not complete"), std::string::npos) << task.status();
  EXPECT_NE(task.status().message().find("shard merge"), std::string::npos) << task.status();
}

// issue 21: keys={"label": "image/class/lable"} made every label -1.
TEST(DatasetTest, AKeyTheSchemaLacksIsRefusedNamingTheKeysItHas) {
  const std::string dir = testing::MakeTempDir();
  testing::WritePlainShard(dir + "/train-00000-of-00001.tfrecord", 2);
  testing::WriteFileOrDie(dir + "/manifest.json", R"({"format": "libshard.manifest/1", "complete": true,
    "schema": [{"key": "image/encoded", "kind": "bytes", "required": true},
               {"key": "image/class/label", "kind": "int64", "required": false}],
    "splits": [{"name": "train", "records": "2", "shards": [
      {"file": "train-00000-of-00001.tfrecord", "records": "2"}]}]})");
  DatasetOptions o;
  o.keys.label = "image/class/lable";
  auto ds = Dataset::Open({dir}, o);
  ASSERT_EQ(ds.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ds.status().message(),
            "keys: the label key \"image/class/lable\" is not in the manifest's schema (its keys: image/class/label, "
            "image/encoded)");
  o.keys.label = "image/class/label";
  o.keys.image = "image_raw";
  EXPECT_NE(Dataset::Open({dir}, o).status().message().find("the image key \"image_raw\""), std::string::npos);
  // Keys the schema lists, and plain shards (no schema to check against), are fine.
  o.keys.image = "image/encoded";
  EXPECT_TRUE(Dataset::Open({dir}, o).ok());
  o.keys.label = "label";
  EXPECT_TRUE(Dataset::Open({dir + "/train-00000-of-00001.tfrecord"}, o).ok());
}

// A manifest whose splits carry the statistics the converter writes.
std::string ShapeManifest(const std::string& options, const std::string& stats) {
  return R"({"format": "libshard.manifest/1", "complete": true, "options": )" + options + R"(,
    "splits": [{"name": "train", "records": "4", "stats": )" +
         stats + R"(, "shards": [
      {"file": "train-00000-of-00001.tfrecord", "records": "4"}]}]})";
}

// issue 21: with no size given, the loader takes the stored one only when
// the manifest says every sample has it.
TEST(DatasetTest, StoredShapeComesFromTheManifest) {
  const std::string dir = testing::MakeTempDir();
  testing::WritePlainShard(dir + "/train-00000-of-00001.tfrecord", 4);
  const std::string rgb = R"([{"count": "3136"}, {"count": "3136"}, {"count": "3136"}])";
  const std::string gray = R"([{"count": "3136"}])";
  const std::string mixed = R"([{"count": "3136"}, {"count": "784"}, {"count": "784"}])";
  struct Case {
    std::string options, stats;
    int width, height, channels;
    std::string sizes;
  };
  const Case cases[] = {
      // Kept at the source size: the source sizes say it.
      {R"({"resize_mode": "none"})",
       R"({"channels": )" + gray + R"(, "source_sizes": [{"name": "28x28", "count": "4"}]})", 28, 28, 1, "28x28"},
      {R"({"resize_mode": "none"})",
       R"({"channels": )" + mixed +
           R"(, "source_sizes": [{"name": "28x28", "count": "3"}, {"name": "32x24", "count": "1"}]})",
       0, 0, 0, "28x28, 32x24"},
      // A fixed-size resize mode: its size, whatever the sources were.
      {R"({"resize_mode": "center-crop", "width": 224, "height": 160})",
       R"({"channels": )" + rgb + R"(, "source_sizes": [{"name": "500x300", "count": "4"}]})", 224, 160, 3, "224x160"},
      // keep-ratio: through the same geometry as the converter.
      {R"({"resize_mode": "keep-ratio", "width": 100, "height": 100})",
       R"({"channels": )" + rgb + R"(, "source_sizes": [{"name": "400x200", "count": "4"}]})", 100, 50, 3, "100x50"},
      // An explicit crop.
      {R"({"resize_mode": "none", "crop": "1,2,10,12"})",
       R"({"channels": )" + rgb + R"(, "source_sizes": [{"name": "40x40", "count": "4"}]})", 10, 12, 3, "10x12"},
      // EXIF-rotated JPEGs may be stored turned: not one size.
      {R"({"resize_mode": "none", "apply_orientation": true})",
       R"({"channels": )" + rgb +
           R"(, "source_sizes": [{"name": "40x30", "count": "4"}], "source_formats": [{"name": "jpeg", "count": "4"}]})",
       0, 0, 3, "40x30, 30x40"},
      // No sizes recorded (an older manifest).
      {R"({"resize_mode": "none"})", R"({"channels": )" + rgb + "}", 0, 0, 3, ""},
  };
  for (const Case& c : cases) {
    testing::WriteFileOrDie(dir + "/manifest.json", ShapeManifest(c.options, c.stats));
    auto ds = Dataset::Open({dir});
    ASSERT_TRUE(ds.ok()) << ds.status();
    const StoredShape& s = (*ds)->stored_shape();
    EXPECT_EQ(s.width, c.width) << c.options << c.stats;
    EXPECT_EQ(s.height, c.height) << c.options << c.stats;
    EXPECT_EQ(s.channels, c.channels) << c.options << c.stats;
    EXPECT_EQ(s.sizes, c.sizes) << c.options << c.stats;
    EXPECT_EQ(s.unknown, c.sizes.empty() ? dir + "/manifest.json records no image sizes" : "") << c.options << c.stats;
  }
  auto plain = Dataset::Open({dir + "/train-00000-of-00001.tfrecord"});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)->stored_shape().width, 0);
  EXPECT_EQ((*plain)->stored_shape().channels, 0);
  EXPECT_EQ((*plain)->stored_shape().sizes, "");
  EXPECT_EQ((*plain)->stored_shape().unknown,
            dir + "/train-00000-of-00001.tfrecord has no manifest.json to record them");
}

}  // namespace
}  // namespace libshard::reader

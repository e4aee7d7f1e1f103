// Sample packs (convert/sample_pack.h): a pack of a folder's samples, in 1,
// 3 or 8 partitions written in any order, converts to the folder's shards
// and indices byte for byte (single run and tasks + merge); a retried
// partition writes the same bytes; bad keys, splits and labels are refused
// by Add with nothing committed; a missing, foreign, truncated or damaged
// part, a key in two partitions and mixed labels are named.
#include "libshard/convert/sample_pack.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "fixtures.h"
#include "libshard/convert/converter.h"
#include "libshard/convert/merge.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/example/example_builder.h"
#include "libshard/record/format.h"
#include "libshard/record/record_writer.h"
#include "testutil.h"

namespace libshard::convert {
namespace {

namespace fs = std::filesystem;
using testing::Contains;
using testing::MakeTempDir;
using testing::PngBytes;
using testing::ReadFileOrDie;
using testing::WriteTreeFile;

class SamplePackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = MakeTempDir();
    testing::WriteSplitClassTree(base_ + "/in");
  }
  void TearDown() override { fs::remove_all(base_); }

  ConvertOptions Options(const std::string& input, const std::string& out) const {
    ConvertOptions o;
    o.input = input;
    o.output = out;
    o.plan.records_per_shard = 2;
    o.plan.seed = 7;
    o.sync = false;
    o.threads = 2;
    return o;
  }
  // The folder's samples (its own listing: keys, splits, classes), sample i
  // in partition i mod `parts`, the partitions written last to first.
  std::string PackOfFolder(uint32_t parts, const std::string& name = "in") const {
    const std::string pack = base_ + "/pack" + std::to_string(parts);
    StatusOr<Listing> l = ListFolder(base_ + "/in", {});
    EXPECT_TRUE(l.ok()) << l.status();
    for (uint32_t p = parts; p-- > 0;) {
      StatusOr<std::unique_ptr<SamplePartWriter>> w = SamplePartWriter::Create(pack, name, p, parts, false);
      EXPECT_TRUE(w.ok()) << w.status();
      for (size_t i = p; i < l->samples.size(); i += parts) {
        const SourceSample& s = l->samples[i];
        PackedSample ps{s.path, s.split, -1, std::string(ClassName(*l, s.label))};
        EXPECT_TRUE((*w)->Add(ps, ReadFileOrDie(base_ + "/in/" + s.path)).ok());
      }
      EXPECT_TRUE((*w)->Commit().ok());
    }
    return pack;
  }
  // Shards and indices.
  std::map<std::string, std::string> Shards(const std::string& dir) const {
    std::map<std::string, std::string> out;
    for (const auto& [k, v] : testing::SnapshotDir(dir)) {
      if (k.find(".tfrecord") != std::string::npos && k[0] != '.') out[k] = v;
    }
    return out;
  }
  std::string base_;
};

TEST_F(SamplePackTest, APackConvertsToTheFolderShardsInAnyPartitionCount) {
  ASSERT_TRUE(Convert(Options(base_ + "/in", base_ + "/folder")).ok());
  const auto want = Shards(base_ + "/folder");
  ASSERT_GT(want.size(), 10u);
  StatusOr<Manifest> folder_manifest = manifest::ReadManifest(base_ + "/folder/manifest.json");
  ASSERT_TRUE(folder_manifest.ok());
  for (uint32_t parts : {1u, 3u, 8u}) {
    SCOPED_TRACE("partitions " + std::to_string(parts));
    const std::string pack = PackOfFolder(parts);
    const std::string out = base_ + "/out" + std::to_string(parts);
    StatusOr<ConvertResult> r = Convert(Options(pack, out));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(testing::CountDifferences(want, Shards(out)), 0);
    // The manifest says the same apart from where the input was (and the
    // plan ids, which hash it).
    EXPECT_EQ(r->manifest.stats().converted(), folder_manifest->stats().converted());
    EXPECT_EQ(r->manifest.options().prefix(), "in");
    EXPECT_EQ(ReadFileOrDie(out + "/rejects.tsv"), ReadFileOrDie(base_ + "/folder/rejects.tsv"));
    ASSERT_EQ(r->manifest.labels_size(), 3);
    EXPECT_EQ(r->manifest.labels(2).name(), "c");
  }
  // Tasks of a pack plus the merge: the same shards again.
  const std::string pack = base_ + "/pack3";
  const std::string tasks = base_ + "/tasks";
  for (uint32_t i = 0; i < 3; ++i) {
    ConvertOptions o = Options(pack, tasks);
    o.num_tasks = 3;
    o.task_index = i;
    ASSERT_TRUE(Convert(o).ok());
  }
  StatusOr<MergeResult> m = MergeTasks(tasks);
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->problems.empty()) << m->problems[0];
  EXPECT_EQ(testing::CountDifferences(want, Shards(tasks)), 0);
}

TEST_F(SamplePackTest, MasksInAPackGiveTheShardsOfAMaskFolder) {
  for (int k = 0; k < 9; ++k) {
    const int w = 12 + k, h = 9 + k % 4;
    WriteTreeFile(base_ + "/seg", "img" + std::to_string(k) + ".png", PngBytes(w, h, 3, k));
    WriteTreeFile(base_ + "/segmasks", "img" + std::to_string(k) + ".png", PngBytes(w, h, 1, 100 + k));
  }
  ConvertOptions local = Options(base_ + "/seg", base_ + "/local");
  local.list.masks = base_ + "/segmasks";
  StatusOr<ConvertResult> want = Convert(local);
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_EQ(want->rejected, 0u);
  const std::string pack = base_ + "/segpack";
  for (uint32_t p = 0; p < 2; ++p) {
    auto w = SamplePartWriter::Create(pack, "seg", p, 2, false);
    ASSERT_TRUE(w.ok());
    for (int k = static_cast<int>(p); k < 9; k += 2) {
      const std::string name = "img" + std::to_string(k) + ".png";
      ASSERT_TRUE((*w)->Add({name, "", -1, ""}, ReadFileOrDie(base_ + "/seg/" + name),
                            ReadFileOrDie(base_ + "/segmasks/" + name))
                      .ok());
    }
    ASSERT_TRUE((*w)->Commit().ok());
  }
  StatusOr<ConvertResult> got = Convert(Options(pack, base_ + "/frompack"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(testing::CountDifferences(Shards(base_ + "/local"), Shards(base_ + "/frompack")), 0);
  EXPECT_EQ(got->manifest.stats().mask_pixels_size(), want->manifest.stats().mask_pixels_size());
  // A flipped byte in a mask's record: that sample is a reject naming its mask.
  const std::string data = pack + "/part-00000-of-00002.tfrecord";
  std::string bytes = ReadFileOrDie(data);
  const size_t image0 = ReadFileOrDie(base_ + "/seg/img0.png").size();
  bytes[record::kFramingOverhead + image0 + 20] ^= 1;  // inside img0's mask record
  testing::WriteFileOrDie(data, bytes);
  got = Convert(Options(pack, base_ + "/damaged"));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->rejected, 1u);
  EXPECT_TRUE(Contains(ReadFileOrDie(base_ + "/damaged/rejects.tsv"), "the mask of sample img0.png"))
      << ReadFileOrDie(base_ + "/damaged/rejects.tsv");
}

TEST_F(SamplePackTest, ARetriedPartitionWritesTheSameBytesAndAnAbandonedOneNothing) {
  const std::string pack = PackOfFolder(3);
  const std::string part1 = pack + "/part-00001-of-00003.samples.tfrecord";
  // One small Example a sample (key, split, class, offset, size): 8 samples here.
  EXPECT_LT(fs::file_size(part1), 8u * 120) << "the .samples records grow with the partition";
  const std::string before = ReadFileOrDie(part1) + ReadFileOrDie(pack + "/part-00001-of-00003.tfrecord");
  {
    // A second attempt that dies half-way: the committed pair stays as it was.
    auto w = SamplePartWriter::Create(pack, "in", 1, 3, false);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Add({"train/a/x.jpg", "", -1, "a"}, "bytes").ok());
  }
  EXPECT_EQ(ReadFileOrDie(part1) + ReadFileOrDie(pack + "/part-00001-of-00003.tfrecord"), before);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(pack)) files += e.is_regular_file();
  EXPECT_EQ(files, 7u);  // marker + 3 pairs: no temporary left
  // What a killed attempt leaves (its temporaries) goes when the partition
  // is written again; another partition's stay.
  testing::WriteFileOrDie(pack + "/.part-00001-of-00003.tfrecord.libshard-partial-999-0", "half");
  testing::WriteFileOrDie(pack + "/.part-00002-of-00003.tfrecord.libshard-partial-998-0", "half");
  ASSERT_TRUE(SamplePartWriter::Create(pack, "in", 1, 3, false).ok());
  EXPECT_FALSE(fs::exists(pack + "/.part-00001-of-00003.tfrecord.libshard-partial-999-0"));
  EXPECT_TRUE(fs::exists(pack + "/.part-00002-of-00003.tfrecord.libshard-partial-998-0"));
  // A full retry: the same bytes.
  fs::remove_all(base_ + "/pack3");
  PackOfFolder(3);
  EXPECT_EQ(ReadFileOrDie(part1) + ReadFileOrDie(pack + "/part-00001-of-00003.tfrecord"), before);
}

TEST_F(SamplePackTest, BadSamplesAreRefusedByAddNamingTheKey) {
  const std::string pack = base_ + "/bad";
  auto w = SamplePartWriter::Create(pack, "bad", 0, 1, false);
  ASSERT_TRUE(w.ok());
  for (const char* key : {"../up.jpg", "/abs.jpg", "a//b.jpg", "", "a/./b.jpg", "back\\slash.jpg"}) {
    Status st = (*w)->Add({key, "", -1, ""}, "x");
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << key;
    EXPECT_TRUE(Contains(st.message(), "sample 0")) << st;
  }
  EXPECT_TRUE(Contains((*w)->Add({"ok.jpg", "tr/ain", -1, ""}, "x").message(), "split name"));
  EXPECT_TRUE(Contains((*w)->Add({"ok.jpg", "", 3, "cat"}, "x").message(), "a label and a class name"));
  EXPECT_TRUE(Contains((*w)->Add({"ok.jpg", "", -5, ""}, "x").message(), "negative label"));
  ASSERT_TRUE((*w)->Add({"ok.jpg", "", 3, ""}, "x").ok());
  EXPECT_TRUE(Contains((*w)->Add({"ok2.jpg", "", -1, "cat"}, "x").message(), "mix integers and class names"));
  EXPECT_EQ(SamplePartWriter::Create(pack, "other", 1, 2).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SamplePartWriter::Create(pack, "bad", 2, 2).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SamplePartWriter::Create(pack, "a/b", 0, 1).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(SamplePackTest, DamagedOrIncompletePacksAreNamed) {
  const std::string pack = PackOfFolder(3);
  // A missing partition.
  const std::string samples1 = pack + "/part-00001-of-00003.samples.tfrecord";
  const std::string saved = ReadFileOrDie(samples1);
  fs::remove(samples1);
  StatusOr<Listing> l = ListSamplePack(pack, {});
  ASSERT_FALSE(l.ok());
  EXPECT_TRUE(Contains(l.status().message(), "partition 1 of 3 is missing")) << l.status();
  testing::WriteFileOrDie(samples1, saved);
  // A partition of another count beside them.
  {
    auto w = SamplePartWriter::Create(pack, "in", 0, 2, false);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Commit().ok());
  }
  l = ListSamplePack(pack, {});
  ASSERT_FALSE(l.ok());
  EXPECT_TRUE(Contains(l.status().message(), "partitions of 2, 3 parts")) << l.status();
  fs::remove(pack + "/part-00000-of-00002.samples.tfrecord");
  fs::remove(pack + "/part-00000-of-00002.tfrecord");
  ASSERT_TRUE(ListSamplePack(pack, {}).ok());
  // A data file cut short: refused at the listing, naming the file.
  const std::string data0 = pack + "/part-00000-of-00003.tfrecord";
  const std::string bytes = ReadFileOrDie(data0);
  testing::WriteFileOrDie(data0, bytes.substr(0, bytes.size() - 10));
  l = ListSamplePack(pack, {});
  ASSERT_FALSE(l.ok());
  EXPECT_TRUE(Contains(l.status().message(), "lies past the end of " + data0)) << l.status();
  // A flipped byte inside an image: that sample is a reject naming the file
  // and offset; the others convert.
  std::string flipped = bytes;
  flipped[40] ^= 0x20;
  testing::WriteFileOrDie(data0, flipped);
  StatusOr<ConvertResult> r = Convert(Options(pack, base_ + "/out"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->rejected, 2u);  // readme.png and the damaged one
  EXPECT_TRUE(Contains(ReadFileOrDie(base_ + "/out/rejects.tsv"), data0 + ": corrupted record at byte 0"))
      << ReadFileOrDie(base_ + "/out/rejects.tsv");
  // The marker of another format, and a .samples file that is not one.
  testing::WriteFileOrDie(data0, bytes);
  testing::WriteFileOrDie(pack + "/" + kSamplePackMarker, R"({"format": "libshard.samples/9", "name": "in"})");
  EXPECT_TRUE(Contains(ListSamplePack(pack, {}).status().message(), "libshard.samples/9"));
  testing::WriteFileOrDie(pack + "/" + kSamplePackMarker, R"({"format": "libshard.samples/1", "name": "in"})");
  testing::WriteFileOrDie(samples1, "garbage that is no TFRecord");
  l = ListSamplePack(pack, {});
  ASSERT_FALSE(l.ok());
  EXPECT_TRUE(Contains(l.status().message(), samples1)) << l.status();
}

TEST_F(SamplePackTest, AWriterRefusesBadPartitionsLateCallsAndOversizedOrBadTextSamples) {
  const std::string pack = base_ + "/w";
  StatusOr<std::unique_ptr<SamplePartWriter>> bad = SamplePartWriter::Create(pack, "w", 2, 2);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "partition 2 of 2: the partition must be in 0..count-1 and the count in 1..100000");
  auto w = SamplePartWriter::Create(pack, "w", 0, 1, false);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ((*w)->Add({"k\xff.png", "", -1, ""}, "x").message(), "sample 0 (key 'k\\xff.png'): the key is not valid UTF-8");
  EXPECT_EQ((*w)->Add({"k.png", "", -1, "c\xff"}, "x").message(), "sample 0 (key 'k.png'): the class name is not valid UTF-8");
  // An image past the limit, refused before a byte of it is read (untouched pages cost nothing).
  const size_t big = kMaxPackSampleBytes + 1;
  void* pages = ::mmap(nullptr, big, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(pages, MAP_FAILED);
  EXPECT_EQ((*w)->Add({"big.png", "", -1, ""}, std::string_view(static_cast<const char*>(pages), big)).message(),
            "sample 0 (key 'big.png'): 1073741825 bytes, over the limit of 1073741824");
  ::munmap(pages, big);
  ASSERT_TRUE((*w)->Commit().ok());
  const std::string late = pack + "/part-00000-of-00001.samples.tfrecord: the partition is committed or failed";
  EXPECT_EQ((*w)->Add({"k.png", "", -1, ""}, "x").message(), late);
  EXPECT_EQ((*w)->Commit().message(), late);
}

TEST_F(SamplePackTest, ASamplesFileThatLiesIsNamedWithItsRecord) {
  const std::string pack = base_ + "/lies";
  {
    auto w = SamplePartWriter::Create(pack, "lies", 0, 1, false);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Add({"a.png", "", -1, ""}, PngBytes(4, 4, 3, 1)).ok());
    ASSERT_TRUE((*w)->Commit().ok());
  }
  const std::string samples = pack + "/part-00000-of-00001.samples.tfrecord";
  struct Lie {
    std::function<void(example::ExampleBuilder*)> fields;
    std::string message;
  };
  const std::vector<Lie> lies = {
      {[](example::ExampleBuilder* b) { b->AddBytes("key", "a.png"); },
       "not a sample of a pack (key, offset and size are required)"},
      {[](example::ExampleBuilder* b) {
         b->AddBytes("key", "a.png");
         b->AddInt64("offset", -1);
         b->AddInt64("size", 4);
       },
       "negative offset or size"},
      {[](example::ExampleBuilder* b) {
         b->AddBytes("key", "a.png");
         b->AddInt64("label", -3);
         b->AddInt64("offset", 0);
         b->AddInt64("size", 4);
       },
       "negative label"},
      {[](example::ExampleBuilder* b) {
         b->AddBytes("key", "a.png");
         b->AddInt64("offset", 0);
         b->AddInt64("size", 4);
         b->AddInt64("mask_offset", 0);
         b->AddInt64("mask_size", 0);
       },
       "bad mask offset or size"},
      {[](example::ExampleBuilder* b) {
         b->AddBytes("key", "../a.png");
         b->AddInt64("offset", 0);
         b->AddInt64("size", 4);
       },
       "key"},
  };
  for (const Lie& lie : lies) {
    SCOPED_TRACE(lie.message);
    example::ExampleBuilder b;
    lie.fields(&b);
    auto out = record::RecordWriter::Create(samples);
    ASSERT_TRUE(out.ok());
    ASSERT_TRUE((*out)->Write(b.Serialize()).ok());
    ASSERT_TRUE((*out)->Close().ok());
    StatusOr<Listing> l = ListSamplePack(pack, {});
    ASSERT_FALSE(l.ok());
    EXPECT_EQ(l.status().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(Contains(l.status().message(), samples + ": record at byte 0: ")) << l.status();
    EXPECT_TRUE(Contains(l.status().message(), lie.message)) << l.status();
  }
  // No partition at all (the marker only), and a class the labels file does not name.
  fs::remove(samples);
  EXPECT_EQ(ListSamplePack(pack, {}).status().message(), pack + ": the pack has no committed partition");
  {
    auto w = SamplePartWriter::Create(pack, "lies", 0, 1, false);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Add({"a.png", "", -1, "cat"}, PngBytes(4, 4, 3, 1)).ok());
    ASSERT_TRUE((*w)->Add({"b.png", "", -1, "zebra"}, PngBytes(4, 4, 3, 2)).ok());
    ASSERT_TRUE((*w)->Commit().ok());
  }
  testing::WriteFileOrDie(base_ + "/labels.txt", "cat\ndog\n");
  ListOptions o;
  o.labels_file = base_ + "/labels.txt";
  StatusOr<Listing> l = ListSamplePack(pack, o);
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_EQ(l->samples.size(), 1u);
  ASSERT_EQ(l->rejects.size(), 1u);
  EXPECT_EQ(l->rejects[0].reason, samples + ":2: class 'zebra' is not in " + o.labels_file);
}

TEST_F(SamplePackTest, AKeyInTwoPartitionsAndMixedLabelsAreRefused) {
  const std::string pack = base_ + "/twice";
  for (uint32_t p = 0; p < 2; ++p) {
    auto w = SamplePartWriter::Create(pack, "twice", p, 2, false);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Add({"same.png", "", -1, "x"}, PngBytes(4, 4, 3, 1)).ok());
    ASSERT_TRUE((*w)->Commit().ok());
  }
  StatusOr<Listing> l = ListSamplePack(pack, {});
  ASSERT_FALSE(l.ok());
  const std::string parts = pack + "/part-00000-of-00002.samples.tfrecord:1 and " + pack +
                            "/part-00001-of-00002.samples.tfrecord:1";
  EXPECT_TRUE(Contains(l.status().message(), "key 'same.png' is in " + parts)) << l.status();
  fs::remove_all(pack);
  for (uint32_t p = 0; p < 2; ++p) {
    auto w = SamplePartWriter::Create(pack, "twice", p, 2, false);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Add({"k" + std::to_string(p) + ".png", "", p == 0 ? 4 : -1, p == 0 ? "" : "x"},
                          PngBytes(4, 4, 3, 1))
                    .ok());
    ASSERT_TRUE((*w)->Commit().ok());
  }
  EXPECT_TRUE(Contains(ListSamplePack(pack, {}).status().message(), "mix integers and class names"));
}

}  // namespace
}  // namespace libshard::convert

// The converter as a library: manifest contents checked against the shards
// themselves (records, checksums, sizes, statistics recomputed by decoding
// every record), read-back with the record reader, ExampleView and protobuf,
// indices, determinism across thread counts, resume, option changes, task
// splits, fail-on-error and all-rejected runs.
#include "libshard/convert/converter.h"

#include <gtest/gtest.h>
#include <atomic>
#include <stdexcept>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <oneapi/tbb/info.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "deflate_testutil.h"
#include "fixtures.h"
#include "libshard/convert/manifest_io.h"
#include "libshard/convert/merge.h"
#include "libshard/crc32c.h"
#include "libshard/example/example_view.h"
#include "libshard/example/image_keys.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/record/index.h"
#include "libshard/record/record_labels.h"
#include "libshard/util/sha256.h"
#include "tensorflow/core/example/example.pb.h"
#include "testutil.h"

namespace libshard::convert {
namespace {

namespace fs = std::filesystem;
using testing::JpegBytes;
using testing::ListFilesRecursive;
using testing::MakeTempDir;
using testing::PngBytes;
using testing::ReadFileOrDie;
using testing::ReadRecords;
using testing::WriteFileOrDie;
using testing::WriteTreeFile;

using testing::Contains;

// train/{a,b,c} with 6 images each, val/{a,c} with 3 each: PNG (gray, RGB,
// RGBA) and JPEG (gray, RGB) of assorted sizes; plus a text file in a class
// (rejected by the converter) and a file beside the class folders (rejected
// by the listing).
constexpr int kTrainImages = 18, kValImages = 6;
void MakeTree(const std::string& root) {
  int k = 0;
  auto add = [&](const std::string& dir, int n) {
    for (int i = 0; i < n; ++i, ++k) {
      const int w = 9 + (k * 7) % 23, h = 7 + (k * 5) % 19;
      std::string name = dir + "/img" + std::to_string(k);
      switch (k % 5) {
        case 0:
          WriteTreeFile(root, name + ".png", PngBytes(w, h, 3, k));
          break;
        case 1:
          WriteTreeFile(root, name + ".jpg", JpegBytes(w, h, 3, k));
          break;
        case 2:
          WriteTreeFile(root, name + ".png", PngBytes(w, h, 1, k));
          break;
        case 3:
          WriteTreeFile(root, name + ".jpeg", JpegBytes(w, h, 1, k));
          break;
        case 4:
          WriteTreeFile(root, name + ".png", PngBytes(w, h, 4, k));
          break;
      }
    }
  };
  add("train/a", 6);
  add("train/b", 6);
  add("train/c", 6);
  add("val/a", 3);
  add("val/c", 3);
  WriteTreeFile(root, "train/b/notes.jpg", "not an image\n");  // content decides
  WriteTreeFile(root, "train/stray.png", PngBytes(4, 4, 3, 99));
}

ConvertOptions Options(const std::string& in, const std::string& out) {
  ConvertOptions o;
  o.input = in;
  o.output = out;
  o.plan.records_per_shard = 4;
  o.plan.prefix = "t";
  o.sync = false;
  o.threads = 2;
  return o;
}

std::string Hex8(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%08x", v);
  return buf;
}

std::map<std::string, std::string> Snapshot(const std::string& dir) { return testing::SnapshotDir(dir); }

void ExpectSameFiles(const std::map<std::string, std::string>& a, const std::map<std::string, std::string>& b) {
  EXPECT_EQ(testing::CountDifferences(a, b), 0);
}

class ConverterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = MakeTempDir();
    in_ = base_ + "/in";
    MakeTree(in_);
  }
  void TearDown() override { fs::remove_all(base_); }
  std::string base_, in_;
};

TEST_F(ConverterTest, ManifestMatchesTheShards) {
  ConvertOptions o = Options(in_, base_ + "/out");
  o.encode.format = image::OutputFormat::kPng;  // lossless: records decode to the pixels counted
  uint64_t last_done = 0, last_total = 0;
  StatusOr<ConvertResult> r = Convert(o, [&](const Progress& p) {
    EXPECT_GE(p.done, last_done);
    last_done = p.done;
    last_total = p.total;
  });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(last_done, last_total);
  EXPECT_EQ(last_total, uint64_t{kTrainImages + kValImages + 1});
  EXPECT_EQ(r->manifest_path, o.output + "/manifest.json");
  EXPECT_EQ(r->rejected, 2u);
  EXPECT_EQ(r->shards_reused, 0u);
  StatusOr<Manifest> m = manifest::ReadManifest(r->manifest_path);
  ASSERT_TRUE(m.ok()) << m.status();
  {
    Manifest a = *m, b = r->manifest;
    EXPECT_EQ(manifest::ToJson(a), manifest::ToJson(b));
  }
  EXPECT_EQ(m->format(), "libshard.manifest/1");
  EXPECT_TRUE(m->complete());
  EXPECT_EQ(m->options().prefix(), "t");
  EXPECT_EQ(m->options().format(), "png");
  EXPECT_EQ(m->options().records_per_shard(), 4u);
  ASSERT_EQ(m->labels_size(), 3);
  EXPECT_EQ(m->labels(0).name(), "a");
  EXPECT_EQ(m->labels(2).name(), "c");
  EXPECT_EQ(m->labels(2).label(), 2);
  const std::vector<FeatureSpec> schema = RecordSchema(Normalized(o), true, false);
  ASSERT_EQ(m->schema_size(), static_cast<int>(schema.size()));
  for (size_t i = 0; i < schema.size(); ++i) {
    EXPECT_EQ(m->schema(i).SerializeAsString(), schema[i].SerializeAsString());
  }
  // Rejects: the listing's and the converter's, sorted by path.
  ASSERT_EQ(m->rejects_size(), 2);
  EXPECT_EQ(m->rejects(0).path(), "train/b/notes.jpg");
  EXPECT_EQ(m->rejects(1).path(), "train/stray.png");
  EXPECT_EQ(m->stats().rejected(), 2u);
  const std::string tsv = ReadFileOrDie(o.output + "/rejects.tsv");
  EXPECT_EQ(tsv.substr(0, 12), "path\treason\n");
  EXPECT_TRUE(Contains(tsv, "\ntrain/b/notes.jpg\t")) << tsv;
  EXPECT_TRUE(Contains(tsv, "\ntrain/stray.png\tfile outside any class folder\n")) << tsv;

  ASSERT_EQ(m->splits_size(), 2);
  EXPECT_EQ(m->splits(0).name(), "train");
  EXPECT_EQ(m->splits(1).name(), "val");
  EXPECT_EQ(m->splits(0).records(), uint64_t{kTrainImages});
  EXPECT_EQ(m->splits(1).records(), uint64_t{kValImages});
  EXPECT_EQ(m->splits(0).shard_count(), 5u);  // ceil(19 planned / 4)
  EXPECT_EQ(m->splits(1).shard_count(), 2u);
  {
    // O(shards + classes): "stats" once per split and once for the whole,
    // "reason" once per reject (none per shard).
    const std::string text = ReadFileOrDie(r->manifest_path);
    auto count = [&text](const std::string& word) {
      size_t n = 0;
      for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
      return n;
    };
    EXPECT_EQ(count("\"stats\""), 3u) << text;
    EXPECT_EQ(count("\"reason\""), 2u) << text;
  }

  // Recompute everything from the shard files.
  std::vector<uint64_t> sum(3), sq_lo(3), count(3);
  std::map<int64_t, uint64_t> labels;
  std::set<std::string> filenames;
  uint64_t total_records = 0, output_bytes = 0;
  for (const SplitEntry& split : m->splits()) {
    uint64_t split_records = 0;
    ASSERT_EQ(split.shards_size(), static_cast<int>(split.shard_count()));
    for (int si = 0; si < split.shards_size(); ++si) {
      const ShardEntry& e = split.shards(si);
      EXPECT_EQ(e.index(), static_cast<uint32_t>(si));
      EXPECT_EQ(e.file(), ShardFileName("t", split.name(), e.index(), e.count()));
      const std::string path = o.output + "/" + e.file();
      const std::string data = ReadFileOrDie(path);
      EXPECT_EQ(e.bytes(), data.size()) << e.file();
      EXPECT_EQ(e.checksum(), "crc32c:" + Hex8(crc32c::Value(data.data(), data.size()))) << e.file();
      EXPECT_EQ(e.index_file(), e.file() + ".idx");
      StatusOr<std::vector<record::IndexEntry>> idx =
          record::ParseIndex(ReadFileOrDie(o.output + "/" + e.index_file()));
      ASSERT_TRUE(idx.ok()) << idx.status();
      EXPECT_TRUE(record::CheckIndex(data, *idx).ok()) << e.file();
      EXPECT_EQ(e.plan_id().size(), 64u);
      const std::vector<std::string> recs = ReadRecords(path);
      EXPECT_EQ(recs.size(), e.records()) << e.file();
      EXPECT_EQ(idx->size(), e.records());
      // The labels sidecar: each record's label in record order (checked against the records below).
      EXPECT_EQ(e.labels_file(), e.file() + ".labels");
      StatusOr<std::vector<int64_t>> sidecar =
          record::ParseLabels(ReadFileOrDie(o.output + "/" + e.labels_file()), e.labels_file());
      ASSERT_TRUE(sidecar.ok()) << sidecar.status();
      ASSERT_EQ(sidecar->size(), e.records());
      size_t rec_index = 0;
      // manifest.json grows with the shards, not the records: a shard's own
      // stats and rejects stay in its entry (below).
      EXPECT_FALSE(e.has_stats()) << e.file();
      EXPECT_EQ(e.rejects_size(), 0) << e.file();
      split_records += recs.size();
      for (const std::string& rec : recs) {
        StatusOr<example::ExampleView> ex = example::ExampleView::Parse(rec);
        ASSERT_TRUE(ex.ok()) << ex.status();
        tensorflow::Example pb;
        ASSERT_TRUE(pb.ParseFromString(rec));
        const auto& f = pb.features().feature();
        const std::string& filename = f.at(keys::kFilename).bytes_list().value(0);
        EXPECT_EQ(filename.rfind(split.name() + "/", 0), 0u) << filename;
        EXPECT_TRUE(filenames.insert(filename).second) << filename << " twice";
        const int64_t label = f.at(keys::kLabel).int64_list().value(0);
        EXPECT_EQ((*sidecar)[rec_index++], label) << e.file();
        ++labels[label];
        EXPECT_EQ(f.at(keys::kText).bytes_list().value(0), m->labels(label).name());
        EXPECT_EQ(filename.substr(split.name().size() + 1, 2), m->labels(label).name() + "/");
        const std::string source = ReadFileOrDie(in_ + "/" + filename);
        EXPECT_EQ(f.at(keys::kSha256).bytes_list().value(0), util::Sha256Hex(source));
        const std::string& encoded = f.at(keys::kEncoded).bytes_list().value(0);
        output_bytes += encoded.size();
        example::FeatureView enc;
        ASSERT_TRUE(ex->Find(keys::kEncoded, &enc));
        EXPECT_EQ(enc.bytes(0), encoded);
        StatusOr<image::Image> img = image::DecodeImage(encoded);
        ASSERT_TRUE(img.ok()) << img.status();
        ASSERT_EQ(img->channels(), 3);
        EXPECT_EQ(img->width(), f.at(keys::kWidth).int64_list().value(0));
        for (size_t i = 0; i < img->byte_size(); ++i) {
          const uint64_t v = img->data()[i];
          sum[i % 3] += v;
          sq_lo[i % 3] += v * v;
          count[i % 3] += 1;
        }
      }
    }
    EXPECT_EQ(split.records(), split_records);
    EXPECT_EQ(split.stats().converted(), split_records);
    total_records += split_records;
  }
  EXPECT_EQ(filenames.size(), size_t{kTrainImages + kValImages});
  EXPECT_EQ(total_records, m->stats().converted());
  EXPECT_EQ(output_bytes, m->stats().output_bytes());
  ASSERT_EQ(m->stats().channels_size(), 3);
  for (int k = 0; k < 3; ++k) {
    const ChannelStats& ch = m->stats().channels(k);
    EXPECT_EQ(ch.count(), count[k]);
    EXPECT_EQ(ch.sum(), sum[k]);
    EXPECT_EQ(ch.sum_squares(), std::to_string(sq_lo[k]));
    EXPECT_NEAR(ch.mean(), static_cast<double>(sum[k]) / count[k], 1e-9 * 255);
  }
  ASSERT_EQ(m->stats().labels_size(), 3);
  for (const LabelCount& lc : m->stats().labels()) EXPECT_EQ(lc.count(), labels[lc.label()]) << lc.label();
  EXPECT_EQ(labels[0], 9u);  // train/a 6 + val/a 3
  EXPECT_EQ(labels[1], 6u);
  uint64_t source_bytes = 0;
  for (const std::string& f : filenames) source_bytes += fs::file_size(in_ + "/" + f);
  EXPECT_EQ(m->stats().source_bytes(), source_bytes);
  EXPECT_EQ(m->stats().passed_through(), 0u);
  // Nothing temporary left behind.
  for (const std::string& f : ListFilesRecursive(o.output)) {
    EXPECT_FALSE(Contains(f, ".partial")) << f;
    EXPECT_FALSE(Contains(f, ".tmp")) << f;
  }
  // Each shard has its entry in the state folder.
  for (const SplitEntry& split : m->splits()) {
    for (const ShardEntry& e : split.shards()) {
      StatusOr<ShardEntry> on_disk = ReadShardEntry(o.output + "/.libshard/" + e.file() + ".json");
      ASSERT_TRUE(on_disk.ok()) << on_disk.status();
      EXPECT_EQ(static_cast<uint64_t>(on_disk->image_hashes_size()), e.records());  // the leak check's
      EXPECT_EQ(on_disk->planned(), e.records() + on_disk->rejects_size());
      EXPECT_EQ(on_disk->stats().converted(), e.records());
      // Kept for resume and merge, not in manifest.json.
      on_disk->clear_image_hashes();
      on_disk->clear_stats();
      on_disk->clear_rejects();
      EXPECT_EQ(on_disk->SerializeAsString(), e.SerializeAsString());
    }
  }
}

TEST_F(ConverterTest, JpegPassThroughIsCounted) {
  ConvertOptions o = Options(in_, base_ + "/out");
  StatusOr<ConvertResult> r = Convert(o);
  ASSERT_TRUE(r.ok()) << r.status();
  // k % 5 == 1 are colour JPEGs (RGB out: passed through); gray JPEGs become RGB.
  uint64_t colour_jpegs = 0;
  for (const std::string& f : ListFilesRecursive(in_)) {
    colour_jpegs += f.size() > 4 && f.substr(f.size() - 4) == ".jpg" && !Contains(f, "notes.jpg");  // text
  }
  EXPECT_EQ(r->manifest.stats().passed_through(), colour_jpegs);
  EXPECT_GT(colour_jpegs, 0u);
}

TEST_F(ConverterTest, ThreadCountDoesNotChangeTheOutput) {
  std::map<std::string, std::string> first;
  for (int threads : {1, 2, 3}) {
    ConvertOptions o = Options(in_, base_ + "/out" + std::to_string(threads));
    o.threads = threads;
    o.encode.transform.mode = image::ResizeMode::kCenterCrop;
    o.encode.transform.width = o.encode.transform.height = 8;
    StatusOr<ConvertResult> r = Convert(o);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->manifest.run().threads(), threads);
    std::map<std::string, std::string> snap = Snapshot(o.output);
    if (threads == 1) {
      first = snap;
      EXPECT_EQ(first.count("manifest.json"), 1u);
      EXPECT_EQ(first.count("t-train-00004-of-00005.tfrecord.idx"), 1u);
    } else {
      ExpectSameFiles(first, snap);
    }
  }
}

// threads = 0 is one thread per core (util::ThreadCount), as for verify and
// the loader: not the concurrency of the arena Convert is called from.
TEST_F(ConverterTest, ZeroThreadsIsOnePerCoreWhateverTheCallersArena) {
  ConvertOptions o = Options(in_, base_ + "/out");
  o.threads = 0;
  StatusOr<ConvertResult> r = InvalidArgumentError("not run");
  tbb::task_arena one(1);
  one.execute([&] { r = Convert(o); });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->manifest.run().threads(), tbb::info::default_concurrency());
}

TEST_F(ConverterTest, ResumeKeepsCompleteShardsAndRedoesTheRest) {
  const ConvertOptions ref_o = Options(in_, base_ + "/ref");
  ASSERT_TRUE(Convert(ref_o).ok());
  const std::map<std::string, std::string> ref = Snapshot(ref_o.output);

  const ConvertOptions o = Options(in_, base_ + "/out");
  StatusOr<ConvertResult> r = Convert(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->shards_written, 7u);
  const std::string out = o.output;

  // 1. A shard deleted.
  fs::remove(out + "/t-train-00002-of-00005.tfrecord");
  r = Convert(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shards_reused, 6u);
  EXPECT_EQ(r->shards_written, 1u);
  EXPECT_EQ(r->rejected, 2u);  // the reused shards' rejects count too
  ExpectSameFiles(ref, Snapshot(out));

  // 2. A damaged entry, a truncated shard, and a killed run's leftovers.
  WriteFileOrDie(out + "/.libshard/t-val-00001-of-00002.tfrecord.json", "{ not json");
  const std::string shard0 = out + "/t-train-00000-of-00005.tfrecord";
  fs::resize_file(shard0, fs::file_size(shard0) - 3);
  WriteFileOrDie(out + "/.libshard/t-train-00003-of-00005.tfrecord.partial", "half a shard");
  WriteFileOrDie(out + "/.libshard/t-train-00003-of-00005.tfrecord.partial.idx", "0 10\n");
  r = Convert(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shards_written, 2u);
  EXPECT_EQ(r->shards_reused, 5u);
  ExpectSameFiles(ref, Snapshot(out));

  // 3. Nothing to do: everything reused, same result.
  r = Convert(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->shards_written, 0u);
  EXPECT_EQ(r->shards_reused, 7u);
  ExpectSameFiles(ref, Snapshot(out));
}

TEST_F(ConverterTest, ChangedOptionRedoesEveryShard) {
  ConvertOptions o = Options(in_, base_ + "/out");
  o.encode.reencode = image::ReencodeMode::kAlways;
  StatusOr<ConvertResult> r = Convert(o);
  ASSERT_TRUE(r.ok());
  const std::string before = ReadFileOrDie(o.output + "/t-train-00000-of-00005.tfrecord");
  const std::string plan_before = r->manifest.splits(0).shards(0).plan_id();
  o.encode.jpeg.quality = 50;
  r = Convert(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->shards_reused, 0u);
  EXPECT_EQ(r->shards_written, 7u);
  EXPECT_NE(r->manifest.splits(0).shards(0).plan_id(), plan_before);
  EXPECT_EQ(r->manifest.options().quality(), 50);
  EXPECT_NE(ReadFileOrDie(o.output + "/t-train-00000-of-00005.tfrecord"), before);
  // A changed source file (its size) redoes only its shard.
  fs::path victim;
  for (const std::string& f : ListFilesRecursive(in_)) {
    if (f.rfind("val/", 0) == 0) {
      victim = in_ + "/" + f;
      break;
    }
  }
  WriteFileOrDie(victim.string(), PngBytes(31, 17, 3, 1234));
  r = Convert(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->shards_written, 1u);
  EXPECT_EQ(r->shards_reused, 6u);
}

// Issue 12 item 12: a re-plan (another --records-per-shard) used to leave
// the earlier plan's shards, entries and .partial files; the Loader then
// read duplicates.
TEST_F(ConverterTest, RePlanRemovesTheEarlierPlansShards) {
  const std::string out = base_ + "/out";
  ConvertOptions o = Options(in_, out);
  o.plan.records_per_shard = 2;  // train 19 inputs -> 10 shards, val 6 -> 3
  ASSERT_TRUE(Convert(o).ok());
  // A killed run of that plan would also have left a shard being written.
  WriteFileOrDie(out + "/.libshard/t-train-00009-of-00010.tfrecord.partial", "half");
  WriteFileOrDie(out + "/.libshard/t-train-00009-of-00010.tfrecord.partial.idx", "");
  // Files that are not this conversion's shards stay: another prefix, a
  // split name that merely starts like ours, anything else.
  WriteFileOrDie(out + "/other-train-00000-of-00002.tfrecord", "x");
  WriteFileOrDie(out + "/t-train-extra-00000-of-00002.tfrecord", "x");
  WriteFileOrDie(out + "/notes.txt", "x");

  o.plan.records_per_shard = 6;  // train -> 4 shards, val -> 1
  StatusOr<ConvertResult> r = Convert(o);
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<std::string> want_removed;
  for (int i = 0; i < 10; ++i) want_removed.push_back("t-train-0000" + std::to_string(i) + "-of-00010.tfrecord");
  for (int i = 0; i < 3; ++i) want_removed.push_back("t-val-0000" + std::to_string(i) + "-of-00003.tfrecord");
  EXPECT_EQ(r->removed_stale, want_removed);

  // Exactly the shards the manifest lists (with index, labels and entry), nothing else of the earlier plan.
  std::vector<std::string> want = {".libshard/lock",
                                   "duplicates.tsv",
                                   "manifest.json",
                                   "notes.txt",
                                   "other-train-00000-of-00002.tfrecord",
                                   "rejects.tsv",
                                   "t-train-extra-00000-of-00002.tfrecord"};
  for (const SplitEntry& split : r->manifest.splits()) {
    for (const ShardEntry& e : split.shards()) {
      want.push_back(e.file());
      want.push_back(e.index_file());
      want.push_back(e.labels_file());
      want.push_back(".libshard/" + e.file() + ".json");
    }
  }
  std::sort(want.begin(), want.end());
  EXPECT_EQ(ListFilesRecursive(out), want);

  // Without the two foreign files, verify finds nothing wrong and the Loader
  // reads every converted sample exactly once.
  fs::remove(out + "/other-train-00000-of-00002.tfrecord");
  fs::remove(out + "/t-train-extra-00000-of-00002.tfrecord");
  testing::FolderReadBack rb = testing::ReadBackFolder(out);
  EXPECT_TRUE(rb.verify_faults.empty()) << rb.verify_faults[0];
  EXPECT_EQ(rb.open_error, "");
  EXPECT_EQ(rb.loader_samples, r->manifest.stats().converted());
  EXPECT_EQ(rb.filenames.size(), r->manifest.stats().converted());
  EXPECT_TRUE(rb.duplicates().empty()) << rb.duplicates()[0];

  // A split the new plan no longer has goes too (its entries name it ours).
  const std::string flat = base_ + "/flat";
  for (const std::string& f : ListFilesRecursive(in_ + "/train")) {
    WriteTreeFile(flat, f, ReadFileOrDie(in_ + "/train/" + f));
  }
  ConvertOptions t = Options(flat, out);
  t.plan.records_per_shard = 6;
  r = Convert(t);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->manifest.splits_size(), 1);
  EXPECT_EQ(r->removed_stale, (std::vector<std::string>{"t-val-00000-of-00001.tfrecord"}));
  EXPECT_FALSE(fs::exists(out + "/t-val-00000-of-00001.tfrecord"));
  EXPECT_FALSE(fs::exists(out + "/.libshard/t-val-00000-of-00001.tfrecord.json"));
  EXPECT_TRUE(testing::ReadBackFolder(out).verify_faults.empty());
}

// Holds flock(op) on `path` (created) until destroyed, as another process's
// conversion would.
class HeldLock {
 public:
  HeldLock(const std::string& path, int op) {
    fs::create_directories(fs::path(path).parent_path());
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    EXPECT_GE(fd_, 0) << path;
    EXPECT_EQ(::flock(fd_, op | LOCK_NB), 0) << path;
  }
  ~HeldLock() { ::close(fd_); }

 private:
  int fd_ = -1;
};

// Issue 12 item 13: two conversions into one folder corrupted each other.
TEST_F(ConverterTest, SecondWriterOfAnOutputFolderIsRefused) {
  const std::string out = base_ + "/out";
  const std::string busy = out +
                           ": another `shard convert` or `shard merge` is writing to this output folder (it holds " +
                           out + "/.libshard/lock); wait for it to end, or use another folder";
  {
    HeldLock other(out + "/.libshard/lock", LOCK_EX);  // a single run or a merge
    StatusOr<ConvertResult> r = Convert(Options(in_, out));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(r.status().message(), busy);
    ConvertOptions task = Options(in_, out);
    task.num_tasks = 2;
    EXPECT_EQ(Convert(task).status().message(), busy);
    EXPECT_EQ(ListFilesRecursive(out), std::vector<std::string>{".libshard/lock"});  // nothing written
  }
  {
    HeldLock task1(out + "/.libshard/lock", LOCK_SH);  // task 1 of 2 running
    HeldLock own(out + "/.libshard/lock.task-00001-of-00002", LOCK_EX);
    EXPECT_EQ(Convert(Options(in_, out)).status().message(), busy);  // a single run waits for the tasks
    ConvertOptions o = Options(in_, out);
    o.num_tasks = 2;
    o.task_index = 0;
    StatusOr<ConvertResult> r = Convert(o);  // another task of the split run may share the folder
    EXPECT_TRUE(r.ok()) << r.status();
    o.task_index = 1;  // but not the same task twice
    r = Convert(o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(r.status().message(), out + ": task 1 of 2 is already running into this output folder (it holds " + out +
                                        "/.libshard/lock.task-00001-of-00002); wait for it to end");
    // A merge needs every task finished.
    StatusOr<MergeResult> m = MergeTasks(out);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().message(), busy);
  }
  // Released (the holder ended): the conversion runs.
  EXPECT_TRUE(Convert(Options(in_, out)).ok());
}

TEST_F(ConverterTest, TaskSplitUnionEqualsASingleRun) {
  const ConvertOptions single = Options(in_, base_ + "/single");
  StatusOr<ConvertResult> whole = Convert(single);
  ASSERT_TRUE(whole.ok());
  std::map<std::string, std::string> ref;
  for (const auto& [k, v] : Snapshot(single.output)) {
    if (Contains(k, ".tfrecord")) ref[k] = v;
  }
  ASSERT_EQ(ref.size(), 7u * 4);  // shard, idx, labels, entry
  for (uint32_t n : {2u, 3u}) {
    const std::string dir = base_ + "/tasks" + std::to_string(n);
    uint64_t converted = 0;
    uint32_t written = 0;
    for (uint32_t t = 0; t < n; ++t) {
      ConvertOptions o = Options(in_, dir);  // tasks share one folder
      o.num_tasks = n;
      o.task_index = t;
      o.threads = 1 + t % 2;
      StatusOr<ConvertResult> r = Convert(o);
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->manifest_path, dir + "/.libshard/" + TaskManifestName(t, n));
      EXPECT_FALSE(r->manifest.complete());
      EXPECT_EQ(r->manifest.run().num_tasks(), n);
      StatusOr<Manifest> m = manifest::ReadManifest(r->manifest_path);
      ASSERT_TRUE(m.ok());
      converted += m->stats().converted();
      written += r->shards_written;
    }
    EXPECT_EQ(written, 7u);
    EXPECT_EQ(converted, whole->manifest.stats().converted());
    EXPECT_FALSE(fs::exists(dir + "/manifest.json"));
    std::map<std::string, std::string> got;
    for (const auto& [k, v] : Snapshot(dir)) {
      if (Contains(k, ".tfrecord")) got[k] = v;
    }
    ExpectSameFiles(ref, got);
    // The task entries assemble into the single run's manifest.
    std::vector<ShardEntry> entries;
    for (const auto& [k, v] : got) {
      if (k.size() > 5 && k.substr(k.size() - 5) == ".json") {
        StatusOr<ShardEntry> e = ReadShardEntry(dir + "/" + k);
        ASSERT_TRUE(e.ok());
        entries.push_back(*e);
      }
    }
    std::vector<LabelEntry> labels(whole->manifest.labels().begin(), whole->manifest.labels().end());
    std::vector<FeatureSpec> schema(whole->manifest.schema().begin(), whole->manifest.schema().end());
    std::vector<Reject> listing_rejects = {whole->manifest.rejects(1)};  // the listing's
    StatusOr<Manifest> merged =
        AssembleManifest(whole->manifest.options(), labels, schema, entries, listing_rejects, true);
    ASSERT_TRUE(merged.ok()) << merged.status();
    // One shard's entry given twice (two tasks claiming it) is refused, naming it.
    std::vector<ShardEntry> twice = entries;
    twice.push_back(entries.back());
    StatusOr<Manifest> doubled =
        AssembleManifest(whole->manifest.options(), labels, schema, twice, listing_rejects, true);
    EXPECT_EQ(doubled.status().code(), StatusCode::kInvalidArgument) << doubled.status();
    EXPECT_TRUE(Contains(doubled.status().message(), "shard " + entries.back().file() + " listed twice"))
        << doubled.status();
    Manifest expect = whole->manifest;
    expect.clear_run();
    // The whole plan's fingerprint is the tasks' (entries carry their own).
    StatusOr<Manifest> task0 = manifest::ReadManifest(TaskManifestPath(dir, 0, n));
    ASSERT_TRUE(task0.ok());
    EXPECT_EQ(task0->plan_id(), whole->manifest.plan_id());
    merged->set_plan_id(task0->plan_id());
    // The leak check, as a single run and shard merge run it (the entries keep the fingerprints).
    uint64_t without = 0;
    ASSERT_TRUE(CheckLeaks(dir, LeakMode::kWarn, kDefaultLeakDistance, false, &*merged, &without).ok());
    DropShardDetails(&*merged);  // what manifest.json leaves to the entries
    EXPECT_EQ(manifest::ToJson(*merged), manifest::ToJson(expect));
  }
  ConvertOptions bad = Options(in_, base_ + "/bad");
  bad.num_tasks = 2;
  bad.task_index = 2;
  EXPECT_EQ(Convert(bad).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(bad.output));
}

TEST_F(ConverterTest, FailOnErrorStopsNamingTheFileAndLeavesNoIncompleteShard) {
  // Without the listing reject, so the converter's own check is reached.
  fs::remove(in_ + "/train/stray.png");
  ConvertOptions o = Options(in_, base_ + "/out");
  o.fail_on_error = true;
  o.plan.shuffle = false;
  StatusOr<ConvertResult> r = Convert(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(r.status().message(), in_ + "/train/b/notes.jpg")) << r.status();
  EXPECT_FALSE(fs::exists(o.output + "/manifest.json"));
  // Shards finished before the bad input may stay; each is complete.
  int complete = 0;
  for (const std::string& f : ListFilesRecursive(o.output)) {
    EXPECT_FALSE(Contains(f, ".partial")) << f;
    if (f.size() > 9 && f.substr(f.size() - 9) == ".tfrecord") {
      StatusOr<ShardEntry> e = ReadShardEntry(o.output + "/.libshard/" + f + ".json");
      ASSERT_TRUE(e.ok()) << f;
      EXPECT_EQ(ReadRecords(o.output + "/" + f).size(), e->records()) << f;
      EXPECT_EQ(e->records(), e->planned()) << f;
      ++complete;
    }
  }
  // Unshuffled, train/b/notes.jpg is the 13th sample: shards 0..2 hold 0..11.
  EXPECT_LE(complete, 3);
  EXPECT_FALSE(fs::exists(o.output + "/t-train-00003-of-00005.tfrecord"));

  // A listing reject fails before anything is written.
  WriteTreeFile(in_, "train/stray.png", PngBytes(4, 4, 3, 1));
  o.output = base_ + "/out2";
  r = Convert(o);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "train/stray.png")) << r.status();
  EXPECT_FALSE(fs::exists(o.output));
}

// converter.h's ProgressFn contract: one call per sample, in order, never
// two at once; an exception from it stops the run as an error, and no
// incomplete shard is left.
// Issue 23 item 11: a file missing once the run has started (another
// process removed the output's state folder) is an I/O error, not the
// kNotFound that the CLI maps to a usage error (exit 2).
TEST_F(ConverterTest, AFileRemovedMidRunIsAnIOErrorNotNotFound) {
  ConvertOptions o = Options(in_, base_ + "/out");
  o.plan.records_per_shard = 2;
  o.plan.shuffle = false;
  o.threads = 1;
  bool removed = false;
  StatusOr<ConvertResult> r = Convert(o, [&](const Progress&) {
    if (!removed) fs::remove_all(o.output + "/.libshard");
    removed = true;
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIOError) << r.status();
  EXPECT_TRUE(Contains(r.status().message(), o.output + "/.libshard/")) << r.status();
}

TEST_F(ConverterTest, ProgressIsSerialAndAThrowingCallbackStopsTheRun) {
  fs::remove(in_ + "/train/stray.png");
  ConvertOptions o = Options(in_, base_ + "/out");
  o.threads = 2;
  std::atomic<int> inside{0};
  uint64_t calls = 0, last_done = 0;
  bool overlapped = false, ordered = true;
  uint64_t leak_calls = 0, after_leak_call = 0;
  StatusOr<ConvertResult> r = Convert(o, [&](const Progress& p) {
    if (inside.fetch_add(1) != 0) overlapped = true;
    ++calls;
    after_leak_call += leak_calls;
    if (p.leak_check_images > 0) {  // the last call: the leak check starts, the samples as before
      ++leak_calls;
      if (p.done != last_done || p.leak_check_images > p.done) ordered = false;  // rejects have none
    } else {
      if (p.done != last_done + 1) ordered = false;
      last_done = p.done;
    }
    inside.fetch_sub(1);
  });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(overlapped);
  EXPECT_TRUE(ordered);
  EXPECT_GT(calls, 0u);
  EXPECT_EQ(leak_calls, 1u);
  EXPECT_EQ(after_leak_call, 0u);

  o.output = base_ + "/out-throw";
  int seen = 0;
  r = Convert(o, [&](const Progress&) {
    if (++seen == 5) throw std::runtime_error("progress display failed");
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal) << r.status();
  EXPECT_TRUE(Contains(r.status().message(), "progress display failed")) << r.status();
  EXPECT_FALSE(fs::exists(o.output + "/manifest.json"));
  for (const std::string& f : ListFilesRecursive(o.output)) EXPECT_FALSE(Contains(f, ".partial")) << f;
}

TEST(ConverterRejectTest, EverythingRejected) {
  const std::string base = MakeTempDir();
  for (int i = 0; i < 5; ++i)
    WriteTreeFile(base + "/in", "c" + std::to_string(i % 2) + "/f" + std::to_string(i) + ".png",
                  "text " + std::to_string(i));
  ConvertOptions o = Options(base + "/in", base + "/out");
  StatusOr<ConvertResult> r = Convert(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->rejected, 5u);
  EXPECT_EQ(r->manifest.stats().converted(), 0u);
  EXPECT_EQ(r->manifest.stats().rejected(), 5u);
  EXPECT_EQ(r->manifest.stats().channels_size(), 0);
  for (const Reject& x : r->manifest.rejects()) EXPECT_FALSE(x.reason().empty());
  // Shards still exist (empty), so the plan's names hold.
  for (const SplitEntry& s : r->manifest.splits()) {
    for (const ShardEntry& e : s.shards()) {
      EXPECT_EQ(e.records(), 0u);
      EXPECT_EQ(fs::file_size(o.output + "/" + e.file()), 0u);
      EXPECT_EQ(e.checksum(), "crc32c:00000000");
    }
  }
  fs::remove_all(base);
}

// 10000 x 10000 RGBA 16-bit (800 MB to decode, 1e8 pixels: at the pixel
// limit) beside small images, converted with little memory to spare: the
// big one is a reject, the run goes on (issue 12: no std::bad_alloc
// escaping a thread, no abort).
TEST(ConverterRejectTest, OutOfMemoryIsARejectOfThatImageNotAnAbort) {
#ifdef LIBSHARD_TEST_ASAN
  GTEST_SKIP() << "address space limits do not work under AddressSanitizer";
#endif
  const std::string base = MakeTempDir();
  for (int i = 0; i < 4; ++i) WriteTreeFile(base + "/in", "a/" + std::to_string(i) + ".png", PngBytes(16, 12, 3, i));
  WriteTreeFile(base + "/in", "b/huge.png", testing::BlankRgba16Png(10000, 10000));
  const std::string report = base + "/report.txt";
  const int rc = testing::RunInForkChild([&] {
    ConvertOptions o = Options(base + "/in", base + "/out");
    o.plan.records_per_shard = 10;
    if (!testing::LimitAddressSpace(uint64_t{256} << 20)) return 5;
    StatusOr<ConvertResult> r = Convert(o);
    if (!r.ok()) {
      WriteFileOrDie(report, r.status().ToString());
      return 3;
    }
    std::string text = "converted " + std::to_string(r->manifest.stats().converted());
    for (const Reject& x : r->manifest.rejects()) text += "; " + x.path() + ": " + x.reason();
    WriteFileOrDie(report, text);
    return 0;
  });
  ASSERT_EQ(rc, 0) << (fs::exists(report) ? ReadFileOrDie(report) : "no report");
  EXPECT_EQ(ReadFileOrDie(report),
            "converted 4; b/huge.png: out of memory decoding the image (not caused by the "
            "file: retried on the next run)");
  fs::remove_all(base);
}

// Issue 23 item 5: an out-of-memory reject is not frozen into its finished
// shard: the reason says it will be retried, and a rerun with enough memory
// redoes that shard and converts the image (a content reject stays final).
TEST(ConverterRejectTest, OutOfMemoryRejectIsRetriedByTheNextRun) {
#ifdef LIBSHARD_TEST_ASAN
  GTEST_SKIP() << "address space limits do not work under AddressSanitizer";
#endif
  const std::string base = MakeTempDir();
  for (int i = 0; i < 3; ++i) WriteTreeFile(base + "/in", "a/" + std::to_string(i) + ".png", PngBytes(16, 12, 3, i));
  WriteTreeFile(base + "/in", "a/text.png", "not an image");  // a content reject: final
  WriteTreeFile(base + "/in", "b/huge.png", testing::BlankRgba16Png(6000, 6000));
  ConvertOptions o = Options(base + "/in", base + "/out");
  o.plan.records_per_shard = 1;
  o.plan.shuffle = false;
  o.threads = 1;
  o.encode.transform.mode = image::ResizeMode::kCenterCrop;
  o.encode.transform.width = o.encode.transform.height = 8;
  const std::string report = base + "/report.txt";
  const int rc = testing::RunInForkChild([&] {
    if (!testing::LimitAddressSpace(uint64_t{128} << 20)) return 5;
    StatusOr<ConvertResult> r = Convert(o);
    if (!r.ok()) {
      WriteFileOrDie(report, r.status().ToString());
      return 3;
    }
    std::string text = "converted " + std::to_string(r->manifest.stats().converted()) + ", transient " +
                       std::to_string(r->transient_rejects);
    for (const Reject& x : r->manifest.rejects()) text += "; " + x.path() + ": " + x.reason();
    WriteFileOrDie(report, text);
    return 0;
  });
  ASSERT_EQ(rc, 0) << (fs::exists(report) ? ReadFileOrDie(report) : "no report");
  const std::string first = ReadFileOrDie(report);
  ASSERT_TRUE(Contains(first, "converted 3, transient 1; ")) << first;
  EXPECT_TRUE(Contains(first,
                       "b/huge.png: out of memory decoding the image (not caused by the file: retried on the "
                       "next run)"))
      << first;

  StatusOr<ConvertResult> again = Convert(o);  // all the memory it needs
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->manifest.stats().converted(), 4u);
  EXPECT_EQ(again->transient_rejects, 0u);
  ASSERT_EQ(again->manifest.rejects_size(), 1);
  EXPECT_EQ(again->manifest.rejects(0).path(), "a/text.png");  // content: kept, not retried
  ASSERT_EQ(again->redone_retried.size(), 1u);
  EXPECT_EQ(again->redone_retried[0], "t-train-00004-of-00005.tfrecord (1 reject(s) not caused by the file)");
  EXPECT_EQ(again->shards_written, 1u);
  fs::remove_all(base);
}

TEST(ConverterRejectTest, BadOptionsWriteNothing) {
  const std::string base = MakeTempDir();
  WriteTreeFile(base + "/in", "c/a.png", PngBytes(4, 4, 3, 1));
  ConvertOptions o = Options(base + "/missing", base + "/out");
  EXPECT_EQ(Convert(o).status().code(), StatusCode::kNotFound);
  o.input = base + "/in";
  o.encode.jpeg.quality = 101;
  EXPECT_EQ(Convert(o).status().code(), StatusCode::kInvalidArgument);
  o = Options(base + "/in", "");
  EXPECT_EQ(Convert(o).status().code(), StatusCode::kInvalidArgument);
  o = Options("", base + "/out");
  EXPECT_EQ(Convert(o).status().code(), StatusCode::kInvalidArgument);
  o = Options(base + "/in", base + "/out");
  o.threads = -1;
  EXPECT_EQ(Convert(o).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(base + "/out"));
  fs::remove_all(base);
}

TEST(ConverterRejectTest, DefaultPrefixIsTheInputFolderName) {
  const std::string base = MakeTempDir();
  WriteTreeFile(base + "/pets", "cat/a.png", PngBytes(4, 4, 3, 1));
  ConvertOptions o;
  o.input = base + "/pets/";
  o.output = base + "/out";
  o.sync = false;
  StatusOr<ConvertResult> r = Convert(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(fs::exists(base + "/out/pets-train-00000-of-00001.tfrecord"));
  EXPECT_EQ(r->manifest.options().prefix(), "pets");
  // CSV input: the manifest file's stem.
  WriteFileOrDie(base + "/pets/list.csv", "path,label\ncat/a.png,0\n");
  o.input = base + "/pets/list.csv";
  o.output = base + "/out2";
  r = Convert(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(fs::exists(base + "/out2/list-train-00000-of-00001.tfrecord"));
  EXPECT_EQ(r->manifest.options().manifest_csv(), o.input);
  fs::remove_all(base);
}

TEST(ConverterRejectTest, DryRunWritesNothing) {
  const std::string base = MakeTempDir();
  WriteTreeFile(base + "/in", "c/a.png", PngBytes(4, 4, 3, 1));
  WriteTreeFile(base + "/in", "c/b.jpg", JpegBytes(16, 16, 3, 1, /*progressive=*/true));
  WriteTreeFile(base + "/in", "d/x.jpg", "hello");
  ConvertOptions o = Options(base + "/in", base + "/out");
  StatusOr<DryRunReport> r = DryRun(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(fs::exists(base + "/out"));
  EXPECT_EQ(r->listing.samples.size(), 3u);
  ASSERT_EQ(r->counts.size(), 2u);
  EXPECT_EQ(r->counts[0].class_name, "c");
  EXPECT_EQ(r->counts[0].count, 2u);
  ASSERT_EQ(r->formats.size(), 3u);
  EXPECT_EQ(r->formats[0].name(), "jpeg");
  EXPECT_EQ(r->formats[2].name(), "unknown");
  ASSERT_EQ(r->risky.size(), 2u);
  EXPECT_EQ(r->risky[0].path(), "c/b.jpg");
  EXPECT_TRUE(Contains(r->risky[0].reason(), "progressive"));
  EXPECT_EQ(r->risky[1].path(), "d/x.jpg");
  EXPECT_TRUE(Contains(r->risky[1].reason(), "undecodable"));
  fs::remove_all(base);
}

}  // namespace
}  // namespace libshard::convert

namespace libshard::convert {
namespace {

// A run with changed options that stops after a shard's new entry is written
// but before the shard itself is renamed into place (here: its index cannot
// be renamed, as a crash at that point would leave it) must not let the next
// run pair the new entry with the old shard. Records of equal size (raw
// arrays of one geometry, names of one length) make the old and new shards
// the same size, so only content tells them apart.
// Issue 23 item 9: the dry run names an image over the pixel limit (the
// conversion would reject it).
TEST(ConverterRejectTest, DryRunNamesImagesOverThePixelLimit) {
  const std::string base = MakeTempDir();
  WriteTreeFile(base + "/in", "c/small.png", PngBytes(10, 10, 3, 1));
  WriteTreeFile(base + "/in", "c/big.png", PngBytes(12, 10, 3, 2));
  ConvertOptions o = Options(base + "/in", base + "/out");
  o.encode.decode.max_pixels = 100;
  StatusOr<DryRunReport> r = DryRun(o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->risky.size(), 1u);
  EXPECT_EQ(r->risky[0].path(), "c/big.png");
  EXPECT_EQ(r->risky[0].reason(), "over the pixel limit (12x10 = 120 pixels > 100; rejected)");
}

TEST(ConverterResumeTest, StaleShardIsNotReusedWithANewEntry) {
  const std::string base = MakeTempDir();
  for (int i = 0; i < 24; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "c%d/%03d.png", i % 4, i);
    WriteTreeFile(base + "/in", name, PngBytes(16, 16, 3, i));
  }
  auto options = [&](const std::string& out, uint64_t seed) {
    ConvertOptions o = Options(base + "/in", out);
    o.encode.format = image::OutputFormat::kRaw;
    o.encode.raw.zstd_level = 0;
    o.encode.transform.mode = image::ResizeMode::kStretch;
    o.encode.transform.width = o.encode.transform.height = 8;
    o.plan.seed = seed;
    return o;
  };
  const std::string a = base + "/a", b = base + "/b";
  ASSERT_TRUE(Convert(options(a, 1)).ok());
  ASSERT_TRUE(Convert(options(b, 2)).ok());
  const std::string x = "/t-train-00001-of-00006.tfrecord";
  ASSERT_EQ(fs::file_size(a + x), fs::file_size(b + x));  // the premise
  ASSERT_NE(ReadFileOrDie(a + x), ReadFileOrDie(b + x));

  // Seed 2 over the seed-1 output, stopped after shard 1's entry is written.
  const std::string old_idx = ReadFileOrDie(a + x + ".idx");
  fs::remove(a + x + ".idx");
  WriteTreeFile(a, x.substr(1) + ".idx/blocker", "");
  StatusOr<ConvertResult> r = Convert(options(a, 2));
  ASSERT_FALSE(r.ok());
  fs::remove_all(a + x + ".idx");
  WriteFileOrDie(a + x + ".idx", old_idx);  // as a crash before the rename leaves it

  r = Convert(options(a, 2));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(ReadFileOrDie(a + x) == ReadFileOrDie(b + x)) << "stale shard reused";
  EXPECT_TRUE(ReadFileOrDie(a + x + ".idx") == ReadFileOrDie(b + x + ".idx"));
  fs::remove_all(base);
}

}  // namespace
}  // namespace libshard::convert

namespace libshard::convert {
namespace {

// Issue 16 item 1: --channels and --alpha were missing from the manifest's
// options and from plan_id, so a rerun into the same folder kept the old
// shards ("2 kept", records still RGB). Each case flips one option that
// changes output bytes: rerun into the folder of a `base` conversion, the
// result must be a fresh conversion with the option, byte for byte, and
// (where this input shows it) differ from the base shards.
struct OptionFlip {
  const char* name;
  void (*base)(ConvertOptions*);  // the context the option acts in
  void (*flip)(ConvertOptions*);
  bool changes_bytes;  // on this input (masks are not part of it)
};

void Plain(ConvertOptions*) {}
void Png(ConvertOptions* o) { o->encode.format = image::OutputFormat::kPng; }
void Raw(ConvertOptions* o) { o->encode.format = image::OutputFormat::kRaw; }
void Resized(ConvertOptions* o) {
  o->encode.transform.mode = image::ResizeMode::kLetterbox;
  o->encode.transform.width = 16;
  o->encode.transform.height = 12;
}

// A CSV over the same images (OptionFlipTest writes it beside "in", as
// "in.csv") with a --feature column: its type flips.
void Csv(ConvertOptions* o) {
  o->input += ".csv";
  o->list.features = {{"note", FeatureType::kBytes}};
}

const OptionFlip kFlips[] = {
    {"channels_gray", Plain, [](ConvertOptions* o) { o->encode.decode.channels = image::ChannelMode::kGray; }, true},
    {"channels_auto", Plain, [](ConvertOptions* o) { o->encode.decode.channels = image::ChannelMode::kAuto; }, true},
    {"alpha_keep", Png, [](ConvertOptions* o) { o->encode.decode.alpha = image::AlphaMode::kKeep; }, true},
    {"background", Plain,
     [](ConvertOptions* o) {
       o->encode.decode.background = {0, 128, 0};
     },
     true},
    {"max_pixels", Plain, [](ConvertOptions* o) { o->encode.decode.max_pixels = 200; }, true},
    {"apply_orientation", Plain, [](ConvertOptions* o) { o->encode.decode.apply_orientation = false; }, true},
    {"strict_jpeg", Plain, [](ConvertOptions* o) { o->encode.decode.strict_jpeg = true; }, false},
    {"tiff_page", Plain, [](ConvertOptions* o) { o->encode.decode.tiff_page = 1; }, false},
    {"format", Plain, Png, true},
    {"quality", Plain, [](ConvertOptions* o) { o->encode.jpeg.quality = 50; }, true},
    {"jpeg_subsampling", Plain, [](ConvertOptions* o) { o->encode.jpeg.subsampling = image::ChromaSubsampling::k444; },
     true},
    {"jpeg_progressive", Plain, [](ConvertOptions* o) { o->encode.jpeg.progressive = true; }, true},
    {"jpeg_optimize_huffman", Plain, [](ConvertOptions* o) { o->encode.jpeg.optimize_huffman = true; }, true},
    {"png_level", Png, [](ConvertOptions* o) { o->encode.png.compression_level = 0; }, true},
    {"zstd_level", Raw, [](ConvertOptions* o) { o->encode.raw.zstd_level = 0; }, true},
    {"raw_filter", Raw, [](ConvertOptions* o) { o->encode.raw.filter = image::RawFilter::kUp; }, true},
    {"reencode", Plain, [](ConvertOptions* o) { o->encode.reencode = image::ReencodeMode::kAuto; }, true},
    {"size", Resized, [](ConvertOptions* o) { o->encode.transform.width = 10; }, true},
    {"resize_mode", Resized, [](ConvertOptions* o) { o->encode.transform.mode = image::ResizeMode::kStretch; }, true},
    {"filter", Resized, [](ConvertOptions* o) { o->encode.transform.filter = image::Filter::kNearest; }, true},
    {"fill", Resized,
     [](ConvertOptions* o) {
       o->encode.transform.fill = {200, 10, 10, 255};
     },
     true},
    {"crop", Plain,
     [](ConvertOptions* o) {
       o->encode.transform.crop = image::PixelRect{1, 1, 5, 5};
     },
     true},
    {"seed", Plain, [](ConvertOptions* o) { o->plan.seed = 5; }, true},
    {"shuffle", Plain, [](ConvertOptions* o) { o->plan.shuffle = false; }, true},
    {"mask_suffix", Plain, [](ConvertOptions* o) { o->list.mask_suffix = "_L"; }, false},
    {"mask_ignore_index", Plain, [](ConvertOptions* o) { o->encode.mask_options.ignore_index = 7; }, false},
    {"unknown_color", Plain, [](ConvertOptions* o) { o->encode.mask_options.unknown = image::UnknownColor::kIgnore; },
     false},
    {"on_error", Plain, [](ConvertOptions* o) { o->fail_on_error = true; }, false},
    {"feature", Csv, [](ConvertOptions* o) { o->list.features[0].type = FeatureType::kInt; }, true},
};

class OptionFlipTest : public ::testing::TestWithParam<OptionFlip> {
 protected:
  static void SetUpTestSuite() {
    // The suite's own folder (MakeTempDir's are removed after each test),
    // removed by TearDownTestSuite.
    base_ = new std::string(
        (fs::temp_directory_path() / ("libshard_test_" + std::to_string(::getpid()) + "_OptionFlipTest")).string());
    fs::remove_all(*base_);
    fs::create_directories(*base_);
    MakeTree(*base_ + "/in");
    fs::remove(*base_ + "/in/train/b/notes.jpg");  // so that fail_on_error converts
    fs::remove(*base_ + "/in/train/stray.png");
    WriteTreeFile(*base_ + "/in", "train/c/rotated.jpg", testing::WithExifOrientation(JpegBytes(16, 8, 3, 5), 6));
    std::string csv = "path,label,split,note\n";
    int n = 0;
    for (const std::string& rel : testing::ListFilesRecursive(*base_ + "/in")) {
      const size_t slash = rel.find('/');
      csv += "in/" + rel + "," + rel.substr(slash + 1, 1) + "," + rel.substr(0, slash) + "," + std::to_string(n++ * 7) +
             "\n";
    }
    WriteFileOrDie(*base_ + "/in.csv", csv);
  }
  static void TearDownTestSuite() {
    fs::remove_all(*base_);
    delete base_;
  }
  // The shards and indices of `dir`.
  static std::map<std::string, std::string> Shards(const std::string& dir) {
    std::map<std::string, std::string> out;
    for (const auto& [k, v] : Snapshot(dir)) {
      if (k[0] != '.' && Contains(k, ".tfrecord")) out[k] = v;
    }
    return out;
  }
  static std::string* base_;
};
std::string* OptionFlipTest::base_ = nullptr;

TEST_P(OptionFlipTest, RerunWithTheOptionFlippedRewritesTheShards) {
  const OptionFlip& c = GetParam();
  const std::string dir = *base_ + "/" + c.name;
  ConvertOptions o = Options(*base_ + "/in", dir + "/rerun");
  o.encode.reencode = image::ReencodeMode::kAlways;
  c.base(&o);
  StatusOr<ConvertResult> before = Convert(o);
  ASSERT_TRUE(before.ok()) << before.status();
  const auto base_shards = Shards(o.output);

  c.flip(&o);
  StatusOr<ConvertResult> after = Convert(o);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->shards_reused, 0u);
  EXPECT_NE(after->manifest.plan_id(), before->manifest.plan_id());
  EXPECT_NE(after->manifest.options().SerializeAsString(), before->manifest.options().SerializeAsString());
  ConvertOptions fresh = o;
  fresh.output = dir + "/fresh";
  StatusOr<ConvertResult> want = Convert(fresh);
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ(testing::CountDifferences(Shards(fresh.output), Shards(o.output)), 0);
  EXPECT_EQ(after->manifest.plan_id(), want->manifest.plan_id());
  if (c.changes_bytes) {
    EXPECT_NE(Shards(o.output), base_shards);
  }
  // And a second rerun with the same options keeps everything.
  StatusOr<ConvertResult> again = Convert(o);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->shards_written, 0u);
}

INSTANTIATE_TEST_SUITE_P(EveryOutputOption, OptionFlipTest, ::testing::ValuesIn(kFlips),
                         [](const ::testing::TestParamInfo<OptionFlip>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace libshard::convert

// remote/object_input.h: `shard convert s3://bkt/raw/` converts the objects
// under the prefix to the shards of a local copy, byte for byte; a key a
// lying LIST adds that is no plain relative path ("..", "//", ".") is a
// reject naming it and is never read, and one outside the prefix fails the
// listing; a GET that fails once is retried, one that keeps failing rejects
// its sample (redone by the next run, which then equals the local copy); an
// empty prefix and a URL that cannot be listed are refused. Against s3rver
// behind the fault proxy.
#include "libshard/remote/object_input.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "convert/fixtures.h"
#include "libshard/convert/merge.h"
#include "libshard/manifest/manifest_json.h"
#include "libshard/store/http_transport.h"
#include "libshard/store/s3_store.h"
#include "remote/remote_fixtures.h"
#include "testutil.h"

namespace libshard {
namespace {

namespace fs = std::filesystem;
using testing::Contains;
using testing::ReadFileOrDie;

class ObjectInputTest : public testing::S3ProxyTest {
 protected:
  void SetUp() override {
    S3ProxyTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    testing::WriteSplitClassTree(dir_ + "/raw");
    testing::WriteFileOrDie(dir_ + "/raw/train/a/.DS_Store", "hidden");  // skipped, as a hidden file is
    testing::WriteFileOrDie(dir_ + "/raw/notes.txt", "not an image");     // skipped: not an image type
    // Every file of the tree as an object under raw/, and a folder marker.
    const store::StoreConfig c = s3_->Config();
    std::unique_ptr<store::ObjectStore> s = store::NewS3Store(c, "bkt", store::NewCurlTransport(c));
    for (const auto& e : fs::recursive_directory_iterator(dir_ + "/raw")) {
      if (!e.is_regular_file()) continue;
      const std::string rel = fs::relative(e.path(), dir_ + "/raw").string();
      ASSERT_TRUE(s->PutFile("raw/" + rel, e.path().string()).ok());
    }
    ASSERT_TRUE(s->Put("raw/train/", "").ok());
    ReadThroughProxy();
  }
  void TearDown() override {
    ::unsetenv("AWS_ENDPOINT_URL");
    ::unsetenv("AWS_ACCESS_KEY_ID");
    ::unsetenv("AWS_SECRET_ACCESS_KEY");
  }
  convert::ConvertOptions Options(const std::string& input, const std::string& out) const {
    convert::ConvertOptions o;
    o.input = input;
    o.output = out;
    o.plan.records_per_shard = 3;
    o.plan.seed = 3;
    o.sync = false;
    o.threads = 2;
    return o;
  }
  StatusOr<convert::ConvertResult> FromBucket(const std::string& out) const {
    convert::ConvertOptions o = Options("s3://bkt/raw/", out);
    Status st = remote::UseObjectInput(&o);
    if (!st.ok()) return st;
    return convert::Convert(o);
  }
  std::map<std::string, std::string> Shards(const std::string& dir) const {
    std::map<std::string, std::string> out;
    for (const auto& [k, v] : testing::SnapshotDir(dir)) {
      if (k.find(".tfrecord") != std::string::npos && k[0] != '.') out[k] = v;
    }
    return out;
  }
  // The local copy's conversion: what the bucket's must equal.
  std::map<std::string, std::string> Local() {
    StatusOr<convert::ConvertResult> r = convert::Convert(Options(dir_ + "/raw", dir_ + "/local"));
    EXPECT_TRUE(r.ok()) << r.status();
    return Shards(dir_ + "/local");
  }
};

TEST_F(ObjectInputTest, ABucketConvertsToTheShardsOfItsLocalCopy) {
  if (IsSkipped()) return;
  const auto want = Local();
  ASSERT_GT(want.size(), 10u);
  StatusOr<convert::ConvertResult> r = FromBucket(dir_ + "/out");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(testing::CountDifferences(want, Shards(dir_ + "/out")), 0);
  EXPECT_EQ(ReadFileOrDie(dir_ + "/out/rejects.tsv"), ReadFileOrDie(dir_ + "/local/rejects.tsv"));
  EXPECT_EQ(r->manifest.options().prefix(), "raw");
  EXPECT_EQ(r->layout, "layout split/class: split train 18 samples in 3 classes, split val 6 samples in 3 classes");
  ASSERT_EQ(r->manifest.labels_size(), 3);
  EXPECT_EQ(r->skipped.non_image.at(".txt"), 1u);
  EXPECT_EQ(proxy_->Count("GET"), 24 + 1);  // each object once, and the LIST
  // A rerun keeps every shard and reads no object.
  proxy_->Reset();
  r = FromBucket(dir_ + "/out");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shards_written, 0u);
  EXPECT_EQ(proxy_->Count("GET"), 1);  // the LIST
  // The program: the same shards.
  testing::CommandResult cli = testing::RunShard("convert -q s3://bkt/raw/ -o " + dir_ +
                                                 "/cli --records-per-shard 3 --seed 3 --no-sync");
  EXPECT_EQ(cli.exit_code, 3) << cli.err;  // readme.png rejected, the rest converted
  EXPECT_EQ(testing::CountDifferences(want, Shards(dir_ + "/cli")), 0);
  // The dry run lists and probes the objects, and writes nothing.
  testing::CommandResult dry = testing::RunShard("convert --dry-run s3://bkt/raw/ -o " + dir_ + "/dry");
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_TRUE(Contains(dry.out, "split train 18 samples in 3 classes")) << dry.out;
  EXPECT_FALSE(fs::exists(dir_ + "/dry/manifest.json"));
}

TEST_F(ObjectInputTest, TasksOverABucketPlusTheMergeGiveTheLocalCopysShards) {
  if (IsSkipped()) return;
  const auto want = Local();
  for (uint32_t i = 0; i < 3; ++i) {
    convert::ConvertOptions o = Options("s3://bkt/raw/", dir_ + "/tasks");
    o.num_tasks = 3;
    o.task_index = 2 - i;  // any order
    ASSERT_TRUE(remote::UseObjectInput(&o).ok());
    StatusOr<convert::ConvertResult> r = convert::Convert(o);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  StatusOr<convert::MergeResult> m = convert::MergeTasks(dir_ + "/tasks");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(m->problems.empty()) << m->problems[0];
  EXPECT_EQ(testing::CountDifferences(want, Shards(dir_ + "/tasks")), 0);
  EXPECT_EQ(proxy_->Count("GET"), 24 + 3);  // each object once (by the task that writes its shard), a LIST a task
}

TEST_F(ObjectInputTest, ACsvInABucketNamesKeysBesideIt) {
  if (IsSkipped()) return;
  std::string csv = "path,label,split\n";
  for (int k = 0; k < 23; k += 2) {  // the JPEGs, by class name
    const std::string cls = k % 3 == 0 ? "a" : k % 3 == 1 ? "b" : "c";
    const std::string split = k % 4 == 0 ? "val" : "train";
    csv += split + "/" + cls + "/img" + std::to_string(k) + ".jpg," + cls + "," + split + "\n";
  }
  const std::string good = csv;
  csv += "../escape.png,a,train\nmissing.png,b,train\n";
  testing::WriteFileOrDie(dir_ + "/raw/labels.csv", good);  // the local copy, without the two bad rows
  StatusOr<convert::ConvertResult> local = convert::Convert(Options(dir_ + "/raw/labels.csv", dir_ + "/local"));
  ASSERT_TRUE(local.ok()) << local.status();
  const store::StoreConfig c = s3_->Config();
  std::unique_ptr<store::ObjectStore> s = store::NewS3Store(c, "bkt", store::NewCurlTransport(c));
  ASSERT_TRUE(s->Put("raw/labels.csv", csv).ok());
  convert::ConvertOptions o = Options("s3://bkt/raw/labels.csv", dir_ + "/out");
  ASSERT_TRUE(remote::UseObjectInput(&o).ok());
  StatusOr<convert::ConvertResult> r = convert::Convert(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(testing::CountDifferences(Shards(dir_ + "/local"), Shards(dir_ + "/out")), 0);
  EXPECT_EQ(r->manifest.stats().converted(), local->manifest.stats().converted());
  const std::string rejects = ReadFileOrDie(dir_ + "/out/rejects.tsv");
  EXPECT_TRUE(Contains(rejects, "s3://bkt/raw/labels.csv:14: is not a key below s3://bkt/raw/")) << rejects;
  EXPECT_TRUE(Contains(rejects, "s3://bkt/raw/labels.csv:15: no such object s3://bkt/raw/missing.png")) << rejects;
  // A mask column: refused before anything is written.
  ASSERT_TRUE(s->Put("raw/masks.csv", "path,label,mask\ntrain/a/img0.jpg,a,m.png\n").ok());
  convert::ConvertOptions m = Options("s3://bkt/raw/masks.csv", dir_ + "/masks");
  ASSERT_TRUE(remote::UseObjectInput(&m).ok());
  r = convert::Convert(m);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(r.status().message(), "s3://bkt/raw/masks.csv:1: a 'mask' column: masks are read from"))
      << r.status();
}

TEST_F(ObjectInputTest, AKeyALyingListPutsOutsideThePrefixIsARejectAndNeverRead) {
  if (IsSkipped()) return;
  const auto want = Local();
  int run = 0;
  for (const char* key : {"raw/../escape.png", "raw/a//b.png", "raw/c/./dot.png"}) {
    SCOPED_TRACE(key);
    proxy_->Reset();
    proxy_->AddListedKey(key);
    const std::string out = dir_ + "/out" + std::to_string(run++);
    StatusOr<convert::ConvertResult> r = FromBucket(out);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(testing::CountDifferences(want, Shards(out)), 0);
    const std::string rejects = ReadFileOrDie(out + "/rejects.tsv");
    EXPECT_TRUE(Contains(rejects, std::string(key) + "\t")) << rejects;
    EXPECT_EQ(proxy_->Count("GET"), 24 + 1);  // it was not fetched
  }
  // A key not under the prefix at all: the store refuses the whole answer,
  // and nothing is written.
  proxy_->AddListedKey("elsewhere/x.png");
  StatusOr<convert::ConvertResult> r = FromBucket(dir_ + "/outside");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(r.status().message(), "LIST s3://bkt/raw/: the server listed 'elsewhere/x.png', which is outside the prefix");
  EXPECT_FALSE(fs::exists(dir_ + "/outside/manifest.json"));
}

TEST_F(ObjectInputTest, AGetThatFailsIsRetriedAndOneThatKeepsFailingIsRedoneByTheNextRun) {
  if (IsSkipped()) return;
  const auto want = Local();
  proxy_->Fault("error500", "GET", "img5.png", 1);
  proxy_->Fault("cut", "GET", "img6.jpg", 1);
  StatusOr<convert::ConvertResult> r = FromBucket(dir_ + "/out");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(testing::CountDifferences(want, Shards(dir_ + "/out")), 0);
  // A server that keeps failing one object: that sample is a reject naming
  // its URL, not caused by the file; the next run redoes its shard.
  fs::remove_all(dir_ + "/out");
  proxy_->Fault("error500", "GET", "img9.png", 1000);
  r = FromBucket(dir_ + "/out");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->transient_rejects, 1u);
  EXPECT_TRUE(Contains(ReadFileOrDie(dir_ + "/out/rejects.tsv"), "s3://bkt/raw/train/a/img9.png"));
  proxy_->Reset();
  r = FromBucket(dir_ + "/out");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shards_written, 1u);
  EXPECT_EQ(testing::CountDifferences(want, Shards(dir_ + "/out")), 0);
}

TEST_F(ObjectInputTest, AnObjectChangedBetweenTheListAndItsGetIsARejectNamingIt) {
  if (IsSkipped()) return;
  const store::StoreConfig c = s3_->Config();
  std::unique_ptr<store::ObjectStore> s = store::NewS3Store(c, "bkt", store::NewCurlTransport(c));
  convert::ConvertOptions o = Options("s3://bkt/raw/", dir_ + "/out");
  ASSERT_TRUE(remote::UseObjectInput(&o).ok());
  // Once listed, before any GET: one object grows, another shrinks.
  o.on_listed = [&](const convert::ConvertResult&) {
    ASSERT_TRUE(s->Put("raw/val/a/img0.jpg", ReadFileOrDie(dir_ + "/raw/val/a/img0.jpg") + "more").ok());
    ASSERT_TRUE(s->Put("raw/train/b/img1.png", "short").ok());
  };
  StatusOr<convert::ConvertResult> r = convert::Convert(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->transient_rejects, 2u);  // the next run lists again and converts what is there then
  const std::string rejects = ReadFileOrDie(dir_ + "/out/rejects.tsv");
  EXPECT_TRUE(Contains(rejects, "s3://bkt/raw/val/a/img0.jpg: larger than the " +
                                    std::to_string(fs::file_size(dir_ + "/raw/val/a/img0.jpg")) +
                                    " bytes the listing gave (changed since it was listed)"))
      << rejects;
  EXPECT_TRUE(Contains(rejects, "s3://bkt/raw/train/b/img1.png: 5 bytes, the listing gave " +
                                    std::to_string(fs::file_size(dir_ + "/raw/train/b/img1.png")) +
                                    " (changed since it was listed, or a short answer)"))
      << rejects;
}

TEST_F(ObjectInputTest, AnEmptyPrefixAndAUrlThatCannotBeListedAreRefused) {
  if (IsSkipped()) return;
  StatusOr<convert::ConvertResult> r = [&] {
    convert::ConvertOptions o = Options("s3://bkt/nothing-here/", dir_ + "/out");
    EXPECT_TRUE(remote::UseObjectInput(&o).ok());
    return convert::Convert(o);
  }();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(r.status().message(), "s3://bkt/nothing-here/: no object under this prefix")) << r.status();
  convert::ConvertOptions o = Options("https://example.com/raw/", dir_ + "/out");
  EXPECT_EQ(remote::UseObjectInput(&o).code(), StatusCode::kInvalidArgument);
  testing::CommandResult cli = testing::RunShard("convert -q https://example.com/raw/ -o " + dir_ + "/cli");
  EXPECT_EQ(cli.exit_code, 2) << cli.err;
}

}  // namespace
}  // namespace libshard

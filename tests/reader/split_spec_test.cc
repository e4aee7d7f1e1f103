// The split string: TFDS's slicing syntax, its rounding, its errors, and
// the samples a sliced split gives a Dataset.
#include "libshard/reader/split_spec.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "libshard/reader/dataset.h"
#include "reader_fixtures.h"
#include "testutil.h"

namespace libshard::reader {
namespace {

// [begin, end) of `text` over n samples, or the error text.
std::string Range(const std::string& text, uint64_t n) {
  auto spec = ParseSplitSpec(text);
  if (!spec.ok()) return spec.status().ToString();
  auto r = ResolveSlice(*spec, n);
  if (!r.ok()) return r.status().ToString();
  return std::to_string(r->begin) + ":" + std::to_string(r->end);
}

TEST(SplitSpecTest, NamesWithoutASliceTakeTheWholeSplit) {
  for (const std::string text : {"", "*", "train", "test_set", "val-2"}) {
    auto spec = ParseSplitSpec(text);
    ASSERT_TRUE(spec.ok()) << spec.status();
    EXPECT_EQ(spec->name, text);
    EXPECT_FALSE(spec->sliced);
    EXPECT_EQ(Range(text, 7), "0:7");
  }
  EXPECT_EQ(Range("train", 0), "0:0");  // an empty split stays what it is
  auto spec = ParseSplitSpec("train[10%:]");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name, "train");
  EXPECT_TRUE(spec->sliced);
  EXPECT_EQ(ParseSplitSpec("[:3]")->name, "");
  EXPECT_EQ(ParseSplitSpec("*[:3]")->name, "*");
}

TEST(SplitSpecTest, AbsoluteSlicesArePythonSlices) {
  EXPECT_EQ(Range("val[:500]", 1000), "0:500");
  EXPECT_EQ(Range("train[100:200]", 1000), "100:200");
  EXPECT_EQ(Range("train[100:]", 1000), "100:1000");
  EXPECT_EQ(Range("train[-100:]", 1000), "900:1000");
  EXPECT_EQ(Range("train[:-1]", 1000), "0:999");
  EXPECT_EQ(Range("train[-3:-1]", 10), "7:9");
  EXPECT_EQ(Range("train[:]", 10), "0:10");
  EXPECT_EQ(Range("train[0:10]", 10), "0:10");
}

// Boundaries as TFDS's "closest" rounding: int(round(p * n / 100.0)),
// Python's round (halves to even); the values are Python's.
TEST(SplitSpecTest, PercentBoundariesRoundAsTfds) {
  EXPECT_EQ(Range("train[:10%]", 10), "0:1");
  EXPECT_EQ(Range("train[10%:]", 10), "1:10");
  EXPECT_EQ(Range("train[:10%]", 25), "0:2");     // 2.5 -> 2
  EXPECT_EQ(Range("train[:30%]", 25), "0:8");     // 7.5 -> 8
  EXPECT_EQ(Range("train[-10%:]", 25), "23:25");  // -2.5 -> -2
  EXPECT_EQ(Range("train[:12.5%]", 8), "0:1");
  EXPECT_EQ(Range("train[50%:]", 5), "2:5");  // 2.5 -> 2
  EXPECT_EQ(Range("train[:50%]", 7), "0:4");  // 3.5 -> 4
  EXPECT_EQ(Range("train[33%:66.6%]", 3), "1:2");
  EXPECT_EQ(Range("train[25%:75%]", 1000), "250:750");
  EXPECT_EQ(Range("train[-0.5%:]", 100), "0:100");  // -0.5 -> -0
  EXPECT_EQ(Range("train[:100%]", 3), "0:3");
  EXPECT_EQ(Range("train[-100%:]", 3), "0:3");
  // The two halves of a split are disjoint and cover it, whatever n.
  for (uint64_t n : {2u, 3u, 7u, 99u, 101u, 1001u}) {
    const std::string a = Range("train[:37%]", n), b = Range("train[37%:]", n);
    EXPECT_EQ(a.substr(a.find(':') + 1), b.substr(0, b.find(':'))) << n;
  }
}

TEST(SplitSpecTest, BadSyntaxIsRefusedNamingTheSplitString) {
  const std::string forms =
      ": expected NAME or NAME[FROM:TO], FROM and TO both sample numbers or both percentages, each optional "
      "(\"train[:10%]\", \"train[10%:]\", \"val[:500]\", \"train[100:200]\")";
  const std::pair<std::string, std::string> cases[] = {
      {"train[", "split \"train[\": no closing ]" + forms},
      {"train[:10%", "split \"train[:10%\": no closing ]" + forms},
      {"train[:10]x", "split \"train[:10]x\": text after the closing ]" + forms},
      {"train[5]", "split \"train[5]\": one index; a slice is [FROM:TO]" + forms},
      {"train[1:2:3]", "split \"train[1:2:3]\": a step; a slice is [FROM:TO]" + forms},
      {"train[a:b]", "split \"train[a:b]\": \"a\" is neither a sample number nor a percentage" + forms},
      {"train[1.5:]", "split \"train[1.5:]\": \"1.5\" is neither a sample number nor a percentage" + forms},
      {"train[%:]", "split \"train[%:]\": \"%\" is neither a sample number nor a percentage" + forms},
      {"train[10%:500]", "split \"train[10%:500]\": FROM and TO mix a percentage and a sample number" + forms},
      {"train[:4shard]",
       "split \"train[:4shard]\": \"4shard\" is neither a sample number nor a percentage (shard slices are "
       "not supported)" +
           forms},
      {"train[:150%]", "split \"train[:150%]\": 150% is outside -100%..100%" + forms},
      {"train[ :10]", "split \"train[ :10]\": \" \" is neither a sample number nor a percentage" + forms},
      {"train+val", "split \"train+val\": unions of splits (+) are not supported; open one split at a time"},
      {"train[:5]+val", "split \"train[:5]+val\": unions of splits (+) are not supported; open one split at a time"},
      {"train]", "split \"train]\": ] without [" + forms},
      {"train[:99999999999999999999]",
       "split \"train[:99999999999999999999]\": \"99999999999999999999\" is neither a sample number nor a "
       "percentage" +
           forms},
  };
  for (const auto& [text, message] : cases) {
    auto spec = ParseSplitSpec(text);
    ASSERT_FALSE(spec.ok()) << text;
    EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_EQ(spec.status().message(), message) << text;
  }
}

TEST(SplitSpecTest, BoundariesBeyondTheSplitAndEmptySlicesAreRefused) {
  EXPECT_EQ(Range("val[:500]", 300),
            "INVALID_ARGUMENT: split \"val[:500]\": sample 500 is beyond the split's 300 samples");
  EXPECT_EQ(Range("val[-301:]", 300),
            "INVALID_ARGUMENT: split \"val[-301:]\": sample -301 is beyond the split's 300 samples");
  EXPECT_EQ(Range("train[200:100]", 300),
            "INVALID_ARGUMENT: split \"train[200:100]\": selects no sample of the split's 300 (samples 200..100)");
  EXPECT_EQ(Range("train[:1%]", 20),
            "INVALID_ARGUMENT: split \"train[:1%]\": selects no sample of the split's 20 (samples 0..0)");
  EXPECT_EQ(Range("train[:5]", 0), "INVALID_ARGUMENT: split \"train[:5]\": sample 5 is beyond the split's 0 samples");
}

// Any text over the syntax's alphabet: a clear error, or a non-empty range
// inside the split (no wrap-around of a huge negative, no overflow).
TEST(SplitSpecTest, AnyStringIsARangeInsideTheSplitOrAnErrorNamingIt) {
  const std::string alphabet = "tr[]:%-.019+ ";
  std::mt19937_64 rng(7);
  int ok = 0;
  for (int i = 0; i < 200000; ++i) {
    std::string text = i % 2 ? "t[" : "";
    for (size_t len = rng() % 12; len > 0; --len) text += alphabet[rng() % alphabet.size()];
    if (i % 3 == 0) text += "]";
    if (i % 5 == 0) text = "t[-9223372036854775808:" + std::to_string(rng() % 20) + "]";
    auto spec = ParseSplitSpec(text);
    if (!spec.ok()) {
      EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument) << text;
      EXPECT_EQ(spec.status().message().rfind("split \"" + text + "\": ", 0), 0u) << text;
      continue;
    }
    for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{7}, uint64_t{100}, ~uint64_t{0}}) {
      auto r = ResolveSlice(*spec, n);
      if (!r.ok()) {
        EXPECT_EQ(r.status().message().rfind("split \"" + text + "\": ", 0), 0u) << text;
        continue;
      }
      ++ok;
      EXPECT_LE(r->end, n) << text;
      if (spec->sliced) {
        EXPECT_LT(r->begin, r->end) << text;
      }
    }
  }
  EXPECT_GT(ok, 1000);
}

// A manifest of split train (shards of 2 and 3 records) and val (1).
std::string TwoSplits() {
  return R"({"format": "libshard.manifest/1", "complete": true,
  "splits": [
   {"name": "train", "records": "5", "shards": [
     {"file": "train-00000-of-00002.tfrecord", "records": "2"},
     {"file": "train-00001-of-00002.tfrecord", "records": "3"}]},
   {"name": "val", "records": "1", "shards": [{"file": "val-00000-of-00001.tfrecord", "records": "1"}]}]})";
}

class SplitSliceDatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir();
    a_ = testing::WritePlainShard(dir_ + "/train-00000-of-00002.tfrecord", 2);
    b_ = testing::WritePlainShard(dir_ + "/train-00001-of-00002.tfrecord", 3);
    v_ = testing::WritePlainShard(dir_ + "/val-00000-of-00001.tfrecord", 1);
    testing::WriteFileOrDie(dir_ + "/manifest.json", TwoSplits());
  }
  // The records of `split`, in sample order, or the error.
  std::vector<std::string> Records(const std::string& split, size_t* shards = nullptr) {
    DatasetOptions o;
    o.split = split;
    auto ds = Dataset::Open({dir_}, o);
    if (!ds.ok()) return {ds.status().ToString()};
    std::vector<std::string> out;
    RecordBuffer buf;
    std::string_view v;
    for (uint64_t i = 0; i < (*ds)->size(); ++i) {
      EXPECT_TRUE((*ds)->ReadRecord(i, &buf, &v).ok());
      out.emplace_back(v);
    }
    if (shards != nullptr) *shards = (*ds)->num_shards();
    return out;
  }
  std::string dir_;
  std::vector<std::string> a_, b_, v_;
};

TEST_F(SplitSliceDatasetTest, ASliceIsThoseSamplesOfTheSplitInManifestOrder) {
  size_t shards = 0;
  EXPECT_EQ(Records("train[1:4]", &shards), (std::vector<std::string>{a_[1], b_[0], b_[1]}));
  EXPECT_EQ(shards, 2u);
  // Shards the slice does not reach are not opened.
  EXPECT_EQ(Records("train[2:]", &shards), (std::vector<std::string>{b_[0], b_[1], b_[2]}));
  EXPECT_EQ(shards, 1u);
  EXPECT_EQ(Records("train[:40%]", &shards), (std::vector<std::string>{a_[0], a_[1]}));
  EXPECT_EQ(shards, 1u);
  EXPECT_EQ(Records("train[-20%:]"), (std::vector<std::string>{b_[2]}));
  EXPECT_EQ(Records("*[4:]"), (std::vector<std::string>{b_[2], v_[0]}));
  EXPECT_EQ(Records("val[:1]"), (std::vector<std::string>{v_[0]}));
  EXPECT_EQ(Records("train"), (std::vector<std::string>{a_[0], a_[1], b_[0], b_[1], b_[2]}));
}

TEST_F(SplitSliceDatasetTest, ErrorsNameTheManifestAndTheSplitString) {
  EXPECT_EQ(Records("train[:6]"),
            std::vector<std::string>{"INVALID_ARGUMENT: " + dir_ +
                                     "/manifest.json: split \"train[:6]\": sample 6 is beyond the split's 5 samples"});
  EXPECT_EQ(Records("test[:10%]"), std::vector<std::string>{"INVALID_ARGUMENT: " + dir_ +
                                                            "/manifest.json: no split named \"test\" (the manifest "
                                                            "has train, val)"});
  EXPECT_EQ(Records("[:10%]"), std::vector<std::string>{"INVALID_ARGUMENT: " + dir_ +
                                                        "/manifest.json: the manifest has splits train, val; pick one "
                                                        "(split=NAME, or \"*\" for all)"});
  const std::vector<std::string> bad = Records("train[5]");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].rfind("INVALID_ARGUMENT: split \"train[5]\": one index", 0), 0u) << bad[0];
}

// A saved position names its dataset: two slices of one shard with as many
// samples are different datasets; an unsliced split keeps its identity.
TEST_F(SplitSliceDatasetTest, TheIdentityTellsSlicesApart) {
  auto open = [&](const std::string& split) {
    DatasetOptions o;
    o.split = split;
    auto ds = Dataset::Open({dir_}, o);
    EXPECT_TRUE(ds.ok()) << ds.status();
    return (*ds)->Identity();
  };
  EXPECT_NE(open("train[2:3]"), open("train[3:4]"));
  EXPECT_NE(open("train[2:5]"), open("train[:2]"));
  EXPECT_EQ(open("train"), open("train[:]"));
  EXPECT_EQ(open("train"), open("train[0:5]"));
}

}  // namespace
}  // namespace libshard::reader

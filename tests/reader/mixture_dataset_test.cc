// Dataset::OpenMixture, mixture.json sources and a mixture through BatchLoader.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "libshard/reader/batch_loader.h"
#include "libshard/reader/dataset.h"
#include "reader_fixtures.h"
#include "testutil.h"

namespace libshard::reader {
namespace {

// A converted folder: one shard of `n` 8x8 PNG records labelled 0..n-1 and a
// manifest naming them `names` (label i is names[i]).
std::string MakeDataset(const std::string& dir, int n, const std::vector<std::string>& names) {
  std::filesystem::create_directories(dir);
  testing::FixtureOptions fo;
  fo.width = fo.height = 8;
  fo.format = "png";
  testing::WriteImageShard(dir + "/train-00000-of-00001.tfrecord", n, 0, fo);
  std::string labels;
  for (size_t i = 0; i < names.size(); ++i) {
    labels += std::string(i ? ", " : "") + R"({"label": ")" + std::to_string(i) + R"(", "name": ")" + names[i] + "\"}";
  }
  testing::WriteFileOrDie(dir + "/manifest.json",
                          R"({"format": "libshard.manifest/1", "complete": true, "labels": [)" + labels +
                              R"(], "splits": [{"name": "train", "records": ")" + std::to_string(n) +
                              R"(", "shards": [{"file": "train-00000-of-00001.tfrecord", "records": ")" +
                              std::to_string(n) + R"("}]}]})");
  return dir;
}

std::vector<std::string> Names(int n) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back("class" + std::to_string(i));
  return v;
}

BatchLoaderOptions SmallBatches(size_t batch_size) {
  BatchLoaderOptions o;
  o.batch_size = batch_size;
  o.height = o.width = 8;
  o.threads = 2;
  o.order.kind = OrderKind::kShuffle;
  o.order.seed = 4;
  o.extras = {kSourceExtra};
  return o;
}

TEST(MixtureDatasetTest, NumbersTheSourcesOneAfterTheOther) {
  const std::string dir = testing::MakeTempDir();
  const std::string a = MakeDataset(dir + "/a", 12, Names(12)), b = MakeDataset(dir + "/b", 5, Names(12));
  MixtureOptions mix;
  mix.weights = {0.5, 0.5};
  auto ds = Dataset::OpenMixture({{a}, {b}}, mix);
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_EQ((*ds)->size(), 17u);
  ASSERT_NE((*ds)->mixture(), nullptr);
  EXPECT_EQ((*ds)->mixture()->sizes(), (std::vector<uint64_t>{12, 5}));
  EXPECT_EQ((*ds)->mixture()->epoch_length(), 17u);
  EXPECT_EQ((*ds)->SourceOf(11), 0);
  EXPECT_EQ((*ds)->SourceOf(12), 1);
  EXPECT_EQ((*ds)->mixture_names(), (std::vector<std::string>{a, b}));
  EXPECT_EQ((*ds)->labels().size(), 12u);  // the same map in both
  auto plain = Dataset::Open({a, b});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*plain)->mixture(), nullptr);
  EXPECT_EQ((*plain)->SourceOf(3), -1);
}

TEST(MixtureDatasetTest, LoaderFollowsTheMixtureAndSaysEachSamplesSource) {
  const std::string dir = testing::MakeTempDir();
  const std::string a = MakeDataset(dir + "/a", 30, Names(30)), b = MakeDataset(dir + "/b", 6, Names(30));
  MixtureOptions mix;
  mix.weights = {0.5, 0.5};
  mix.samples_per_epoch = 40;  // b (6 samples) gives 20: upsampled to a bit over three passes
  std::shared_ptr<const Dataset> ds = *Dataset::OpenMixture({{a}, {b}}, mix);
  auto loader = BatchLoader::Create(ds, SmallBatches(8));
  ASSERT_TRUE(loader.ok()) << loader.status();
  EXPECT_EQ((*loader)->batches_per_epoch(), 5u);
  const std::vector<uint64_t> order = ds->mixture()->GlobalOrder(0, (*loader)->options().order);
  std::map<int64_t, int> per_source;
  for (uint64_t i = 0; i < 5; ++i) {
    Batch batch;
    ASSERT_TRUE((*loader)->Next(&batch).ok());
    ASSERT_EQ(batch.size, 8u);
    const std::vector<uint64_t> samples = (*loader)->BatchSamples(batch.position);
    for (size_t k = 0; k < batch.size; ++k) {
      EXPECT_EQ(samples[k], order[i * 8 + k]);
      ASSERT_EQ(batch.extras[k][0].ints.size(), 1u);
      const int64_t source = batch.extras[k][0].ints[0];
      EXPECT_EQ(source, samples[k] < 30 ? 0 : 1);
      EXPECT_EQ(batch.labels[k], static_cast<int64_t>(samples[k] - (source == 0 ? 0 : 30)));
      ++per_source[source];
    }
  }
  EXPECT_EQ(per_source[0], 20);
  EXPECT_EQ(per_source[1], 20);
}

TEST(MixtureDatasetTest, ResumesExactlyFromAPosition) {
  const std::string dir = testing::MakeTempDir();
  const std::string a = MakeDataset(dir + "/a", 25, Names(25)), b = MakeDataset(dir + "/b", 7, Names(25)),
                    c = MakeDataset(dir + "/c", 3, Names(25));
  MixtureOptions mix;
  mix.weights = {0.6, 0.3, 0.1};
  std::shared_ptr<const Dataset> ds = *Dataset::OpenMixture({{a}, {b}, {c}}, mix);
  auto first = BatchLoader::Create(ds, SmallBatches(4));
  ASSERT_TRUE(first.ok()) << first.status();
  // Run into the second epoch, remembering every batch's samples and labels.
  std::vector<std::pair<std::vector<uint64_t>, std::vector<int64_t>>> seen;
  Position saved;
  for (int i = 0; i < 13; ++i) {
    if (i == 6) saved = (*first)->position();
    Batch batch;
    ASSERT_TRUE((*first)->Next(&batch).ok());
    seen.emplace_back((*first)->BatchSamples(batch.position),
                      std::vector<int64_t>(batch.labels, batch.labels + batch.size));
  }
  auto second = BatchLoader::Create(*Dataset::OpenMixture({{a}, {b}, {c}}, mix), SmallBatches(4));
  ASSERT_TRUE(second.ok());
  ASSERT_TRUE((*second)->Seek(saved).ok());
  for (int i = 6; i < 13; ++i) {
    Batch batch;
    ASSERT_TRUE((*second)->Next(&batch).ok());
    EXPECT_EQ((*second)->BatchSamples(batch.position), seen[i].first) << "batch " << i;
    EXPECT_EQ(std::vector<int64_t>(batch.labels, batch.labels + batch.size), seen[i].second) << "batch " << i;
  }
}

TEST(MixtureDatasetTest, DifferentLabelMapsAreAnErrorUnlessMergedOrKept) {
  const std::string dir = testing::MakeTempDir();
  const std::string a = MakeDataset(dir + "/a", 2, {"cat", "dog"}), b = MakeDataset(dir + "/b", 2, {"dog", "emu"});
  MixtureOptions mix;
  mix.weights = {1, 1};
  auto error = Dataset::OpenMixture({{a}, {b}}, mix);
  ASSERT_EQ(error.status().code(), StatusCode::kInvalidArgument);
  const std::string message(error.status().message());
  EXPECT_NE(message.find("source 0 (" + a + ") and source 1 (" + b + ")"), std::string::npos) << message;
  EXPECT_NE(message.find("label 0 is \"cat\" in source 0"), std::string::npos) << message;
  EXPECT_NE(message.find("\"emu\" only in source 1"), std::string::npos) << message;
  EXPECT_NE(message.find("label_maps"), std::string::npos) << message;

  mix.label_maps = LabelMaps::kMerge;
  auto merged = Dataset::OpenMixture({{a}, {b}}, mix);
  ASSERT_TRUE(merged.ok()) << merged.status();
  ASSERT_EQ((*merged)->labels().size(), 3u);
  EXPECT_EQ((*merged)->labels()[2].name, "emu");
  EXPECT_EQ((*merged)->MapLabel(0, 0), 0);   // a's cat
  EXPECT_EQ((*merged)->MapLabel(1, 1), 1);   // a's dog
  EXPECT_EQ((*merged)->MapLabel(2, 0), 1);   // b's dog
  EXPECT_EQ((*merged)->MapLabel(3, 1), 2);   // b's emu
  EXPECT_EQ((*merged)->MapLabel(3, 7), -1);  // not in b's map
  // The decoded batches carry the merged labels.
  BatchLoaderOptions o = SmallBatches(4);
  o.order.kind = OrderKind::kSequential;
  std::shared_ptr<const Dataset> shared = std::move(*merged);
  auto loader = BatchLoader::Create(shared, o);
  ASSERT_TRUE(loader.ok());
  Batch batch;
  ASSERT_TRUE((*loader)->Next(&batch).ok());
  const std::vector<uint64_t> samples = (*loader)->BatchSamples(batch.position);
  const int64_t want[4] = {0, 1, 1, 2};  // samples 0, 1 (a), 2, 3 (b)
  for (size_t k = 0; k < batch.size; ++k) EXPECT_EQ(batch.labels[k], want[samples[k]]) << k;

  mix.label_maps = LabelMaps::kKeep;
  auto kept = Dataset::OpenMixture({{a}, {b}}, mix);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_TRUE((*kept)->labels().empty());
  EXPECT_EQ((*kept)->MapLabel(3, 1), 1);
  EXPECT_EQ(ParseLabelMaps("merge").value(), LabelMaps::kMerge);
  EXPECT_EQ(ParseLabelMaps("mix").status().code(), StatusCode::kInvalidArgument);
}

TEST(MixtureDatasetTest, MixtureFileOpensLikeOpenMixture) {
  const std::string dir = testing::MakeTempDir();
  MakeDataset(dir + "/a", 10, Names(10));
  MakeDataset(dir + "/b", 4, Names(10));
  testing::WriteFileOrDie(dir + "/mix.json", R"({"format": "libshard.mixture/1", "samples_per_epoch": "20",
    "sources": [{"path": "a", "weight": 0.75}, {"path": ")" +
                                                 dir + R"(/b", "weight": 0.25}]})");
  auto from_file = Dataset::Open({dir + "/mix.json"});
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  MixtureOptions mix;
  mix.weights = {3, 1};
  mix.samples_per_epoch = 20;
  auto direct = Dataset::OpenMixture({{dir + "/a"}, {dir + "/b"}}, mix);
  ASSERT_TRUE(direct.ok());
  OrderOptions o;
  o.kind = OrderKind::kShuffle;
  EXPECT_EQ((*from_file)->mixture()->GlobalOrder(2, o), (*direct)->mixture()->GlobalOrder(2, o));
  EXPECT_EQ((*from_file)->mixture()->epoch_length(), 20u);
  // A folder holding mixture.json (and no manifest.json) is the mixture too.
  std::filesystem::create_directories(dir + "/blend");
  testing::WriteFileOrDie(dir + "/blend/mixture.json", R"({"format": "libshard.mixture/1",
    "sources": [{"path": "../a", "weight": 1}, {"path": "../b", "weight": 1}]})");
  auto folder = Dataset::Open({dir + "/blend"});
  ASSERT_TRUE(folder.ok()) << folder.status();
  EXPECT_EQ((*folder)->mixture()->num_sources(), 2u);

  // Refused: with other sources, nested, bad weights, an unknown format word.
  EXPECT_EQ(Dataset::Open({dir + "/mix.json", dir + "/a"}).status().code(), StatusCode::kInvalidArgument);
  testing::WriteFileOrDie(dir + "/nested.json", R"({"format": "libshard.mixture/1",
    "sources": [{"path": "mix.json", "weight": 1}]})");
  auto nested = Dataset::Open({dir + "/nested.json"});
  EXPECT_NE(nested.status().message().find("may not be a mixture"), std::string::npos) << nested.status();
  testing::WriteFileOrDie(dir + "/bad.json", R"({"format": "libshard.mixture/1",
    "sources": [{"path": "a", "weight": -1}]})");
  auto bad = Dataset::Open({dir + "/bad.json"});
  EXPECT_NE(bad.status().message().find(dir + "/bad.json: sources[0] (a) has weight -1"), std::string::npos)
      << bad.status();
  testing::WriteFileOrDie(dir + "/words.json", R"({"format": "libshard.mixture/1", "label_maps": "union",
    "sources": [{"path": "a", "weight": 1}]})");
  EXPECT_EQ(Dataset::Open({dir + "/words.json"}).status().code(), StatusCode::kInvalidArgument);
  // A missing source names the mixture file and the source.
  testing::WriteFileOrDie(dir + "/missing.json", R"({"format": "libshard.mixture/1",
    "sources": [{"path": "nowhere", "weight": 1}]})");
  auto missing = Dataset::Open({dir + "/missing.json"});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("missing.json"), std::string::npos) << missing.status();
  EXPECT_NE(missing.status().message().find("nowhere"), std::string::npos) << missing.status();
}

// An epoch longer than the bound (its order is held whole) is refused before
// anything is allocated, naming the file and the field: 2^32 asked for ~64 GB.
TEST(MixtureDatasetTest, RefusesAnEpochPastTheLimitNamingTheFile) {
  const std::string dir = testing::MakeTempDir();
  MakeDataset(dir + "/a", 4, Names(10));
  for (const char* n : {"4294967296", "134217729"}) {
    testing::WriteFileOrDie(dir + "/long.json", std::string(R"({"format": "libshard.mixture/1", "samples_per_epoch": ")") +
                                                    n + R"(", "sources": [{"path": "a", "weight": 1}]})");
    auto long_epoch = Dataset::Open({dir + "/long.json"});
    EXPECT_EQ(long_epoch.status().code(), StatusCode::kInvalidArgument) << n;
    const std::string message(long_epoch.status().message());
    EXPECT_NE(message.find(dir + "/long.json"), std::string::npos) << message;
    EXPECT_NE(message.find(std::string("samples_per_epoch ") + n + " is more than 134217728"), std::string::npos)
        << message;
  }
  testing::WriteFileOrDie(dir + "/limit.json", R"({"format": "libshard.mixture/1", "samples_per_epoch": "134217728",
    "sources": [{"path": "a", "weight": 1}]})");
  auto at_limit = Dataset::Open({dir + "/limit.json"});  // opens: the order is drawn per epoch, not here
  ASSERT_TRUE(at_limit.ok()) << at_limit.status();
  EXPECT_EQ((*at_limit)->mixture()->epoch_length(), MixtureOrder::kMaxEpochLength);
}

}  // namespace
}  // namespace libshard::reader

// `shard verify` and `shard report` of a mixture file (docs/formats.md#mixturejson).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "testutil.h"

namespace libshard {
namespace {

using testing::Contains;
using testing::MakeTempDir;
using testing::ReadFileOrDie;
using testing::RunShard;
using testing::SourceDir;
using testing::WriteFileOrDie;

// The bundled Fashion-MNIST samples (train 80, val 20) and photos (5, unlabelled), converted, and a mixture of
// the two at 3:1.
std::string MakeMixture(const std::string& dir) {
  auto a = RunShard("convert " + SourceDir() + "/samples/images -o " + dir + "/fashion -q --seed 1");
  EXPECT_EQ(a.exit_code, 0) << a.err;
  auto b = RunShard("convert " + SourceDir() + "/samples/photos -o " + dir + "/photos -q");
  EXPECT_EQ(b.exit_code, 0) << b.err;
  WriteFileOrDie(dir + "/mix.json", R"({"format": "libshard.mixture/1",
    "sources": [{"path": "fashion", "weight": 3}, {"path": "photos", "weight": 1}]})");
  return dir + "/mix.json";
}

TEST(MixtureCliTest, VerifyChecksEverySource) {
  const std::string dir = MakeTempDir();
  const std::string mix = MakeMixture(dir);
  auto ok = RunShard("verify " + mix);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_TRUE(Contains(ok.out, "mixture " + mix + ": source 0 (" + dir + "/fashion)")) << ok.out;
  EXPECT_TRUE(Contains(ok.out, "mixture " + mix + ": source 1 (" + dir + "/photos)")) << ok.out;
  // A damaged shard of one source fails the whole check, naming it.
  std::string shard;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/photos")) {
    if (e.path().extension() == ".tfrecord") shard = e.path().string();
  }
  std::string bytes = ReadFileOrDie(shard);
  ASSERT_GT(bytes.size(), 100u);
  bytes[bytes.size() / 2] ^= 0x5a;
  WriteFileOrDie(shard, bytes);
  auto bad = RunShard("verify " + mix);
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_TRUE(Contains(bad.out + bad.err, shard)) << bad.out << bad.err;
  EXPECT_EQ(RunShard("verify --json " + mix).exit_code, 2);
}

TEST(MixtureCliTest, ReportShowsTheRealisedProportions) {
  const std::string dir = MakeTempDir();
  const std::string mix = MakeMixture(dir);
  auto r = RunShard("report " + mix);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string page = ReadFileOrDie(dir + "/report.html");
  EXPECT_TRUE(Contains(page, "<h1>Mixture report: mix.json</h1>"));
  // 85 samples per epoch (80 + 5) at 3:1: 63 or 64 and 21 or 22 picks (the photos upsampled, over 4 passes).
  EXPECT_TRUE(Contains(page, "data-source=\"0\" data-picks=\"64\"") ||
              Contains(page, "data-source=\"0\" data-picks=\"63\""))
      << page;
  EXPECT_TRUE(Contains(page, "<td>75.0%</td>"));
  EXPECT_TRUE(Contains(page, "<title>Picks per source in epoch 0</title>"));
  EXPECT_FALSE(Contains(page, "<script"));
}

}  // namespace
}  // namespace libshard

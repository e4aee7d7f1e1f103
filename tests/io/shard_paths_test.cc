// Shard names and path expansion (io/shard_paths.h): which files a folder
// argument gives `shard verify` and the reader, and the one parser of
// `-NNNNN-of-MMMMM` numbering.
#include "libshard/io/shard_paths.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "testutil.h"

namespace libshard::io {
namespace {

using ::libshard::testing::MakeTempDir;
using ::libshard::testing::WriteFileOrDie;

TEST(ShardNumberingTest, SplitsAtTheLastNumbering) {
  auto n = ParseShardNumbering("train-00003-of-00010.tfrecord");
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->head, "train");
  EXPECT_EQ(n->index, "00003");
  EXPECT_EQ(n->count, "00010");
  EXPECT_EQ(n->tail, ".tfrecord");
  n = ParseShardNumbering("a-00000-of-00001-b-000002-of-000003");
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->head, "a-00000-of-00001-b");
  EXPECT_EQ(n->index, "000002");
  EXPECT_EQ(n->count, "000003");
  EXPECT_EQ(n->tail, "");
  n = ParseShardNumbering("mnist-train.tfrecord-00000-of-00001");
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->head, "mnist-train.tfrecord");
  n = ParseShardNumbering("-00001-of-00002");
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->head, "");
  for (const char* none : {"", "train", "a-1-of-2", "a-0000-of-00001", "a-00000-of-0001", "a-00000_of-00001",
                           "a-00000-of-", "00000-of-00001"}) {
    EXPECT_FALSE(ParseShardNumbering(none).has_value()) << none;
  }
}

TEST(ShardNameTest, WhatLooksLikeAShard) {
  for (const char* yes : {"a.tfrecord", "a.tfrecords", "a.tfrecord.gz", "train-00003-of-01024",
                          "train.tfrecord-00000-of-00010", "x-123456-of-654321", "train-00000-of-00002.gz"}) {
    EXPECT_TRUE(LooksLikeShardName(yes)) << yes;
  }
  for (const char* no : {"a.tfrecord.idx", "train-00003-of-01024.idx", "a.png", "tfrecord", "a-1-of-2",
                         "a.tfrecord.tmp", "README.md", "x-123456-of-654321.bin", "manifest.task-00000-of-00003.json",
                         "train-00000-of-00002.partial", "train-00000-of-00002x"}) {
    EXPECT_FALSE(LooksLikeShardName(no)) << no;
  }
}

TEST(ExpandPathsTest, FoldersGlobsAndFiles) {
  const std::string dir = MakeTempDir();
  std::filesystem::create_directories(dir + "/sub/deeper");
  for (const char* f : {"b.tfrecord", "a.tfrecord", "a.tfrecord.idx", "notes.txt", "sub/c.tfrecord.gz",
                        "sub/deeper/train-00000-of-00002", "sub/deeper/train-00001-of-00002"}) {
    WriteFileOrDie(dir + "/" + f, "x");
  }
  auto all = ExpandPaths({dir});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, (std::vector<std::string>{dir + "/a.tfrecord", dir + "/b.tfrecord", dir + "/sub/c.tfrecord.gz",
                                            dir + "/sub/deeper/train-00000-of-00002",
                                            dir + "/sub/deeper/train-00001-of-00002"}));
  // Argument order is kept; an explicit file is taken whatever its name; duplicates go.
  auto mixed = ExpandPaths({dir + "/notes.txt", dir + "/sub/deeper/*-of-*", dir + "/a.tfrecord", dir + "/notes.txt"});
  ASSERT_TRUE(mixed.ok()) << mixed.status();
  EXPECT_EQ(*mixed, (std::vector<std::string>{dir + "/notes.txt", dir + "/sub/deeper/train-00000-of-00002",
                                              dir + "/sub/deeper/train-00001-of-00002", dir + "/a.tfrecord"}));
}

TEST(ExpandPathsTest, ArgumentsThatMatchNothing) {
  const std::string dir = MakeTempDir();
  std::filesystem::create_directories(dir + "/empty");
  const std::pair<std::string, std::string> cases[] = {
      {dir + "/missing.tfrecord", "NOT_FOUND: " + dir + "/missing.tfrecord: no such file or folder"},
      {dir + "/*.nothing", "NOT_FOUND: " + dir + "/*.nothing: no file matches"},
      {dir + "/empty", "INVALID_ARGUMENT: " + dir + "/empty: no TFRecord files in this folder"},
  };
  for (const auto& [arg, want] : cases) {
    auto r = ExpandPaths({arg});
    ASSERT_FALSE(r.ok()) << arg;
    EXPECT_EQ(r.status().ToString(), want);
  }
}

}  // namespace
}  // namespace libshard::io

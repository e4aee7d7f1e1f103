// The helpers of the `shard convert` CLI tests (convert_*_cli_test.cc): small
// input trees, and what an output folder holds after any run, finished or
// not: no temporaries, and every shard under its final name complete.
#ifndef LIBSHARD_TESTS_TOOLS_CONVERT_CLI_FIXTURES_H_
#define LIBSHARD_TESTS_TOOLS_CONVERT_CLI_FIXTURES_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "convert/fixtures.h"
#include "libshard/convert/manifest_io.h"
#include "libshard/util/strings.h"
#include "testutil.h"

namespace libshard::testing {

inline void ExpectNoTemporaries(const std::string& dir) {
  for (const std::string& f : ListFilesRecursive(dir)) {
    EXPECT_FALSE(Contains(f, ".partial")) << f;
    EXPECT_FALSE(util::EndsWith(f, ".tmp")) << f;
  }
}

// Every shard under its final name is complete: it reads to a clean end
// with every CRC checked (and passes `shard verify` when `with_cli`), and
// holds the records its entry says.
inline void ExpectFinalShardsComplete(const std::string& dir, bool with_cli = true) {
  for (const std::string& f : ListFilesRecursive(dir)) {
    if (!util::EndsWith(f, ".tfrecord")) continue;
    if (with_cli) {
      CommandResult v = RunShard("verify -q " + dir + "/" + f);
      EXPECT_EQ(v.exit_code, 0) << f << ": " << v.out << v.err;
    }
    StatusOr<ShardEntry> e = convert::ReadShardEntry(dir + "/.libshard/" + f + ".json");
    ASSERT_TRUE(e.ok()) << f << ": " << e.status();
    EXPECT_EQ(ReadRecords(dir + "/" + f).size(), e->records()) << f;
    EXPECT_EQ(std::filesystem::file_size(dir + "/" + f), e->bytes()) << f;
  }
}

inline void MakeSmallTree(const std::string& root) {
  WriteTreeFile(root, "cat/a.png", PngBytes(12, 10, 3, 1));
  WriteTreeFile(root, "cat/b.jpg", JpegBytes(16, 16, 3, 2));
  WriteTreeFile(root, "dog/c.png", PngBytes(9, 14, 1, 3));
  WriteTreeFile(root, "dog/d.jpg", JpegBytes(20, 12, 3, 4));
}

// n small PNGs in 4 classes.
inline void MakeManyImages(const std::string& root, int n, int size) {
  for (int i = 0; i < n; ++i) {
    WriteTreeFile(root, "class" + std::to_string(i % 4) + "/" + std::to_string(i) + ".png", PngBytes(size, size, 3, i));
  }
}

}  // namespace libshard::testing

#endif  // LIBSHARD_TESTS_TOOLS_CONVERT_CLI_FIXTURES_H_

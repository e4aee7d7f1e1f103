// Shared by the remote tests: a small converted dataset made by `shard`.
#ifndef LIBSHARD_TESTS_REMOTE_REMOTE_FIXTURES_H_
#define LIBSHARD_TESTS_REMOTE_REMOTE_FIXTURES_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "convert/fixtures.h"
#include "testutil.h"

namespace libshard::testing {

// Six PNGs in two classes under `dir`/in, converted by `shard` into `dir`/ds
// (2 KiB shards: several of them). Call with ASSERT_NO_FATAL_FAILURE.
inline void ConvertSmallDataset(const std::string& dir) {
  for (int i = 0; i < 6; ++i) {
    const std::string cls = dir + "/in/" + std::string(i % 2 ? "a" : "b");
    std::filesystem::create_directories(cls);
    WriteFileOrDie(cls + "/" + std::to_string(i) + ".png", PngBytes(16, 12, 3, i));
  }
  CommandResult r = RunShard("convert -q " + dir + "/in -o " + dir + "/ds --shard-size 2KiB");
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace libshard::testing

#endif  // LIBSHARD_TESTS_REMOTE_REMOTE_FIXTURES_H_

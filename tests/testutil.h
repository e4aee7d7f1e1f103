// Helpers shared by the tests: where the shared interop data lives, reading
// files, scratch directories.
#ifndef LIBSHARD_TESTS_TESTUTIL_H_
#define LIBSHARD_TESTS_TESTUTIL_H_

#include <cstdint>
#include <string>

namespace libshard::testing {

// The ../shared folder (from $LIBSHARD_SHARED_DIR), or "" when absent.
std::string SharedDir();
// SharedDir() + "/" + rel, or "" when that path does not exist. Use with
//   std::string dir = SharedPath("interop/tfrecord");
//   if (dir.empty()) GTEST_SKIP() << "shared interop data not found";
std::string SharedPath(const std::string& rel);
// The project source root ($LIBSHARD_SOURCE_DIR, else the one it was built from).
std::string SourceDir();
// Whole file contents; fails the current test (and returns "") on error.
std::string ReadFileOrDie(const std::string& path);
void WriteFileOrDie(const std::string& path, const std::string& contents);
// A fresh, empty directory unique to the running test, under $TMPDIR;
// removed when the test ends if it passed (kept, and named, if it failed).
std::string MakeTempDir();

struct CommandResult {
  int exit_code = -1;  // -1 when the command did not exit normally
  std::string out;     // stdout
  std::string err;     // stderr
};
// Runs `command_line` through /bin/sh, capturing stdout and stderr.
CommandResult RunCommand(const std::string& command_line);

#ifdef SHARD_BIN
// Runs the `shard` tool under test (targets that define SHARD_BIN) with `args`.
inline CommandResult RunShard(const std::string& args) { return RunCommand(std::string(SHARD_BIN) + " " + args); }
#endif

// Lossless WebP bytes (libwebp's encoder) of 8-bit RGB (channels 3) or RGBA
// (4) pixels, rows packed: the decoded pixels equal `px` exactly.
std::string WebpLosslessBytes(const uint8_t* px, int width, int height, int channels);

// Whether `part` occurs in `text`.
inline bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace libshard::testing

#endif  // LIBSHARD_TESTS_TESTUTIL_H_

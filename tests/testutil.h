// Helpers shared by the tests: where the shared interop data lives, reading
// files, scratch directories.
#ifndef LIBSHARD_TESTS_TESTUTIL_H_
#define LIBSHARD_TESTS_TESTUTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>

// Defined under AddressSanitizer, where address-space limits do not work
// (its shadow memory alone is terabytes): tests lowering RLIMIT_AS skip.
#if defined(__SANITIZE_ADDRESS__)
#define LIBSHARD_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LIBSHARD_TEST_ASAN 1
#endif
#endif

namespace libshard::testing {

// EXPECT_TRUE(HasSubstr(message, "part")): an assertion that prints both
// strings when `text` lacks `part` (plain strings; gmock's matcher of the
// same name takes a matcher argument).
::testing::AssertionResult HasSubstr(const std::string& text, const std::string& part);

// The ../shared folder (from $LIBSHARD_SHARED_DIR), or "" when absent.
std::string SharedDir();
// SharedDir() + "/" + rel, or "" when that path does not exist. Use with
//   std::string dir = SharedPath("interop/tfrecord");
//   if (dir.empty()) GTEST_SKIP() << "shared interop data not found";
std::string SharedPath(const std::string& rel);
// The project source root ($LIBSHARD_SOURCE_DIR, else the one it was built from).
std::string SourceDir();
// The Python the build was configured with (Python3_EXECUTABLE), for tests
// that run Python helpers (the fault proxy, boto3 cross-checks).
std::string TestPython();
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

// Runs `child` in a fork child and returns its exit code; -1 when it died of
// a signal (an abort: rc 134 in a shell), -2 when it ran past `timeout_s`
// (then it is killed). The child reports through files it writes.
int RunInForkChild(const std::function<int()>& child, int timeout_s = 60);
// Address space this process maps now (VmSize), in bytes.
uint64_t AddressSpaceInUse();
// Lowers RLIMIT_AS to what is in use plus `headroom` bytes (in a fork child:
// the limit cannot be raised again); false when setrlimit fails.
bool LimitAddressSpace(uint64_t headroom);
// Lossless WebP bytes (libwebp's encoder) of 8-bit RGB (channels 3) or RGBA
// (4) pixels, rows packed: the decoded pixels equal `px` exactly.
std::string WebpLosslessBytes(const uint8_t* px, int width, int height, int channels);

// Whether `part` occurs in `text`.
inline bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace libshard::testing

#endif  // LIBSHARD_TESTS_TESTUTIL_H_

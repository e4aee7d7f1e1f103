#include "testutil.h"

#include <gtest/gtest.h>
#include <webp/encode.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace libshard::testing {

::testing::AssertionResult HasSubstr(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

std::string SharedDir() {
  const char* env = std::getenv("LIBSHARD_SHARED_DIR");
  if (env == nullptr || !fs::is_directory(env)) return "";
  return env;
}

std::string SharedPath(const std::string& rel) {
  std::string dir = SharedDir();
  if (dir.empty()) return "";
  std::string p = dir + "/" + rel;
  return fs::exists(p) ? p : "";
}

std::string SourceDir() {
  const char* env = std::getenv("LIBSHARD_SOURCE_DIR");
  return env ? env : LIBSHARD_SOURCE_DIR_DEFAULT;
}

std::string TestPython() { return LIBSHARD_TEST_PYTHON; }

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    return "";
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFileOrDie(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  if (!out) ADD_FAILURE() << "cannot write " << path;
}

namespace {

// Removes the directories MakeTempDir() made for a test when that test
// passes; a failed test keeps them (and names them) for a post-mortem.
class TempDirCleaner : public ::testing::EmptyTestEventListener {
 public:
  static TempDirCleaner& Get() {
    static TempDirCleaner* cleaner = [] {
      auto* c = new TempDirCleaner;  // the listener list owns it
      ::testing::UnitTest::GetInstance()->listeners().Append(c);
      return c;
    }();
    return *cleaner;
  }
  void Add(const fs::path& dir) { dirs_.push_back(dir); }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    for (const fs::path& dir : dirs_) {
      if (info.result()->Failed()) {
        std::fprintf(stderr, "kept %s for the failed test\n", dir.c_str());
      } else {
        std::error_code ec;
        fs::remove_all(dir, ec);
      }
    }
    dirs_.clear();
  }

 private:
  std::vector<fs::path> dirs_;
};

}  // namespace

std::string MakeTempDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "libshard";
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  fs::path dir = fs::temp_directory_path() / ("libshard_test_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  TempDirCleaner::Get().Add(dir);
  return dir.string();
}

CommandResult RunCommand(const std::string& command_line) {
  static int runs = 0;
  const fs::path dir =
      fs::temp_directory_path() / ("libshard_cmd_" + std::to_string(::getpid()) + "_" + std::to_string(runs++));
  fs::create_directories(dir);
  const std::string out = (dir / "out").string();
  const std::string err = (dir / "err").string();
  int status = std::system((command_line + " >" + out + " 2>" + err).c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadFileOrDie(out);
  r.err = ReadFileOrDie(err);
  fs::remove_all(dir);
  return r;
}

int RunInForkChild(const std::function<int()>& child, int timeout_s) {
  const pid_t pid = fork();
  if (pid == 0) _exit(child());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (;;) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -2;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

uint64_t AddressSpaceInUse() {
  std::string status = ReadFileOrDie("/proc/self/status");
  const size_t at = status.find("VmSize:");
  return std::stoull(status.substr(at + 7)) * 1024;
}

bool LimitAddressSpace(uint64_t headroom) {
  const rlim_t limit = AddressSpaceInUse() + headroom;
  const rlimit rl{limit, limit};
  return setrlimit(RLIMIT_AS, &rl) == 0;
}

std::string WebpLosslessBytes(const uint8_t* px, int width, int height, int channels) {
  uint8_t* out = nullptr;
  const size_t n = channels == 4 ? WebPEncodeLosslessRGBA(px, width, height, width * 4, &out)
                                 : WebPEncodeLosslessRGB(px, width, height, width * 3, &out);
  EXPECT_GT(n, 0u) << "WebP encode of " << width << "x" << height << " failed";
  std::string bytes(reinterpret_cast<const char*>(out), n);
  WebPFree(out);
  return bytes;
}

}  // namespace libshard::testing

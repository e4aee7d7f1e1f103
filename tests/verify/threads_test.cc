// verify's threads = 0 is one thread per core (util::ThreadCount), as it is
// for convert and the loader: whatever task arena the caller is in.
#include <dirent.h>

#include <gtest/gtest.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/task_arena.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "libshard/example/example_builder.h"
#include "libshard/io/writable_file.h"
#include "libshard/record/record_writer.h"
#include "libshard/verify/verifier.h"

namespace libshard::verify {
namespace {

// Threads of this process now.
size_t ThreadsInProcess() {
  size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (const dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
    ::closedir(d);
  }
  return n;
}

// A shard of two small Examples at `path`.
void WriteShard(const std::string& path, int i) {
  std::string data;
  record::RecordWriter writer(io::NewStringWritableFile(&data), nullptr);
  for (int k = 0; k < 2; ++k) {
    example::ExampleBuilder b;
    b.AddBytes("image/encoded", std::string(100 + k, static_cast<char>('a' + i % 26)));
    b.AddInt64("image/class/label", i);
    EXPECT_TRUE(writer.Write(b.Serialize()).ok());
  }
  EXPECT_TRUE(writer.Close().ok());
  EXPECT_TRUE(io::WriteFileAtomically(path, data, false).ok());
}

// Before: threads = 0 ran in the caller's arena ("oneTBB chooses"), so from a
// one-thread arena every file was checked on the calling thread alone. Now it
// is one thread per core there too: oneTBB starts workers for it. Checked in
// a process of its own (a fresh oneTBB, no workers yet), as the thread count
// of the process shows it.
TEST(VerifyThreadsTest, ZeroIsOnePerCoreEvenFromAOneThreadArena) {
  if (tbb::info::default_concurrency() < 2) GTEST_SKIP() << "one core: one per core is one thread";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                          ("libshard_test_" + std::to_string(::getpid()) + "_verify_threads");
        std::filesystem::create_directories(dir);
        std::vector<std::string> paths;
        for (int i = 0; i < 16; ++i) {
          paths.push_back((dir / ("s" + std::to_string(i) + ".tfrecord")).string());
          WriteShard(paths.back(), i);
        }
        const size_t before = ThreadsInProcess();
        VerifyOptions o;
        o.threads = 0;
        std::vector<FileResult> results;
        tbb::task_arena one(1);
        one.execute([&] { results = VerifyFiles(paths, o); });
        const size_t after = ThreadsInProcess();
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
        bool clean = results.size() == paths.size();
        for (const FileResult& r : results) clean &= r.ok() && r.records == 2;
        std::_Exit(!clean ? 2 : after > before ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace libshard::verify

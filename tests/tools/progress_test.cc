// The progress line of `shard convert`: the terminal bar never wider than the
// terminal (it used to be ~92 columns and wrapped in 80), the plain line for
// logs. The periodic output and SIGINT are tested through the CLI
// (convert_messages_cli_test.cc, convert_resume_cli_test.cc).
#include "progress.h"

#include <gtest/gtest.h>

namespace shard_tool {
namespace {

TEST(ProgressTest, BarFitsTheTerminalWidth) {
  const uint64_t big = 123456789012ull;
  for (int width : {20, 40, 60, 80, 132}) {
    for (uint64_t done : {uint64_t{0}, uint64_t{5}, big / 2, big}) {
      const std::string line = ProgressBar::BarLine(width, 1234.5, done, big, big * 1000, 98765);
      EXPECT_LE(static_cast<int>(line.size()), width - 1) << width << ": " << line;
    }
  }
  const std::string line = ProgressBar::BarLine(80, 10, 500, 1000, 20'000'000, 3);
  EXPECT_EQ(line, "[===============>              ] 500/1000  50% 50 img/s 2.0 MB/s ETA 0:10 rej 3");
  EXPECT_LE(line.size(), 79u);
  // Narrow: the bar goes first, then the text is cut.
  EXPECT_EQ(ProgressBar::BarLine(40, 10, 500, 1000, 20'000'000, 3), " 500/1000  50% 50 img/s 2.0 MB/s ETA 0:");
}

TEST(ProgressTest, PlainLineForLogs) {
  EXPECT_EQ(ProgressBar::PlainLine("shard convert", 10, 1200, 70000, 123'000'000, 2),
            "shard convert: progress 1200/70000 (1.7%), 120 img/s, 12.3 MB/s, ETA 9:33, 2 rejected");
  EXPECT_EQ(ProgressBar::PlainLine("x", 0, 0, 0, 0, 0),
            "x: progress 0/0 (100.0%), 0 img/s, 0.0 MB/s, ETA --:--, 0 rejected");
}

}  // namespace
}  // namespace shard_tool

// A one-line progress bar on a terminal: done/total, images/s, MB/s, ETA,
// redrawn at most a few times a second. Draws nothing when the stream is not
// a terminal (logs and CI stay clean) or when disabled.
#ifndef LIBSHARD_TOOLS_PROGRESS_H_
#define LIBSHARD_TOOLS_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <cstdio>

namespace shard_tool {

class ProgressBar {
 public:
  // Draws on `out` only if enabled and `out` is a terminal.
  ProgressBar(std::FILE* out, bool enabled);
  // done of total items, bytes processed so far; redraws when due.
  void Update(uint64_t done, uint64_t total, uint64_t bytes, uint64_t rejected);
  // Clears the line.
  void Finish();

 private:
  void Draw(uint64_t done, uint64_t total, uint64_t bytes, uint64_t rejected);
  std::FILE* out_;
  bool active_;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace shard_tool

#endif  // LIBSHARD_TOOLS_PROGRESS_H_

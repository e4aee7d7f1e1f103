// Progress of a long run on stderr, in one of two forms:
//  - on a terminal, a one-line bar (done/total, images/s, MB/s, ETA,
//    rejects) redrawn at most four times a second, fitted to the terminal's
//    width (TIOCGWINSZ, else $COLUMNS, else 80 columns) and cleared at the end;
//  - anywhere else (Slurm logs, nohup, CI), a plain line every `interval`
//    seconds: "shard convert: progress 1200/70000 (1.7%), 850 img/s,
//    12.3 MB/s, ETA 1:21, 0 rejected".
// Nothing when disabled (-q).
//
// InterruptMessage: while one is alive, SIGINT or SIGTERM clears a drawn bar,
// prints "PROGRAM: interrupted; rerun the same command to resume" and ends
// the process at once with 128 + the signal (130 for SIGINT), as kill -9
// would but with a message: the converter's output is safe to resume after
// any kill.
#ifndef LIBSHARD_TOOLS_PROGRESS_H_
#define LIBSHARD_TOOLS_PROGRESS_H_

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>

namespace shard_tool {

class ProgressBar {
 public:
  // `prefix` starts each plain line ("shard convert"). interval_s > 0.
  ProgressBar(std::FILE* out, bool enabled, std::string prefix, double interval_s = 10);
  // done of total items, bytes processed so far; redraws when due.
  void Update(uint64_t done, uint64_t total, uint64_t bytes, uint64_t rejected);
  // Clears the bar (a terminal); nothing for plain lines.
  void Finish();

  // The bar for a terminal `width` columns wide (never wider than width - 1),
  // and the plain line; exposed for tests.
  static std::string BarLine(int width, double seconds, uint64_t done, uint64_t total, uint64_t bytes,
                             uint64_t rejected);
  static std::string PlainLine(const std::string& prefix, double seconds, uint64_t done, uint64_t total, uint64_t bytes,
                               uint64_t rejected);

 private:
  int Width() const;
  std::FILE* out_;
  bool enabled_, tty_;
  std::string prefix_;
  std::chrono::steady_clock::duration interval_;
  std::chrono::steady_clock::time_point start_, last_;
};

class InterruptMessage {
 public:
  // `program` must outlive this object (a string literal).
  InterruptMessage(const char* program, bool tty);
  ~InterruptMessage();
  InterruptMessage(const InterruptMessage&) = delete;
  InterruptMessage& operator=(const InterruptMessage&) = delete;

 private:
  struct sigaction old_int_, old_term_;
};

// StagingCleanup: while one is alive (the whole of `shard`'s run), SIGINT or
// SIGTERM removes the temporary folders of s3:// / https:// datasets being
// staged (libshard/remote/staging.h: RemoveStagingFolders), prints
// "PROGRAM: interrupted" and ends the process with 128 + the signal. The
// handler only writes the signal's number to a pipe; a thread of this
// object does the removal, outside the handler. An InterruptMessage alive
// at the same time (convert) takes the signals over until it goes.
class StagingCleanup {
 public:
  explicit StagingCleanup(const char* program);
  ~StagingCleanup();
  StagingCleanup(const StagingCleanup&) = delete;
  StagingCleanup& operator=(const StagingCleanup&) = delete;

 private:
  const char* program_;
  int pipe_[2] = {-1, -1};
  std::thread thread_;
  struct sigaction old_int_, old_term_;
};

}  // namespace shard_tool

#endif  // LIBSHARD_TOOLS_PROGRESS_H_

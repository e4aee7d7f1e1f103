#include "progress.h"

#include <unistd.h>

#include <algorithm>
#include <string>

namespace shard_tool {

ProgressBar::ProgressBar(std::FILE* out, bool enabled)
    : out_(out), active_(enabled && ::isatty(::fileno(out))),
      start_(std::chrono::steady_clock::now()), last_(start_) {}

void ProgressBar::Update(uint64_t done, uint64_t total, uint64_t bytes, uint64_t rejected) {
  if (!active_) return;
  auto now = std::chrono::steady_clock::now();
  if (done < total && now - last_ < std::chrono::milliseconds(250)) return;
  last_ = now;
  Draw(done, total, bytes, rejected);
}

void ProgressBar::Draw(uint64_t done, uint64_t total, uint64_t bytes, uint64_t rejected) {
  const double s = std::chrono::duration<double>(last_ - start_).count();
  const double rate = s > 0 ? done / s : 0;
  const double mbs = s > 0 ? bytes / s / 1e6 : 0;
  const double frac = total ? static_cast<double>(done) / total : 1;
  constexpr int kWidth = 30;
  const int fill = static_cast<int>(frac * kWidth);
  std::string bar(fill, '=');
  if (fill < kWidth) bar += '>';
  bar.resize(kWidth, ' ');
  char eta[32] = "--:--";
  if (rate > 0) {
    const long left = static_cast<long>((total - done) / rate);
    std::snprintf(eta, sizeof(eta), "%ld:%02ld", left / 60, left % 60);
  }
  std::fprintf(out_, "\r[%s] %llu/%llu %3.0f%%  %.0f img/s  %.1f MB/s  ETA %s  rejected %llu\x1b[K",
               bar.c_str(), static_cast<unsigned long long>(done),
               static_cast<unsigned long long>(total), frac * 100, rate, mbs, eta,
               static_cast<unsigned long long>(rejected));
  std::fflush(out_);
}

void ProgressBar::Finish() {
  if (!active_) return;
  std::fprintf(out_, "\r\x1b[K");
  std::fflush(out_);
}

}  // namespace shard_tool

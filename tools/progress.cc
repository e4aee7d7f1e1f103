#include "progress.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "libshard/remote/staging.h"

namespace shard_tool {
namespace {

std::string Eta(double rate, uint64_t done, uint64_t total) {
  if (rate <= 0 || done > total) return "--:--";
  const long left = static_cast<long>((total - done) / rate);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%ld:%02ld", left / 60, left % 60);
  return buf;
}

// For the signal handler: what to write, set before it is installed.
const char* g_program = "shard";
volatile sig_atomic_t g_tty = 0;

void OnInterrupt(int sig) {
  // Only async-signal-safe calls: write(2) and _exit(2).
  if (g_tty) (void)!::write(STDERR_FILENO, "\r\x1b[K", 4);
  (void)!::write(STDERR_FILENO, g_program, std::strlen(g_program));
  static const char kMsg[] = ": interrupted; rerun the same command to resume\n";
  (void)!::write(STDERR_FILENO, kMsg, sizeof(kMsg) - 1);
  ::_exit(128 + sig);
}

// For StagingCleanup's handler: the pipe its thread reads.
volatile sig_atomic_t g_cleanup_fd = -1;

void OnInterruptCleanup(int sig) {
  // Only async-signal-safe calls: write(2).
  const unsigned char b = static_cast<unsigned char>(sig);
  if (g_cleanup_fd >= 0) (void)!::write(g_cleanup_fd, &b, 1);
}

}  // namespace

ProgressBar::ProgressBar(std::FILE* out, bool enabled, std::string prefix, double interval_s)
    : out_(out),
      enabled_(enabled),
      tty_(::isatty(::fileno(out)) != 0),
      prefix_(std::move(prefix)),
      interval_(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          tty_ ? std::chrono::duration<double>(0.25) : std::chrono::duration<double>(interval_s))),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

int ProgressBar::Width() const {
  struct winsize ws;
  if (::ioctl(::fileno(out_), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* c = std::getenv("COLUMNS")) {
    const int n = std::atoi(c);
    if (n > 0) return n;
  }
  return 80;
}

std::string ProgressBar::BarLine(int width, double s, uint64_t done, uint64_t total, uint64_t bytes,
                                 uint64_t rejected) {
  const double rate = s > 0 ? done / s : 0;
  const double frac = total ? std::min(1.0, static_cast<double>(done) / total) : 1;
  char text[160];
  std::snprintf(text, sizeof(text), " %llu/%llu %3.0f%% %.0f img/s %.1f MB/s ETA %s rej %llu",
                static_cast<unsigned long long>(done), static_cast<unsigned long long>(total), frac * 100, rate,
                s > 0 ? bytes / s / 1e6 : 0, Eta(rate, done, total).c_str(), static_cast<unsigned long long>(rejected));
  const int room = width - 1;  // the last column would wrap on some terminals
  const int bar = std::min(30, room - static_cast<int>(std::strlen(text)) - 2);
  std::string line;
  if (bar >= 5) {
    const int fill = static_cast<int>(frac * bar);
    line = "[" + std::string(fill, '=') + (fill < bar ? ">" : "");
    line.resize(bar + 1, ' ');
    line += "]";
  }
  line += text;
  if (static_cast<int>(line.size()) > room) line.resize(std::max(room, 0));
  return line;
}

std::string ProgressBar::PlainLine(const std::string& prefix, double s, uint64_t done, uint64_t total, uint64_t bytes,
                                   uint64_t rejected) {
  const double rate = s > 0 ? done / s : 0;
  char buf[256];
  std::snprintf(buf, sizeof(buf), ": progress %llu/%llu (%.1f%%), %.0f img/s, %.1f MB/s, ETA %s, %llu rejected",
                static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
                total ? 100.0 * done / total : 100.0, rate, s > 0 ? bytes / s / 1e6 : 0, Eta(rate, done, total).c_str(),
                static_cast<unsigned long long>(rejected));
  return prefix + buf;
}

void ProgressBar::Update(uint64_t done, uint64_t total, uint64_t bytes, uint64_t rejected) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  // A terminal shows the final count; a log gets no line for the end (the
  // summary follows).
  if ((done < total || !tty_) && now - last_ < interval_) return;
  if (!tty_ && done >= total) return;
  last_ = now;
  const double s = std::chrono::duration<double>(now - start_).count();
  if (tty_) {
    std::fprintf(out_, "\r%s\x1b[K", BarLine(Width(), s, done, total, bytes, rejected).c_str());
  } else {
    std::fprintf(out_, "%s\n", PlainLine(prefix_, s, done, total, bytes, rejected).c_str());
  }
  std::fflush(out_);
}

void ProgressBar::Finish() {
  if (!enabled_ || !tty_) return;
  std::fprintf(out_, "\r\x1b[K");
  std::fflush(out_);
}

InterruptMessage::InterruptMessage(const char* program, bool tty) {
  g_program = program;
  g_tty = tty ? 1 : 0;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &old_int_);
  ::sigaction(SIGTERM, &sa, &old_term_);
}

InterruptMessage::~InterruptMessage() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
}

}  // namespace shard_tool

namespace shard_tool {

StagingCleanup::StagingCleanup(const char* program) : program_(program) {
  if (::pipe2(pipe_, O_CLOEXEC) != 0) return;  // no cleanup on a signal, as before
  thread_ = std::thread([this] {
    unsigned char sig = 0;
    ssize_t n;
    do {
      n = ::read(pipe_[0], &sig, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1 || sig == 0) return;  // the destructor: the run is over
    libshard::remote::RemoveStagingFolders();
    std::fprintf(stderr, "%s: interrupted\n", program_);
    std::fflush(stderr);
    ::_exit(128 + sig);
  });
  g_cleanup_fd = pipe_[1];
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = OnInterruptCleanup;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &old_int_);
  ::sigaction(SIGTERM, &sa, &old_term_);
}

StagingCleanup::~StagingCleanup() {
  if (!thread_.joinable()) return;
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
  g_cleanup_fd = -1;
  const unsigned char stop = 0;
  (void)!::write(pipe_[1], &stop, 1);
  thread_.join();
  ::close(pipe_[0]);
  ::close(pipe_[1]);
}

}  // namespace shard_tool

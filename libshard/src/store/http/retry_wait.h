// The WAIT between tries (the decision is retry_policy.h): sleeps what
// DecideRetry() said, at most RetryOptions::max_delay_s, and draws the
// jitter. Cancel() ends every wait at once, now and later, and its flag
// (cancel_flag()) ends the transfers in flight.
//
// Thread-safety: every method may be called from several threads at once.
#ifndef LIBSHARD_SRC_STORE_HTTP_RETRY_WAIT_H_
#define LIBSHARD_SRC_STORE_HTTP_RETRY_WAIT_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace libshard::store {

class RetryWaiter {
 public:
  RetryWaiter();
  RetryWaiter(const RetryWaiter&) = delete;
  RetryWaiter& operator=(const RetryWaiter&) = delete;

  // A draw in [0, 1) for the jitter (a SplitMix64 stream seeded by the clock).
  double Jitter();
  // Sleeps `seconds` (clamped to [0, max_s]), or less when Cancel() comes.
  void Wait(double seconds, double max_s);
  // Irreversible: every wait ends now, and cancelled() is true.
  void Cancel();
  bool cancelled() const { return cancelled_.load(); }
  // For HttpRequest::cancel; lives as long as this waiter.
  const std::atomic<bool>* cancel_flag() const { return &cancelled_; }

 private:
  std::mutex jitter_mu_;
  uint64_t jitter_seed_;
  uint64_t jitter_draws_ = 0;
  std::atomic<bool> cancelled_{false};
  std::mutex cancel_mu_;
  std::condition_variable cancel_cv_;
};

}  // namespace libshard::store

#endif  // LIBSHARD_SRC_STORE_HTTP_RETRY_WAIT_H_

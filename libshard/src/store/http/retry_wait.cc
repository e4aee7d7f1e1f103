#include "store/http/retry_wait.h"

#include <algorithm>
#include <chrono>

#include "libshard/util/random.h"

namespace libshard::store {

RetryWaiter::RetryWaiter()
    : jitter_seed_(static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())) {}

double RetryWaiter::Jitter() {
  std::lock_guard<std::mutex> lock(jitter_mu_);
  return util::SplitMix64(util::MixSeed(jitter_seed_, ++jitter_draws_, 0)).Uniform();
}

void RetryWaiter::Wait(double seconds, double max_s) {
  seconds = std::clamp(seconds, 0.0, std::max(0.0, max_s));
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::unique_lock<std::mutex> lock(cancel_mu_);
  cancel_cv_.wait_until(lock, until, [this] { return cancelled_.load(); });
}

void RetryWaiter::Cancel() {
  {
    std::lock_guard<std::mutex> lock(cancel_mu_);
    cancelled_ = true;
  }
  cancel_cv_.notify_all();
}

}  // namespace libshard::store

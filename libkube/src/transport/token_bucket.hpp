#pragma once

// Internal: the client-side rate limiter's decision, without timers.
// Same model as golang.org/x/time/rate as client-go uses it: a bucket of
// `burst` tokens refilled at `qps` per second; each request reserves one
// token, and a reservation that drives the bucket negative waits until its
// token has been refilled, so waiters are served in order.

#include <algorithm>
#include <chrono>

namespace kube::detail {

class token_bucket {
public:
  using clock = std::chrono::steady_clock;

  token_bucket(double qps, int burst) : qps_(qps), burst_(std::max(burst, 1)), tokens_(burst_) {}

  /// Reserves one token at `now`; returns how long the caller must wait
  /// before using it (zero when a token is available). qps <= 0 never waits.
  clock::duration reserve(clock::time_point now) {
    if (qps_ <= 0) return clock::duration::zero();
    if (!started_) {
      started_ = true;
      last_ = now;
    }
    if (now > last_) {
      tokens_ = std::min<double>(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * qps_);
      last_ = now;
    }
    tokens_ -= 1;
    if (tokens_ >= 0) return clock::duration::zero();
    return std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(-tokens_ / qps_));
  }

private:
  double qps_;
  int burst_;
  double tokens_;
  bool started_ = false;
  clock::time_point last_{};
};

} // namespace kube::detail

#pragma once

#include <kube/informer/clock.hpp>

#include <algorithm>
#include <chrono>
#include <optional>

namespace kube::informer {

/// The Reflector's retry delays (client-go reflector.go defaults): 800 ms,
/// doubling up to 30 s, each delay stretched by a random factor in
/// [1, 1 + jitter) (so [30 s, 60 s) at the cap), and back to 800 ms once no
/// delay was taken for `reset_after` (2 min of health).
struct backoff_policy {
  clock::duration initial = std::chrono::milliseconds(800);
  clock::duration max = std::chrono::seconds(30);
  double factor = 2.0;
  double jitter = 1.0;
  clock::duration reset_after = std::chrono::minutes(2);
};

/// Exponential backoff with jitter and reset (client-go's
/// exponentialBackoffManagerImpl: the reset interval counts from the last
/// delay taken). Plain value, not thread-safe.
class backoff {
public:
  explicit backoff(backoff_policy p = {}) : p_(p), current_(p.initial) {}

  /// The next delay at time `now`; `random01` in [0, 1) draws the jitter.
  clock::duration next(clock::time_point now, double random01) {
    if (last_ && now - *last_ > p_.reset_after) {
      current_ = p_.initial;
    }
    last_ = now;
    const auto base = current_;
    const auto grown = std::chrono::duration_cast<clock::duration>(
        std::chrono::duration<double, clock::duration::period>(static_cast<double>(current_.count()) * p_.factor));
    current_ = std::min(grown, p_.max);
    const double r = std::clamp(random01, 0.0, 1.0);
    return base + std::chrono::duration_cast<clock::duration>(
                      std::chrono::duration<double, clock::duration::period>(static_cast<double>(base.count()) * p_.jitter * r));
  }

  [[nodiscard]] const backoff_policy& policy() const noexcept { return p_; }

private:
  backoff_policy p_;
  clock::duration current_;
  std::optional<clock::time_point> last_;
};

} // namespace kube::informer

#pragma once

#include <kube/informer/clock.hpp>
#include <kube/tools/retry.hpp>

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>

namespace kube::informer {

/// The Reflector's retry delays (client-go reflector.go defaults): 800 ms,
/// doubling up to 30 s, each delay stretched by a random factor in
/// [1, 1 + jitter) (so [30 s, 60 s) at the cap), and back to 800 ms once no
/// delay was taken for `reset_after` (2 min of health). The relist after a
/// 410 waits next_spread() instead (see there).
struct backoff_params {
  clock::duration initial = std::chrono::milliseconds(800);
  clock::duration max = std::chrono::seconds(30);
  double factor = 2.0;
  double jitter = 1.0;
  clock::duration reset_after = std::chrono::minutes(2);
};

/// Steps a kube::backoff (client-go's wait.Backoff, the SDK's one backoff)
/// and starts it over after a healthy while: client-go's
/// exponentialBackoffManagerImpl, where the reset interval counts from the
/// last delay taken. Plain value, not thread-safe.
class backoff_manager {
public:
  explicit backoff_manager(backoff_params p = {})
      : p_(p),
        b_(fresh()) {}

  /// The next delay at time `now`; `random01` in [0, 1) draws the jitter.
  clock::duration next(clock::time_point now, double random01) {
    if (last_ && now - *last_ > p_.reset_after) {
      b_ = fresh();
    }
    last_ = now;
    return std::chrono::duration_cast<clock::duration>(b_.step(std::clamp(random01, 0.0, 1.0)));
  }

  /// The next delay after the server answered with a failure that needs a
  /// relist (410): drawn from [0, d) rather than next()'s [d, d + jitter * d),
  /// where d is the un-jittered step; the state advances as next()'s does.
  /// The window is as wide as client-go's (at jitter 1.0), so a fleet that
  /// hears the same answer relists at the same rate, only without first
  /// sitting out a delay grown while the server was unreachable.
  /// `min_window`: the window is never narrower, so a fleet whose backoff
  /// is fresh still spreads its relists over that long.
  clock::duration next_spread(clock::time_point now, double random01, clock::duration min_window = {}) {
    if (last_ && now - *last_ > p_.reset_after) {
      b_ = fresh();
    }
    last_ = now;
    const auto d = std::max<clock::duration>(std::chrono::duration_cast<clock::duration>(b_.duration), min_window);
    (void)b_.step(0.0);
    return std::chrono::duration_cast<clock::duration>(d * std::clamp(random01, 0.0, 1.0));
  }
  /// Back to the first delay.
  void reset() noexcept {
    b_ = fresh();
    last_.reset();
  }

  [[nodiscard]] const backoff_params& params() const noexcept { return p_; }

private:
  // Unbounded steps: the reflector never gives up; the cap holds the delay at max.
  [[nodiscard]] kube::backoff fresh() const noexcept {
    return kube::backoff{p_.initial, p_.factor, p_.jitter, std::numeric_limits<int>::max(), p_.max};
  }

  backoff_params p_;
  kube::backoff b_;
  std::optional<clock::time_point> last_;
};

}  // namespace kube::informer

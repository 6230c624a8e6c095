#pragma once

// A token bucket with golang.org/x/time/rate's reservation arithmetic, as
// client-go uses it for the client's QPS limit and the workqueue's
// BucketRateLimiter: the bucket starts full (`burst` tokens), refills at `qps`
// tokens per second up to `burst`, and every reservation takes one token now,
// possibly going into debt; the debt is the wait, so waiters are served in
// order. A plain class: `now` comes from the caller.

#include <kube/base/clock.hpp>

namespace kube {

struct token_bucket_params {
  double qps = 10.0;  // refill rate, tokens per second (> 0)
  int burst = 100;    // bucket size, tokens (>= 1)
};

/// Thread safety: not synchronised.
class token_bucket {
public:
  using duration = clock::duration;
  using time_point = clock::time_point;

  /// Throws std::invalid_argument unless qps > 0 and burst >= 1. (An
  /// unlimited rate is no bucket at all: the caller skips it.)
  explicit token_bucket(token_bucket_params params = {});

  /// Takes one token at `now`; returns how long the caller must wait for it.
  /// A `now` earlier than the previous call counts as no time passing.
  [[nodiscard]] duration reserve(time_point now) noexcept;

  /// Tokens available at the last reservation (negative while in debt).
  [[nodiscard]] double tokens() const noexcept { return tokens_; }

private:
  token_bucket_params params_;
  double tokens_;
  time_point last_{};
  bool started_ = false;
};

}  // namespace kube

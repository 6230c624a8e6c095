#include <kube/workqueue/exponential_rate_limiter.hpp>
#include <kube/workqueue/token_bucket.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace kube::workqueue {

namespace detail {

clock::duration exponential_backoff(clock::duration base, clock::duration max, int failures) noexcept {
  // Floating point, like client-go: 2^failures overflows any integer long
  // before it stops being finite.
  const double backoff = static_cast<double>(base.count()) * std::ldexp(1.0, failures);
  if (!(backoff < static_cast<double>(std::numeric_limits<clock::duration::rep>::max()))) return max;
  return std::min(clock::duration(static_cast<clock::duration::rep>(backoff)), max);
}

}  // namespace detail

token_bucket::token_bucket(token_bucket_params params) : params_(params), tokens_(params.burst) {
  if (!(params.qps > 0.0)) {
    throw std::invalid_argument("token_bucket: qps must be > 0, got " + std::to_string(params.qps));
  }
  if (params.burst < 1) {
    throw std::invalid_argument("token_bucket: burst must be >= 1, got " + std::to_string(params.burst));
  }
}

token_bucket::duration token_bucket::reserve(time_point now) noexcept {
  if (!started_ || now < last_) {
    last_ = now;  // time never runs backwards for the bucket
    started_ = true;
  }
  const double elapsed_s = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(static_cast<double>(params_.burst), tokens_ + elapsed_s * params_.qps);
  last_ = now;
  tokens_ -= 1.0;
  if (tokens_ >= 0.0) return duration::zero();
  const double wait_s = -tokens_ / params_.qps;
  return duration(static_cast<duration::rep>(1e9 * wait_s));
}

}  // namespace kube::workqueue

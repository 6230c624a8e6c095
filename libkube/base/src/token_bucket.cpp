#include <kube/base/token_bucket.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace kube {

token_bucket::token_bucket(token_bucket_params params)
    : params_(params),
      tokens_(params.burst) {
  if (!(params.qps > 0.0)) {
    throw std::invalid_argument("token_bucket: qps must be > 0, got " + std::to_string(params.qps));
  }
  if (params.burst < 1) {
    throw std::invalid_argument("token_bucket: burst must be >= 1, got " + std::to_string(params.burst));
  }
}

token_bucket::duration token_bucket::reserve(time_point now) noexcept {
  // x/time/rate's advance(): a time before the last one refills nothing and
  // becomes the new "last".
  if (!started_ || now < last_) {
    last_ = now;
    started_ = true;
  }
  const double elapsed_s = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(static_cast<double>(params_.burst), tokens_ + elapsed_s * params_.qps);
  last_ = now;
  tokens_ -= 1.0;
  if (tokens_ >= 0.0) return duration::zero();
  // x/time/rate's durationFromTokens: truncated to whole nanoseconds.
  const double wait_s = -tokens_ / params_.qps;
  return duration(static_cast<duration::rep>(1e9 * wait_s));
}

}  // namespace kube

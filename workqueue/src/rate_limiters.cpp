#include <kube/workqueue/exponential_rate_limiter.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

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
}  // namespace kube::workqueue

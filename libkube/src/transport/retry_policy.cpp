#include "transport/retry_policy.hpp"

#include <boost/asio/error.hpp>

namespace kube::detail {

retry_action retry_policy::next(const attempt_outcome& o) noexcept {
  using kind = retry_action::kind;
  namespace aerr = boost::asio::error;
  if (o.ec == aerr::operation_aborted) return {};

  const bool reset = o.ec == aerr::connection_reset;
  if (o.ec && o.connection_lost && retries_ < max_retries_) {
    if (reset && !idempotent_) return {};
    ++retries_;
    return {kind::retry, reset ? std::chrono::milliseconds(1000) : std::chrono::milliseconds(0)};
  }

  if ((o.http_status == 429 || o.http_status >= 500) && o.retry_after >= 0 && !o.ec) {
    if (retries_ >= max_retries_) return {kind::give_up, {}};
    ++retries_;
    return {kind::retry, std::chrono::seconds(o.retry_after)};
  }

  if (o.http_status == 401 && !refreshed_) {
    refreshed_ = true;
    return {kind::refresh_and_retry, {}};
  }
  return {};
}

}  // namespace kube::detail

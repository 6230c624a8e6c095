#include "transport/retry_policy.hpp"

#include <boost/asio/error.hpp>

namespace kube::detail {

retry_action retry_policy::next(const attempt_outcome& o) noexcept {
  using kind = retry_action::kind;
  namespace aerr = boost::asio::error;
  if (o.ec == aerr::operation_aborted) return {};

  // Go's persistConn.shouldRetryRequest: only a reused connection, and
  // either nothing was written or a replayable request lost the connection
  // before the answer began. The client's own timeout is the caller's
  // deadline, not a lost connection.
  const bool lost_reused = o.ec && o.reused && o.ec != client_errc::timeout;
  if (lost_reused && o.nothing_received && !o.nothing_written && !replayable_) {
    return {kind::done, {}, true};
  }
  if (o.ec && retries_ < max_retries_) {
    if (lost_reused && (o.nothing_written || (replayable_ && o.nothing_received))) {
      ++retries_;
      return {kind::retry, std::chrono::milliseconds(0)};
    }
    // client-go's rest client: a GET whose connection was reset, after a second.
    if (o.ec == aerr::connection_reset && replayable_) {
      ++retries_;
      return {kind::retry, std::chrono::milliseconds(1000)};
    }
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

#pragma once

// Internal: the client's retry decision, without sockets or timers. The
// request coroutines (transport/round_trip.cpp, watch/watch_stream.cpp)
// report each attempt's outcome and carry out the action returned.
//
// The rules, in order:
// - a cancelled attempt ends the request;
// - a pooled keep-alive connection that failed before any response byte
//   (the server closed it while idle) is retried at once on a new
//   connection; a reset connection is retried after a second for GET and
//   HEAD only (client-go's rule);
// - 429 and 5xx answers carrying Retry-After are retried after the time the
//   server asked for; past `max_retries` the request fails with
//   client_errc::too_many_retries;
// - a 401 asks once for fresh credentials (token file, exec plugin) and
//   retries when the authenticator had something to refresh.
// Connection retries and Retry-After share one count, `max_retries`.

#include <kube/error.hpp>
#include <kube/rest/request.hpp>

#include <chrono>

namespace kube::detail {

/// What one attempt came to, as the policy needs to know it.
struct attempt_outcome {
  error_code ec;                 ///< transport failure (empty when an answer arrived)
  bool connection_lost = false;  ///< the exchange was reset, or a reused connection failed before any response byte
  unsigned http_status = 0;      ///< the answer's status; 0 when none arrived
  int retry_after = -1;          ///< the Retry-After header in seconds; -1 when absent
};

struct retry_action {
  enum class kind {
    done,               ///< hand the outcome to the caller
    retry,              ///< try again after `delay` (zero: at once)
    refresh_and_retry,  ///< invalidate the credentials; retry if there was something to refresh, else done
    give_up,            ///< fail with client_errc::too_many_retries
  };
  kind what = kind::done;
  std::chrono::milliseconds delay{0};
};

class retry_policy {
public:
  /// `max_retries`: connection retries and Retry-After answers followed at
  /// most this often; 0 disables both (streams are opened once).
  retry_policy(http_method method, int max_retries) noexcept
      : idempotent_(method == http_method::get || method == http_method::head),
        max_retries_(max_retries) {}

  /// The action after an attempt; counts the retries it grants.
  retry_action next(const attempt_outcome& o) noexcept;

  [[nodiscard]] int retries() const noexcept { return retries_; }

private:
  bool idempotent_;
  int max_retries_;
  int retries_ = 0;
  bool refreshed_ = false;
};

}  // namespace kube::detail

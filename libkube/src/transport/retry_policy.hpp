#pragma once

// Internal: the client's retry decision, without sockets or timers. The
// request coroutines (transport/round_trip.cpp, watch/watch_stream.cpp)
// report each attempt's outcome and carry out the action returned.
//
// The rules, in order:
// - a cancelled attempt ends the request;
// - a request is sent again only when that cannot do it twice (Go's
//   transport, which client-go uses, keeps the same rule): on a reused
//   keep-alive connection, at once on a new one, when no byte of the
//   request was written (any method), or when a GET or HEAD got no response
//   byte because the server closed the idle connection or the read failed;
//   never after the client's own timeout, and never a POST, PUT, PATCH or
//   DELETE that was written;
// - a reset connection is retried after a second for GET and HEAD only
//   (client-go's rest client);
// - 429 and 5xx answers carrying Retry-After are retried after the time the
//   server asked for; past `max_retries` the request fails with
//   client_errc::too_many_retries;
// - a 401 asks once for fresh credentials (token file, exec plugin) and
//   retries when the authenticator had something to refresh.
// Connection retries and Retry-After share one count, `max_retries`.

#include <kube/error.hpp>
#include <kube/transport/request.hpp>

#include <chrono>

namespace kube::detail {

/// What one attempt came to, as the policy needs to know it.
struct attempt_outcome {
  error_code ec = {};             ///< transport failure (empty when an answer arrived)
  unsigned http_status = 0;       ///< the answer's status; 0 when none arrived
  int retry_after = -1;           ///< the Retry-After header in seconds; -1 when absent
  bool reused = false;            ///< the attempt ran on a pooled keep-alive connection
  bool nothing_written = false;   ///< it failed before any byte of the request was written
  bool nothing_received = false;  ///< it failed before any byte of the response arrived
  std::size_t streamed = 0;       ///< body bytes (decoded) handed to a body_consumer
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
  /// done: a written request that lost its reused connection before any
  /// answer, not sent again because the server may have applied it (the
  /// caller says so in its error).
  bool not_replayed = false;
};

class retry_policy {
public:
  /// `max_retries`: connection retries and Retry-After answers followed at
  /// most this often; 0 disables both (streams are opened once).
  retry_policy(http_method method, int max_retries) noexcept
      : replayable_(method == http_method::get || method == http_method::head),
        max_retries_(max_retries) {}

  /// The action after an attempt; counts the retries it grants.
  retry_action next(const attempt_outcome& o) noexcept;

  [[nodiscard]] int retries() const noexcept { return retries_; }

private:
  bool replayable_;  ///< GET and HEAD: Go's Request.isReplayable for our requests
  int max_retries_;
  int retries_ = 0;
  bool refreshed_ = false;
};

}  // namespace kube::detail

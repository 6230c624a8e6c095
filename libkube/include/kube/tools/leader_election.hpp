#pragma once

// Leader election on a coordination.k8s.io/v1 Lease, with client-go's
// semantics (tools/leaderelection): several replicas run a leader_elector on
// the same Lease; at most one of them holds it at a time.
//
// Rules (as client-go's LeaderElector and LeaseLock):
//   - acquire and renew read the Lease and then create or update it; every
//     update carries the resourceVersion of the Lease last read, so of two
//     candidates writing the same version one gets `conflict` and retries
//     later;
//   - a Lease held by someone else expires lease_duration after THIS process
//     last saw its record change (local observation time on a monotonic
//     clock), never by comparing the server's renewTime with our clock, so
//     clock skew between replicas does not matter;
//   - candidates retry every retry_period with jitter (up to 1.2 x retry_period
//     more); the leader renews every retry_period and gives up leadership when
//     it could not renew within renew_deadline;
//   - on cancellation the leader (release_on_cancel) writes a record with an
//     empty holder and leaseDurationSeconds=1, so a follower takes over at its
//     next retry instead of waiting for expiry.

#include <kube/rest/client.hpp>
#include <kube/detail/initiate.hpp>
#include <kube/error.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace kube {

/// The holder record a Lease stores (client-go's LeaderElectionRecord), as
/// read from or written to spec of a coordination.k8s.io/v1 Lease. Times are
/// the server's MicroTime strings ("2024-05-01T10:00:00.123456Z"); they are
/// informational only: expiry uses local observation time.
struct leader_election_record {
  std::string holder_identity;
  int lease_duration_seconds = 0;
  std::string acquire_time;
  std::string renew_time;
  int leader_transitions = 0;

  bool operator==(const leader_election_record&) const = default;
};

/// What a leader_elector does and how it reports it.
struct leader_elector_params {
  std::string lease_namespace;  ///< required
  std::string lease_name;       ///< required
  std::string identity;         ///< required, unique per replica (e.g. pod name)

  /// How long a non-leader waits, after it last saw the Lease change,
  /// before it may take the Lease. Whole seconds (the Lease stores seconds).
  std::chrono::milliseconds lease_duration = std::chrono::seconds(15);
  /// How long the leader keeps retrying a failed renewal before it gives up.
  std::chrono::milliseconds renew_deadline = std::chrono::seconds(10);
  /// The pause between attempts (candidates add up to 1.2x jitter).
  std::chrono::milliseconds retry_period = std::chrono::seconds(2);
  /// On cancellation, the leader empties the holder (leaseDurationSeconds=1).
  bool release_on_cancel = true;

  /// Runs (as a child coroutine of async_run, on the elector's executor)
  /// when this replica becomes leader. It receives terminal cancellation
  /// when leadership is lost or async_run is cancelled, and async_run waits
  /// for it to finish before releasing the Lease. Returning early is fine
  /// (leadership is kept); an exception other than the cancellation makes
  /// async_run release the Lease and complete with that error.
  std::function<boost::asio::awaitable<void>()> on_started_leading;
  /// Awaited after leading ended (after the release, if any). Not called if
  /// this replica never led (client-go calls it always; we do not).
  std::function<boost::asio::awaitable<void>()> on_stopped_leading;
  /// Started (detached, not awaited) whenever the observed holder changes to
  /// a non-empty identity, including this replica's own.
  std::function<boost::asio::awaitable<void>(std::string identity)> on_new_leader;

  /// The monotonic clock used for expiry decisions (tests inject one);
  /// empty: std::chrono::steady_clock::now.
  std::function<std::chrono::steady_clock::time_point()> now;
};

/// Checks a configuration as client-go's NewLeaderElector does:
/// lease_duration > renew_deadline > 1.2 x retry_period, all positive,
/// lease_duration whole seconds, names and identity non-empty.
/// Throws kube::error(client_errc::invalid_config) whose message names the
/// field(s) and values at fault.
void validate(const leader_elector_params& config);

/// client-go's tryAcquireOrRenew decisions without I/O, on an explicit
/// monotonic time: what this replica last observed, when it observed it,
/// and whether it may write. leader_elector drives it; it is public so the
/// rules can be tested (and reused) with a manual clock.
///
/// Thread safety: none (a plain value).
class leader_election_state {
public:
  using time_point = std::chrono::steady_clock::time_point;

  leader_election_state(std::string identity, std::chrono::seconds lease_duration)
      : identity_(std::move(identity)),
        lease_duration_(lease_duration) {}

  /// The record as read from the server at `now`. Resets the observation
  /// time only when the record differs from the one observed before (a
  /// leader that keeps renewing changes renewTime, so it stays valid; a dead
  /// one stops changing it, so it expires lease_duration later).
  void observe(const leader_election_record& r, time_point now);
  /// After a successful create/update of `r` at `now`: it is the observed
  /// record, observed now.
  void wrote(const leader_election_record& r, time_point now);
  /// Forget everything (the Lease was deleted).
  void reset() noexcept { observed_.reset(); }

  /// The observed record's holder is this identity.
  [[nodiscard]] bool is_leader() const noexcept;
  /// observed time + observed leaseDurationSeconds is after now.
  [[nodiscard]] bool lease_valid(time_point now) const noexcept;
  /// After a read: false when another holder's lease is still valid (wait).
  [[nodiscard]] bool may_write(time_point now) const noexcept;
  /// The leader's optimistic fast path (renew without reading first).
  [[nodiscard]] bool may_renew_optimistically(time_point now) const noexcept { return is_leader() && lease_valid(now); }

  /// The record to write to acquire or renew, stamped `wall_now`: keeps
  /// acquireTime and the transition count when renewing, counts a
  /// transition when taking over.
  [[nodiscard]] leader_election_record desired(const std::string& wall_now) const;
  /// The record that releases the Lease: empty holder, 1 s duration.
  [[nodiscard]] leader_election_record released(const std::string& wall_now) const;

  [[nodiscard]] const std::optional<leader_election_record>& observed() const noexcept { return observed_; }
  [[nodiscard]] time_point observed_time() const noexcept { return observed_time_; }
  [[nodiscard]] const std::string& identity() const noexcept { return identity_; }

private:
  std::string identity_;
  std::chrono::seconds lease_duration_;
  std::optional<leader_election_record> observed_;
  time_point observed_time_{};
};

namespace detail {
class leader_elector_impl;
void leader_elector_start(std::shared_ptr<leader_elector_impl> impl,
                          boost::asio::any_completion_handler<void(error_code)> handler);
}  // namespace detail

/// Runs leader election for one replica over a Lease (see the top of this
/// header for the rules). Built on kube::client alone.
///
/// async_run(token): completion void(error_code). Runs until cancelled
/// (terminal cancellation through the token's slot, e.g. a
/// cancellation_signal or awaitable operators), then (release_on_cancel)
/// releases the Lease if it holds it, and completes with
/// asio::error::operation_aborted. After losing leadership it goes back to
/// campaigning, so on_started_leading may run several times. Completes
/// early with an error when on_started_leading throws, or with
/// client_errc::already_running when called while already running.
/// API errors other than conflict/not_found (e.g. forbidden) are logged and
/// retried like client-go does; they do not end async_run.
///
/// Thread safety: is_leader(), leader() and transitions() may be called from
/// any thread; the rest runs on a strand of the client's executor.
class leader_elector {
public:
  /// Throws kube::error(client_errc::invalid_config) for a bad config (see validate).
  leader_elector(client c, leader_elector_params config);

  template <class Token = use_awaitable_t>
  auto async_run(Token&& token = {}) {
    return detail::initiate_void(
        [impl = impl_](auto handler) mutable { detail::leader_elector_start(std::move(impl), std::move(handler)); },
        std::forward<Token>(token));
  }

  /// This replica holds the Lease (as last observed or written).
  [[nodiscard]] bool is_leader() const noexcept;
  /// The holder last observed ("" when none or not yet read).
  [[nodiscard]] std::string leader() const;
  /// How many times this replica became leader.
  [[nodiscard]] unsigned transitions() const noexcept;
  [[nodiscard]] const leader_elector_params& config() const noexcept;

private:
  std::shared_ptr<detail::leader_elector_impl> impl_;
};

/// The MicroTime string for a wall-clock time ("2024-05-01T10:00:00.123456Z").
[[nodiscard]] std::string format_micro_time(std::chrono::system_clock::time_point t);

}  // namespace kube

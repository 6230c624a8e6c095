#pragma once

// kube::retry_on_conflict / retry_on_error: client-go's
// k8s.io/client-go/util/retry as coroutines. Included by <kube/typed/api.hpp>.

#include <kube/error.hpp>

#include <boost/asio/awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <chrono>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace kube {

/// wait.Backoff: `steps` attempts at most; the pause after attempt i is
/// duration * factor^i (capped at `cap` when non-zero), plus up to
/// jitter * that pause, at random. The SDK's one backoff: retry_on_error
/// and the informer's reflector (kube::informer::backoff_manager) step it.
struct backoff {
  std::chrono::nanoseconds duration = std::chrono::milliseconds(10);
  double factor = 1.0;
  double jitter = 0.1;
  int steps = 5;
  std::chrono::nanoseconds cap{0};

  /// The pause before the next attempt, given a random number in [0, 1);
  /// advances the state (client-go's Backoff.Step). Pure: tests pass the
  /// random numbers.
  /// Once `steps` is used up (or the cap reached) the pause stays at
  /// `duration`, jittered, as in client-go.
  std::chrono::nanoseconds step(double random01) noexcept {
    auto d = duration;
    if (steps < 1) return d + jitter_of(d, random01);
    --steps;
    if (factor != 0) {
      auto next = std::chrono::nanoseconds(static_cast<long long>(static_cast<double>(duration.count()) * factor));
      if (cap.count() > 0 && next > cap) {
        next = cap;
        steps = 0;
      }
      duration = next;
    }
    return d + jitter_of(d, random01);
  }

private:
  [[nodiscard]] std::chrono::nanoseconds jitter_of(std::chrono::nanoseconds d, double random01) const noexcept {
    if (jitter <= 0) return {};
    return std::chrono::nanoseconds(static_cast<long long>(random01 * jitter * static_cast<double>(d.count())));
  }
};

/// client-go's retry.DefaultRetry: 5 attempts, 10 ms apart (+10% jitter).
inline constexpr backoff default_retry{};
/// client-go's retry.DefaultBackoff: 4 attempts, 10 ms, x5 (+10% jitter).
inline constexpr backoff default_backoff{std::chrono::milliseconds(10), 5.0, 0.1, 4, {}};

namespace detail {
/// Sleeps on the current coroutine's executor (a steady_timer, in compiled code).
boost::asio::awaitable<void> retry_sleep(std::chrono::nanoseconds d);
/// A random number in [0, 1) for jitter.
double retry_random() noexcept;

struct real_sleep {
  boost::asio::awaitable<void> operator()(std::chrono::nanoseconds d) const { return retry_sleep(d); }
};

template <class F>
using retry_value_t = typename std::invoke_result_t<F&>::value_type;
}  // namespace detail

/// Runs `fn` (a callable returning boost::asio::awaitable<R>) until it
/// succeeds, it throws something `retriable` rejects, or `b.steps` attempts
/// were made; then returns its result or rethrows the last exception.
/// `retriable(const std::exception_ptr&)` decides. `sleep(duration)` returns
/// an awaitable<void> that pauses (default: a steady_timer on the caller's
/// executor; tests pass a fake).
template <class Retriable, class F, class Sleep = detail::real_sleep>
boost::asio::awaitable<detail::retry_value_t<F>> retry_on_error(Retriable retriable, F fn, backoff b = default_retry,
                                                                Sleep sleep = {}) {
  using R = detail::retry_value_t<F>;
  std::exception_ptr failure;
  for (bool first = true;; first = false) {
    // As wait.ExponentialBackoff: a backoff whose cap was reached (steps
    // set to 0) ends after that pause; fn always runs at least once.
    if (!first && b.steps <= 0) std::rethrow_exception(failure);
    try {
      if constexpr (std::is_void_v<R>) {
        co_await fn();
        co_return;
      } else {
        co_return co_await fn();
      }
    } catch (...) {
      failure = std::current_exception();
    }
    if (b.steps <= 1 || !retriable(failure)) std::rethrow_exception(failure);
    const auto pause = b.step(detail::retry_random());
    co_await sleep(pause);
  }
}

/// True when `e` holds a boost::system::system_error (kube::error is one)
/// whose code is api_errc::conflict.
[[nodiscard]] inline bool is_conflict(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const boost::system::system_error& x) {
    return x.code() == api_errc::conflict;
  } catch (...) {
    return false;
  }
}

/// client-go's retry.RetryOnConflict: re-runs `fn` while it fails with
/// api_errc::conflict (the object changed since it was read), with
/// default_retry: 5 attempts, ~10 ms apart. `fn` must read the object again
/// each time (get, modify, replace); a conflict after the last attempt, and
/// any other error at once, is rethrown.
///
///   co_await kube::retry_on_conflict([&]() -> asio::awaitable<void> {
///     auto cm = co_await cms.async_get("a");
///     (*cm.data)["k"] = "v";
///     co_await cms.async_replace(cm);
///   });
template <class F, class Sleep = detail::real_sleep>
boost::asio::awaitable<detail::retry_value_t<F>> retry_on_conflict(F fn, backoff b = default_retry, Sleep sleep = {}) {
  return retry_on_error([](const std::exception_ptr& e) { return is_conflict(e); }, std::move(fn), b, std::move(sleep));
}

}  // namespace kube

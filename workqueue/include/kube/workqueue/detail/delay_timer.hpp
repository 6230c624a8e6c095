#pragma once

// When the delaying part of a queue wakes up: one timer per queue, armed for
// the earliest ready time only (which items are ready then is the delay
// heap's decision, made by the owner).
//
// A wake-up less than poll_window away is not given to the OS timer: with
// Asio's epoll reactor every re-arm is a timerfd_settime syscall (several
// microseconds, once per earliest item when ready times are dense), so the
// wake-up is posted instead and the owner re-checks its clock after the
// handlers already queued. Wake-ups that find nothing ready are bounded
// (max_idle_polls in a row), after which the OS timer is used, so an idle
// executor does not spin. The steady_timer is made on first use: a timer
// starts the io_context's reactor, after which the scheduler polls epoll
// between handlers.
//
// Executor only.

#include <kube/base/clock.hpp>
#include <kube/workqueue/error.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>

namespace kube::workqueue::detail {

class delay_timer {
public:
  using duration = clock::duration;
  using time_point = clock::time_point;

  explicit delay_timer(boost::asio::any_io_executor ex)
      : ex_(std::move(ex)) {}
  delay_timer(const delay_timer&) = delete;
  delay_timer& operator=(const delay_timer&) = delete;

  /// Whether a wake-up at or before `next` is armed already.
  [[nodiscard]] bool armed_by(time_point next) const noexcept { return armed_ && armed_for_ <= next; }

  /// Arms the wake-up for `next` (`now`: the clock's time), replacing the
  /// armed one: `due()` then runs on the executor, unless arm() or cancel()
  /// comes first. `due` must keep the owner, and so this timer, alive.
  template <class Due>
  void arm(time_point next, time_point now, Due due) {
    armed_ = true;
    armed_for_ = next;
    const std::uint64_t gen = ++gen_;
    if (next - now <= poll_window && idle_polls_ < max_idle_polls) {
      if (os_waiting_) {  // superseded
        os_waiting_ = false;
        timer_->cancel();
      }
      boost::asio::post(ex_, [this, gen, due = std::move(due)]() mutable {
        if (gen == gen_) due();
      });
      return;
    }
    idle_polls_ = 0;
    if (!timer_) timer_.emplace(ex_);
    timer_->expires_at(next);
    os_waiting_ = true;
    timer_->async_wait([this, gen, due = std::move(due)](error_code ec) mutable {
      if (gen == gen_) os_waiting_ = false;
      if (ec || gen != gen_) return;  // re-armed or cancelled
      due();
    });
  }

  /// Called by `due()`: nothing is armed any more; `found_ready` says
  /// whether this wake-up found an item ready (polls that found none are
  /// counted).
  void fired(bool found_ready) noexcept {
    armed_ = false;
    idle_polls_ = found_ready ? 0 : idle_polls_ + 1;
  }

  /// No wake-up is delivered after this (until the next arm()).
  void cancel() {
    armed_ = false;
    os_waiting_ = false;
    ++gen_;
    if (timer_) timer_->cancel();
  }

private:
  static constexpr duration poll_window = std::chrono::microseconds(50);
  static constexpr unsigned max_idle_polls = 64;

  boost::asio::any_io_executor ex_;
  std::optional<boost::asio::steady_timer> timer_;
  bool armed_ = false;
  bool os_waiting_ = false;  // an async_wait of the current generation
  time_point armed_for_{};
  std::uint64_t gen_ = 0;
  unsigned idle_polls_ = 0;  // wake-ups in a row that found nothing ready
};

}  // namespace kube::workqueue::detail

#pragma once

// What a queue reports to its metrics hooks (metrics::workqueue_metrics): it keeps when each queued item
// was added and when each held item was handed out, turns them into queue
// latency and work duration, and reports unfinished work every period while
// items are processed (client-go's updateUnfinishedWork loop).
//
// Without hooks nothing is kept and no call is made: each public call is one
// inline test; the recording is out of line. Executor only. A hook that
// throws, or running out of memory for a timestamp, leaves the caller's
// state unchanged (the owner records before it changes anything).

#include <kube/base/clock.hpp>
#include <kube/workqueue/error.hpp>
#include <kube/base/metrics.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/unordered/unordered_flat_map.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

namespace kube::workqueue::detail {

template <class T, class Hash, class KeyEqual>
class metrics_recorder {
public:
  using duration = clock::duration;
  using time_point = clock::time_point;

  metrics_recorder(std::shared_ptr<kube::metrics::workqueue_metrics> hooks, const clock& time_source,
                   duration unfinished_period, boost::asio::any_io_executor ex)
      : hooks_(std::move(hooks)),
        clock_(&time_source),
        period_(unfinished_period),
        ex_(std::move(ex)) {}

  [[nodiscard]] bool enabled() const noexcept { return hooks_ != nullptr; }

  // `n` is the item's node; its key() is read only when there are hooks.

  /// An item became queued.
  template <class Node>
  void added(const Node& n) {
    if (hooks_) record_add(n.key());
  }

  /// An item was handed to a worker. `ticker()` is called when the periodic
  /// unfinished-work report must start: it returns a callable, run on each
  /// tick, that reports and returns whether items are still processed (and
  /// keeps the owner alive).
  template <class Node, class MakeTicker>
  void handed_out(const Node& n, MakeTicker&& ticker) {
    if (!hooks_) return;
    record_get(n.key());
    if (!ticking_ && period_ > duration::zero() && !clock_->is_manual()) tick_after_period(ticker());
  }

  /// A worker called done() for an item it held.
  template <class Node>
  void finished(const Node& n) {
    if (hooks_) record_done(n.key());
  }

  void retried() {
    if (hooks_) hooks_->on_retry();
  }

  /// Reports the age of the held items now.
  void report_unfinished() {
    if (!hooks_) return;
    const time_point now = clock_->now();
    duration total{};
    duration longest{};
    for (const auto& [item, started] : start_times_) {
      const duration age = now - started;
      total += age;
      longest = std::max(longest, age);
    }
    hooks_->on_unfinished_work(total, longest);
  }

  /// No more periodic reports.
  void stop() {
    if (timer_) timer_->cancel();
  }

private:
  [[gnu::noinline]] void record_add(const T& item) {
    add_times_.try_emplace(item, clock_->now());  // (may run out of memory: counted after)
    hooks_->on_add();
  }

  [[gnu::noinline]] void record_get(const T& item) {
    const time_point now = clock_->now();
    start_times_.insert_or_assign(item, now);
    auto it = add_times_.find(item);
    hooks_->on_get(it != add_times_.end() ? now - it->second : duration{});
    if (it != add_times_.end()) add_times_.erase(it);
  }

  [[gnu::noinline]] void record_done(const T& item) {
    auto it = start_times_.find(item);
    if (it == start_times_.end()) return;
    hooks_->on_done(clock_->now() - it->second);
    start_times_.erase(it);
  }

  template <class Tick>
  void tick_after_period(Tick tick) {
    ticking_ = true;
    if (!timer_) timer_.emplace(ex_);
    timer_->expires_after(period_);
    timer_->async_wait([this, tick = std::move(tick)](error_code ec) mutable {
      ticking_ = false;
      if (ec) return;
      if (tick()) tick_after_period(std::move(tick));
    });
  }

  std::shared_ptr<kube::metrics::workqueue_metrics> hooks_;
  const clock* clock_;
  duration period_;
  boost::asio::any_io_executor ex_;
  boost::unordered_flat_map<T, time_point, Hash, KeyEqual> add_times_;
  boost::unordered_flat_map<T, time_point, Hash, KeyEqual> start_times_;
  std::optional<boost::asio::steady_timer> timer_;
  bool ticking_ = false;
};

}  // namespace kube::workqueue::detail

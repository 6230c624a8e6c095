#pragma once

// What a queue reports to its metrics hooks (metrics::workqueue_metrics): it
// keeps when each queued item was added and when each held item was handed
// out, turns them into queue latency and work duration, and reports
// unfinished work every period while items are processed (client-go's
// updateUnfinishedWork loop).
//
// The times are kept by node id (node_pool.hpp), in a table beside the
// nodes: a slot per cell of each slab, made when the cell's node is first
// added, so recording an item neither copies nor hashes it. The held items
// are linked through their slots in the order they were handed out, so the
// unfinished-work report walks the held items only.
//
// Items queued together, in one step of the executor (a batch of adds from
// other threads, the delayed items that came due), are stamped with one
// reading of the clock, taken before the batch (a batch_stamp): reading the
// clock costs about as much as the rest of an add. Their queue latency then
// counts from the start of the batch (an add from another thread was made
// earlier still, when it was pushed).
//
// Without hooks nothing is kept and no call is made: each public call is one
// inline test; the recording is out of line. Executor only. A hook that
// throws, or running out of memory for a slot, leaves the caller's state
// unchanged (the owner records before it changes anything; only added()
// makes a slot, and a node is added before it is handed out).

#include <kube/base/clock.hpp>
#include <kube/base/metrics.hpp>
#include <kube/workqueue/error.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace kube::workqueue::detail {

class metrics_recorder {
public:
  using duration = clock::duration;
  using time_point = clock::time_point;
  using id_type = std::uint32_t;

  metrics_recorder(std::shared_ptr<kube::metrics::workqueue_metrics> hooks, const clock& time_source,
                   duration unfinished_period, boost::asio::any_io_executor ex);

  [[nodiscard]] bool enabled() const noexcept { return hooks_ != nullptr; }

  /// The item of node `id` became queued.
  void added(id_type id) {
    if (hooks_) record_add(id);
  }

  /// While one lives, added() stamps items with the time it was made (or
  /// `now`, a reading the owner has) instead of reading the clock. Not
  /// nested.
  class batch_stamp {
  public:
    explicit batch_stamp(metrics_recorder& r)
        : r_(r) {
      if (r_.hooks_) r_.batch_now_ = r_.clock_->now();
    }
    batch_stamp(metrics_recorder& r, time_point now)
        : r_(r) {
      if (r_.hooks_) r_.batch_now_ = now;
    }
    batch_stamp(const batch_stamp&) = delete;
    batch_stamp& operator=(const batch_stamp&) = delete;
    ~batch_stamp() { r_.batch_now_.reset(); }

  private:
    metrics_recorder& r_;
  };

  /// The item of node `id` was handed to a worker. `ticker()` is called when
  /// the periodic unfinished-work report must start: it returns a callable,
  /// run on each tick, that reports and returns whether items are still
  /// processed (and keeps the owner alive).
  template <class MakeTicker>
  void handed_out(id_type id, MakeTicker&& ticker) {
    if (!hooks_) return;
    record_get(id);
    if (!ticking_ && period_ > duration::zero() && !clock_->is_manual()) tick_after_period(ticker());
  }

  /// A worker called done() for the item of node `id`, which it held.
  void finished(id_type id) {
    if (hooks_) record_done(id);
  }

  void retried() {
    if (hooks_) hooks_->on_retry();
  }

  /// Reports the age of the held items now.
  void report_unfinished();

  /// No more periodic reports.
  void stop() {
    if (timer_) timer_->cancel();
  }

private:
  // One node's times. prev/next link the held items (no_id: none).
  struct slot {
    time_point added;
    time_point started;
    id_type prev;
    id_type next;
  };
  static constexpr id_type no_id = 0;  // node ids start at 1

  void record_add(id_type id);
  void record_get(id_type id);
  void record_done(id_type id);
  slot& at(id_type id) noexcept;  // a slot added() made
  slot& make(id_type id);

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
  // By slab number: a slot per cell (index cell - 1), grown as cells are used.
  std::vector<std::vector<slot>> slabs_;
  std::optional<time_point> batch_now_;  // set by a batch_stamp
  id_type held_head_ = no_id;            // handed out first
  id_type held_tail_ = no_id;
  std::optional<boost::asio::steady_timer> timer_;
  bool ticking_ = false;
};

}  // namespace kube::workqueue::detail

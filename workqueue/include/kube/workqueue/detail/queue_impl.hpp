#pragma once

// Size: about 670 lines, the one place that combines the parts listed below
// under client-go's rules; each part is a header of its own.
//
// The state behind queue / delaying_queue / rate_limited_queue: client-go's
// rules (dirty, processing and waiting, as bits of one node per item), and
// the wiring of the parts that hold one idea each:
//   - queue_node, node_pool, flat_index: one node per item, found by item;
//   - ready_ring: the ready items in order;
//   - delay_heap, delay_timer: what waits for a delay, and when to wake up;
//   - remote_inbox, message_blocks: add() from other threads;
//   - metrics_recorder: what the metrics hooks are told;
//   - executor_probe: whether a call runs on the queue's executor.
//
// Everything is touched only on the queue's executor, except the atomics
// (the inbox, the shutdown flag, the length).

#include <kube/base/clock.hpp>
#include <kube/workqueue/detail/delay_heap.hpp>
#include <kube/workqueue/detail/delay_timer.hpp>
#include <kube/workqueue/detail/executor_probe.hpp>
#include <kube/workqueue/detail/flat_index.hpp>
#include <kube/workqueue/detail/hashed_key.hpp>
#include <kube/workqueue/detail/message_blocks.hpp>
#include <kube/workqueue/detail/metrics_recorder.hpp>
#include <kube/workqueue/detail/node_pool.hpp>
#include <kube/workqueue/detail/queue_node.hpp>
#include <kube/workqueue/detail/ready_ring.hpp>
#include <kube/workqueue/detail/remote_inbox.hpp>
#include <kube/workqueue/error.hpp>
#include <kube/workqueue/queue_params.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace kube::workqueue::detail {

namespace asio = boost::asio;

template <class T, class Hash, class KeyEqual>
class queue_impl : public std::enable_shared_from_this<queue_impl<T, Hash, KeyEqual>> {
public:
  using get_handler = asio::any_completion_handler<void(error_code, T)>;
  using drain_handler = asio::any_completion_handler<void(error_code)>;
  using duration = clock::duration;
  using time_point = clock::time_point;

  queue_impl(asio::any_io_executor ex, queue_params params)
      : ex_(std::move(ex)),
        probe_(ex_),
        clock_(params.time_source != nullptr ? params.time_source : &real_clock()),
        metrics_(std::move(params.metrics), *clock_, params.unfinished_work_period, ex_),
        timer_(ex_) {}

  queue_impl(const queue_impl&) = delete;
  queue_impl& operator=(const queue_impl&) = delete;

  ~queue_impl() {
    for (remote_msg* m = inbox_.take(); m != nullptr;) messages::destroy(std::exchange(m, m->next));
    // Every node is indexed (the delay heap only points at indexed nodes).
    index_.for_each([this](node* n) { pool_.destroy(n); });
  }

  /// After construction (needs shared_from_this): a manual clock wakes the
  /// delaying part through its advance notifications instead of the timer.
  void start() {
    if (clock_->is_manual()) {
      // Every advance, not one due time: the earliest delayed item changes.
      clock_->on_advance(
          [weak = this->weak_from_this()] {
            auto self = weak.lock();
            if (!self) return false;
            asio::post(self->ex_, [self] { self->on_timer(); });
            return true;
          },
          clock::time_point::max());
    }
  }

  // ---- any thread ---------------------------------------------------------

  [[nodiscard]] bool on_executor() const noexcept { return probe_.running_in_this_thread(); }
  [[nodiscard]] const asio::any_io_executor& executor() const noexcept { return ex_; }
  [[nodiscard]] const clock& time_source() const noexcept { return *clock_; }
  [[nodiscard]] bool shutting_down() const noexcept { return shutting_down_.load(std::memory_order_acquire); }
  [[nodiscard]] std::size_t len() const noexcept { return len_.load(std::memory_order_relaxed); }

  template <class U>
  void add(U&& item) {
    if (on_executor()) {
      add_local(std::forward<U>(item));
    } else {
      push_remote(std::forward<U>(item), false, time_point{});
    }
  }

  template <class U>
  void add_after(U&& item, duration d) {
    if (shutting_down()) return;
    if (on_executor()) {
      add_after_local(std::forward<U>(item), d);
      return;
    }
    // Count the retry on the executor; the ready time is fixed now, at the call.
    push_remote(std::forward<U>(item), true, d <= duration::zero() ? time_point::min() : clock_->now() + d);
  }

  void shutdown() {
    shutting_down_.store(true, std::memory_order_release);
    asio::dispatch(ex_, [self = this->shared_from_this()] { self->shutdown_local(false, std::nullopt); });
  }

  void shutdown_with_drain(drain_handler h) {
    shutting_down_.store(true, std::memory_order_release);
    asio::dispatch(ex_, [self = this->shared_from_this(), h = std::move(h)]() mutable {
      self->shutdown_local(true, std::move(h));
    });
  }

  // ---- executor only ------------------------------------------------------

  // U is T or const T&: the item is copied into the queue only when it is
  // not there yet.
  template <class U>
  void add_local(U&& item) {
    if (shut_) return;
    const std::size_t hash = traits::hash(item);
    bool made = false;
    node* n = find_or_make(std::forward<U>(item), hash, made);
    mark_added(n, made, hash);
  }

  template <class U>
  void add_after_local(U&& item, duration d) {
    add_after_local(std::forward<U>(item), d, d <= duration::zero() ? time_point{} : clock_->now());
  }

  /// `now` is the clock's time at the call (a rate limiter has read it
  /// already; reading the clock costs as much as the rest of the call).
  template <class U>
  void add_after_local(U&& item, duration d, time_point now) {
    if (shut_) return;
    metrics_.retried();
    if (d <= duration::zero()) {
      add_local(std::forward<U>(item));
      return;
    }
    const std::size_t hash = traits::hash(item);
    bool made = false;
    node* n = find_or_make(std::forward<U>(item), hash, made);
    delay(n, now + d, made, hash);
  }

  /// The front item if one is ready now (it is then held by the caller until
  /// done()); nullopt otherwise. Synchronous: no completion is involved.
  std::optional<T> try_get() {
    if (ready_.empty()) return std::nullopt;
    return std::optional<T>(take_front());
  }

  template <class Handler>
  void initiate_get(Handler&& handler) {
    if (!ready_.empty()) {
      T item = take_front();
      complete(std::forward<Handler>(handler), error_code{}, std::move(item));
      return;
    }
    if (shut_) {
      complete(std::forward<Handler>(handler), make_error_code(errc::shut_down), T{});
      return;
    }
    auto slot = asio::get_associated_cancellation_slot(handler);
    auto* w = new waiter{get_handler(std::forward<Handler>(handler)), slot};
    link(w);
    if (slot.is_connected()) slot.template emplace<cancel_get>(cancel_get{this, w});
  }

  void done(const T& item) {
    node* n = recently_taken(item);
    if (n == nullptr) {
      n = lookup(item, traits::hash(item));
      if (n == nullptr) return;
    }
    if ((n->state & st_processing) == 0) return;  // not held by a worker
    // What can fail (out of memory) comes before any change.
    if ((n->state & st_dirty) != 0) reserve_ready();
    metrics_.finished(n->id);
    --processing_;
    n->state &= static_cast<std::uint8_t>(~st_processing);
    if ((n->state & st_dirty) != 0) {
      make_ready(n);
    } else {
      maybe_retire(n);
    }
    if (processing_ == 0 && drain_) finish_drain();
  }

  [[nodiscard]] std::size_t processing() const noexcept { return processing_; }
  [[nodiscard]] std::size_t waiting_for_delay() const noexcept { return heap_.size(); }

  void update_unfinished_work() { metrics_.report_unfinished(); }

private:
  using node = queue_node<T, Hash, KeyEqual>;
  static_assert(sizeof(T) > 32 || sizeof(node) <= 64);
  using view_type = typename node::view_type;
  using traits = item_traits<T, Hash, KeyEqual>;

  // An add()/add_after() from another thread on its way to the executor:
  // made on the calling thread (the item's hash too), pushed onto inbox_,
  // applied and destroyed by the executor's next drain.
  struct remote_msg {
    remote_msg(T&& i, std::size_t h)
        : item(std::move(i)),
          hash(h) {}
    T item;
    std::size_t hash;
    remote_msg* next = nullptr;
    time_point ready_at{};  // add_after: its ready time, min() meaning now
    bool delayed = false;   // add_after
    void* block = nullptr;  // set by message_blocks
  };
  using messages = message_blocks<remote_msg>;

  struct waiter {
    get_handler handler;
    asio::cancellation_slot slot;
    waiter* prev = nullptr;
    waiter* next = nullptr;
  };

  struct cancel_get {
    queue_impl* self;
    waiter* w;
    void operator()(asio::cancellation_type_t) {
      // Nothing was taken for this waiter yet, so any cancellation type is
      // honoured and no item is lost. `w` is nulled: the slot may fire again.
      if (waiter* mine = std::exchange(w, nullptr)) self->cancel_waiter(mine);
    }
  };

  // ---- nodes by item ------------------------------------------------------

  // The index's equality test for `item` (which must outlive it).
  static auto same_as(const view_type& item) {
    return [&item](const node& n) { return n.same(item); };
  }

  node* lookup(view_type item, std::size_t hash) const { return index_.find(hash, same_as(item)); }

  // The item's node: found, or made and indexed with state 0 (`made` says
  // which). The item is copied or moved into a node only when it has none.
  template <class U>
  node* find_or_make(U&& item, std::size_t hash, bool& made) {
    if (node* n = lookup(item, hash)) {
      made = false;
      return n;
    }
    made = true;
    return make_indexed(std::forward<U>(item), hash);
  }

  // Out of line, so that finding a known item (a hot key added again) runs
  // without this path's register saves and stack frame.
  template <class U>
  [[gnu::noinline]] node* make_indexed(U&& item, std::size_t hash) {
    node* n = pool_.create(std::forward<U>(item), hash);
    try {
      index_.insert(n, hash);
    } catch (...) {
      pool_.destroy(n);
      throw;
    }
    return n;
  }

  // A node just made for an add (indexed, state 0) whose add then failed:
  // unindexed and freed, so no node is left that nothing would retire.
  void drop_new(node* n, std::size_t hash) noexcept {
    index_.erase(n, hash);
    pool_.destroy(n);
  }

  // Called when a node may have become idle: neither queued, held nor
  // waiting, and no heap entry points at it. Unindexing is batched: the
  // probes of a batch are independent, so their cache misses overlap, and a
  // key added again soon reuses its node (no allocation).
  void maybe_retire(node* n) {
    if (n->state != 0 || n->heap_refs != 0) return;
    if (n->idle_listed) return;
    n->idle_listed = true;
    idle_.push_back(n);
    if (idle_.size() >= idle_batch) purge_idle();
  }

  void purge_idle() {
    recent_.fill(nullptr);
    constexpr std::size_t ahead = 16;  // slots being fetched while erasing
    for (std::size_t i = 0; i < std::min(ahead, idle_.size()); ++i) index_.prefetch(idle_[i]->hash_lo);
    for (std::size_t i = 0; i < idle_.size(); ++i) {
      if (i + ahead < idle_.size()) index_.prefetch(idle_[i + ahead]->hash_lo);
      node* n = idle_[i];
      n->idle_listed = false;
      if (n->state != 0 || n->heap_refs != 0) continue;  // revived
      index_.erase(n, n->hash_lo);
      pool_.destroy(n);
    }
    idle_.clear();
    index_.maybe_shrink();
  }

  auto unref() {
    return [this](node* n) { maybe_retire(n); };
  }

  // done() usually names an item just handed out: finding its node among the
  // last few handed out (hot in cache) saves hashing and a cache-missing
  // probe of the index.
  node* recently_taken(const T& item) const {
    for (node* r : recent_) {
      if (r != nullptr && r->same(item)) return r;
    }
    return nullptr;
  }

  void note_taken(node* n) noexcept { recent_[recent_next_++ % recent_.size()] = n; }

  // ---- client-go's rules ----------------------------------------------------

  // An add of an item that has a node. What can fail (out of memory: the
  // ready ring, the metrics' timestamps) comes before any change, so a
  // failed add leaves the node as it was.
  void mark_dirty(node* n) {
    if ((n->state & st_active) == 0) {  // idle or only waiting for a delay: a new add
      reserve_ready();
      metrics_.added(n->id);
      n->state |= st_dirty;
      make_ready(n);
      return;
    }
    if ((n->state & st_dirty) != 0) return;  // already queued: stored once
    metrics_.added(n->id);
    n->state |= st_dirty;  // being processed: done() requeues it
  }

  // mark_dirty for the node an add found or made (`made`, then indexed with
  // state 0): if the add fails, a node made for it is dropped.
  void mark_added(node* n, bool made, std::size_t hash) {
    try {
      mark_dirty(n);
    } catch (...) {
      if (made) drop_new(n, hash);
      throw;
    }
  }

  // Room in the ready ring for one more item, unless a parked worker will
  // take it: make_ready() then cannot fail.
  void reserve_ready() {
    if (head_ == nullptr) ready_.reserve_one();
  }

  // `n` was handed to a worker (the caller removed it from the ring, or it
  // never entered it).
  void hand_out(node* n) {
    n->state = static_cast<std::uint8_t>((n->state & st_waiting) | st_processing);
    ++processing_;
    note_taken(n);
    metrics_.handed_out(n->id, [this] {
      return [self = this->shared_from_this()] {
        if (self->shut_) return false;
        self->metrics_.report_unfinished();
        return self->processing_ > 0;
      };
    });
  }

  // `n` is marked dirty and not processing: hand it to the oldest parked
  // worker, or queue it.
  void make_ready(node* n) {
    if (waiter* w = head_) {
      unlink(w);
      hand_out(n);
      w->slot.clear();
      get_handler h = std::move(w->handler);
      delete w;
      complete(std::move(h), error_code{}, n->copy());
      return;
    }
    ready_.push(n->id);
    len_.store(ready_.size(), std::memory_order_relaxed);
  }

  // How far take_front loads ahead: nodes 12 places, their items' bytes 4
  // (that node was asked for 8 takes earlier). Measured on add_after_random,
  // whose items come out in time order, i.e. in random memory order.
  static constexpr std::size_t node_ahead = 12;
  static constexpr std::size_t item_ahead = 4;

  // The worker gets a copy; the node keeps the item as the index key.
  T take_front() {
    // Nodes queued in ready-time order (from the delay heap) or revived
    // ones lie anywhere in memory: start loading the ones about to be taken,
    // and the items of nearer ones (their nodes have arrived by now).
    if (ready_.size() > node_ahead) __builtin_prefetch(pool_.node(ready_.at(node_ahead)));
    if (ready_.size() > item_ahead) pool_.node(ready_.at(item_ahead))->prefetch();
    node* n = pool_.node(ready_.pop());
    len_.store(ready_.size(), std::memory_order_relaxed);
    hand_out(n);
    return n->copy();
  }

  // ---- parked workers -------------------------------------------------------

  // Completion is always posted, never invoked inside the initiating call.
  // (A parked waiter is type-erased in any_completion_handler, whose
  // any_completion_executor cannot be required to be blocking.never, so the
  // post goes through ex_ as asio::post does it.)
  template <class Handler, class... Args>
  void complete(Handler&& h, Args&&... args) {
    asio::post(ex_, asio::append(std::forward<Handler>(h), std::forward<Args>(args)...));
  }

  void link(waiter* w) {
    w->prev = tail_;
    (tail_ != nullptr ? tail_->next : head_) = w;
    tail_ = w;
    update_work();
  }

  void unlink(waiter* w) {
    (w->prev != nullptr ? w->prev->next : head_) = w->next;
    (w->next != nullptr ? w->next->prev : tail_) = w->prev;
    w->prev = w->next = nullptr;
    update_work();
  }

  void cancel_waiter(waiter* w) {
    unlink(w);
    get_handler h = std::move(w->handler);
    delete w;
    complete(std::move(h), error_code(asio::error::operation_aborted), T{});
  }

  // A worker parked in async_get is pending work, as a socket read would be:
  // io_context::run() keeps running until the queue shuts down.
  void update_work() {
    const bool pending = head_ != nullptr || !drain_waiters_.empty();
    if (pending && !work_) {
      work_.emplace(asio::prefer(ex_, asio::execution::outstanding_work.tracked));
    } else if (!pending && work_) {
      work_.reset();
    }
  }

  // ---- adds from other threads ----------------------------------------------

  // The message (and the item's hash) is made on the calling thread, so
  // the executor only applies it.
  template <class U>
  void push_remote(U&& item, bool delayed, time_point ready_at) {
    if (shutting_down()) return;
    const std::size_t h = traits::hash(item);
    remote_msg* m = messages::make(T(std::forward<U>(item)), h);
    m->delayed = delayed;
    m->ready_at = ready_at;
    if (inbox_.push(m)) post_drain();
  }

  void post_drain() {
    asio::post(ex_, [self = this->shared_from_this()] { self->drain_remote(); });
  }

  // If applying a batch runs out of memory, the exception leaves this
  // handler (and run()); the drain is unscheduled first, as when nothing was
  // taken, so adds pushed since are still drained.
  void drain_remote() {
    bool took = false;
    try {
      took = take_remote();
    } catch (...) {
      if (inbox_.unschedule()) post_drain();
      throw;
    }
    if (took || inbox_.unschedule()) post_drain();
  }

  bool take_remote() {
    remote_msg* m = inbox_.take();
    if (m == nullptr) return false;
    // The stack is newest-first: list it once, then apply it oldest-first
    // from the array, loading index slots (and messages) a few ahead, so the
    // lookups' cache misses overlap instead of following one another.
    for (; m != nullptr; m = m->next) batch_.push_back(m);
    const metrics_recorder::batch_stamp stamp(metrics_);
    const std::size_t count = batch_.size();
    auto nth_oldest = [&](std::size_t i) { return batch_[count - 1 - i]; };
    constexpr std::size_t ahead = 16;
    for (std::size_t i = 0; i < std::min(ahead, count); ++i) index_.prefetch(nth_oldest(i)->hash);
    std::size_t i = 0;
    try {
      for (; i < count; ++i) {
        if (i + 2 * ahead < count) __builtin_prefetch(nth_oldest(i + 2 * ahead));
        if (i + ahead < count) index_.prefetch(nth_oldest(i + ahead)->hash);
        apply_remote(*nth_oldest(i));
        messages::destroy(nth_oldest(i));
      }
    } catch (...) {
      // Out of memory: the add that failed and the rest of this batch are
      // dropped (their messages freed).
      for (; i < count; ++i) messages::destroy(nth_oldest(i));
      batch_.clear();
      throw;
    }
    batch_.clear();
    if (batch_.capacity() > 4096) std::vector<remote_msg*>().swap(batch_);  // after a burst
    return true;
  }

  // One message from another thread: its item is moved into a node only if
  // the item has none yet.
  void apply_remote(remote_msg& m) {
    if (shut_) return;
    const bool wait = m.delayed && m.ready_at != time_point::min() && m.ready_at > clock_->now();
    if (m.delayed) metrics_.retried();
    bool made = false;
    node* n = find_or_make(std::move(m.item), m.hash, made);
    if (wait) {
      delay(n, m.ready_at, made, m.hash);  // the ready time was fixed at the call
    } else {
      mark_added(n, made, m.hash);
    }
  }

  // ---- delays ---------------------------------------------------------------

  // The node found or made (`made`) for an add_after waits until `ready_at`
  // (unless it waits for an earlier time already). If the heap's push runs
  // out of memory (it changes nothing then), a node made for it is
  // unindexed and freed, so no node is left indexed with nothing to retire it.
  void delay(node* n, time_point ready_at, bool made, std::size_t hash) {
    bool earlier;
    try {
      earlier = heap_.push(n, ready_at);
    } catch (...) {
      if (made) drop_new(n, hash);
      throw;
    }
    if (earlier) arm_timer();
  }

  // Everything that is ready is moved to the queue in one go; the worker
  // then takes it without going back through the reactor per item. The
  // node itself moves: no copy, no index change.
  void on_timer() {
    if (shut_) return;
    const time_point now = clock_->now();
    const std::size_t before = heap_.size();
    // An item that cannot be queued (out of memory, a metrics hook that
    // throws) is dropped; the others are queued and the timer re-armed
    // before the exception goes on.
    std::exception_ptr failed;
    try {
      const metrics_recorder::batch_stamp stamp(metrics_, now);
      heap_.pop_ready(
          now, [this](node* n) { mark_dirty(n); }, unref());
    } catch (...) {
      failed = std::current_exception();
    }
    timer_.fired(heap_.size() != before);
    arm_timer(now);
    if (failed) std::rethrow_exception(failed);
  }

  // Wakes up for the earliest ready time (re-armed only when it moved
  // earlier, or after a wake-up). A manual clock wakes the queue itself.
  void arm_timer(std::optional<time_point> known_now = std::nullopt) {
    if (shut_ || heap_.empty() || clock_->is_manual()) return;
    const time_point next = heap_.next_ready_at(unref());
    if (timer_.armed_by(next)) return;
    timer_.arm(next, known_now ? *known_now : clock_->now(), [self = this->shared_from_this()] { self->on_timer(); });
  }

  // ---- shutdown -------------------------------------------------------------

  void shutdown_local(bool drain, std::optional<drain_handler> h) {
    // Adds pushed from other threads before the shutdown count (e.g. those
    // of the thread that called shutdown(): it must not overtake them). If
    // applying them runs out of memory, the rest are dropped and the queue
    // still shuts down before the exception goes on.
    std::exception_ptr failed;
    try {
      take_remote();
    } catch (...) {
      failed = std::current_exception();
    }
    shut_ = true;
    shutting_down_.store(true, std::memory_order_release);
    heap_.clear(unref());
    timer_.cancel();
    metrics_.stop();
    while (waiter* w = head_) {
      unlink(w);
      w->slot.clear();
      get_handler gh = std::move(w->handler);
      delete w;
      complete(std::move(gh), make_error_code(errc::shut_down), T{});
    }
    drain_ = drain;
    if (h) drain_waiters_.push_back(std::move(*h));
    // A plain shutdown releases anyone draining (client-go: drain = false).
    if (!drain_ || processing_ == 0) finish_drain();
    update_work();
    if (failed) std::rethrow_exception(failed);
  }

  void finish_drain() {
    auto waiters = std::move(drain_waiters_);
    drain_waiters_.clear();
    for (auto& dh : waiters) complete(std::move(dh), error_code{});
    update_work();
  }

  // ---- state ----------------------------------------------------------------

  asio::any_io_executor ex_;  // never assigned: probe_ points into it
  executor_probe probe_;
  const clock* clock_;
  metrics_recorder metrics_;

  // executor-confined
  node_pool<node> pool_;           // declared before index_: destroyed after the nodes are
  flat_index<node> index_{pool_};  // every node, by item
  static constexpr std::size_t idle_batch = 256;
  std::vector<node*> idle_;        // retired nodes, still indexed
  std::array<node*, 2> recent_{};  // last handed out (for done)
  std::size_t recent_next_ = 0;
  ready_ring ready_;  // queued nodes, in order
  std::size_t processing_ = 0;
  waiter* head_ = nullptr;  // parked async_get operations, oldest first
  waiter* tail_ = nullptr;
  std::vector<drain_handler> drain_waiters_;
  std::optional<asio::any_io_executor> work_;
  bool shut_ = false;
  bool drain_ = false;
  delay_heap<node, st_waiting> heap_;  // the waiting nodes (all indexed)
  delay_timer timer_;
  std::vector<remote_msg*> batch_;  // take_remote's scratch

  // any thread
  remote_inbox<remote_msg> inbox_;
  std::atomic<bool> shutting_down_{false};
  std::atomic<std::size_t> len_{0};
};

}  // namespace kube::workqueue::detail

#pragma once

// The state behind queue / delaying_queue / rate_limited_queue.
//
// Everything below "executor-confined" is touched only on the queue's
// executor. Other threads reach it through the atomic MPSC stack `remote_`
// of messages (add / add_after) or by posting (shutdown); they read only
// atomics.

#include <kube/workqueue/clock.hpp>
#include <kube/workqueue/detail/big_alloc.hpp>
#include <kube/workqueue/detail/delay_heap.hpp>
#include <kube/workqueue/detail/executor_probe.hpp>
#include <kube/workqueue/detail/flat_index.hpp>
#include <kube/workqueue/detail/hashed_key.hpp>
#include <kube/workqueue/detail/message_blocks.hpp>
#include <kube/workqueue/detail/node_item.hpp>
#include <kube/workqueue/detail/node_pool.hpp>
#include <kube/workqueue/error.hpp>
#include <kube/workqueue/metrics.hpp>
#include <kube/workqueue/queue_params.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/append.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/unordered/unordered_flat_map.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
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
        metrics_(std::move(params.metrics)),
        unfinished_period_(params.unfinished_work_period) {}

  queue_impl(const queue_impl&) = delete;
  queue_impl& operator=(const queue_impl&) = delete;

  ~queue_impl() {
    for (remote_msg* m = remote_.exchange(nullptr, std::memory_order_acquire); m != nullptr;) {
      messages::destroy(std::exchange(m, m->next));
    }
    for (const pending_add& p : pending_) free_node(p.n);
    // Every node on the executor side is indexed (the delay heap only
    // points at indexed nodes).
    index_.for_each([this](node* n) { free_node(n); });
  }

  /// After construction (needs shared_from_this): a manual clock wakes the
  /// delaying part through its advance notifications instead of the timer.
  void start() {
    if (clock_->is_manual()) {
      clock_->on_advance([weak = this->weak_from_this()] {
        auto self = weak.lock();
        if (!self) return false;
        asio::post(self->ex_, [self] { self->on_timer(); });
        return true;
      });
    }
  }

  // ---- any thread ---------------------------------------------------------

  [[nodiscard]] bool on_executor() const noexcept { return probe_.running_in_this_thread(); }
  [[nodiscard]] const asio::any_io_executor& executor() const noexcept { return ex_; }
  [[nodiscard]] const clock& time_source() const noexcept { return *clock_; }
  [[nodiscard]] bool shutting_down() const noexcept { return shutting_down_.load(std::memory_order_acquire); }
  /// On the executor, adds still pending (see defer()) are applied first,
  /// so the value is exact there.
  [[nodiscard]] std::size_t len() const noexcept {
    if (has_pending_.load(std::memory_order_relaxed) && on_executor()) {
      const_cast<queue_impl*>(this)->flush_pending();
    }
    return len_.load(std::memory_order_relaxed);
  }

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
    add_local(std::forward<U>(item), traits::hash(item));
  }

  template <class U>
  void add_local(U&& item, std::size_t hash) {
    if (shut_) return;
    if (new_streak_ >= defer_after) {
      defer(std::forward<U>(item), hash, false, time_point{});
      return;
    }
    flush_pending();  // (nothing is pending outside a streak; kept for safety)
    bool made = false;
    node* n = find_or_make(std::forward<U>(item), hash, made);
    new_streak_ = made ? new_streak_ + 1 : 0;
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
    if (metrics_) metrics_->on_retry();
    if (d <= duration::zero()) {
      add_local(std::forward<U>(item));
      return;
    }
    const std::size_t h = traits::hash(item);
    if (new_streak_ >= defer_after) {
      defer(std::forward<U>(item), h, true, now + d);
      return;
    }
    flush_pending();
    delay(std::forward<U>(item), now + d, h);
  }

  /// The front item if one is ready now (it is then held by the caller until
  /// done()); nullopt otherwise. Synchronous: no completion is involved.
  std::optional<T> try_get() {
    flush_pending();
    if (fifo_len_ == 0) return std::nullopt;
    return std::optional<T>(take_front());
  }

  template <class Handler>
  void initiate_get(Handler&& handler) {
    flush_pending();
    if (fifo_len_ != 0) {
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
    if (slot.is_connected()) slot.template emplace<cancel_get>(this, w);
  }

  void done(const T& item) {
    flush_pending();
    node* n = recently_taken(item);
    if (n == nullptr) {
      n = lookup(item, traits::hash(item));
      if (n == nullptr) return;
    }
    if ((n->state & st_processing) == 0) return;  // not held by a worker
    // What can fail (out of memory) comes before any change.
    if ((n->state & st_dirty) != 0) reserve_ready();
    metric_done(*n);
    --processing_;
    n->state &= static_cast<std::uint8_t>(~st_processing);
    if ((n->state & st_dirty) != 0) {
      make_ready(n);
    } else {
      maybe_retire(n);
    }
    if (processing_ == 0 && drain_) finish_drain();
  }

  [[nodiscard]] std::size_t processing() const noexcept { return processing_; }  // (pending adds do not change it)
  [[nodiscard]] std::size_t waiting_for_delay() const noexcept { return heap_.size(); }

  void update_unfinished_work() {
    if (!metrics_) return;
    flush_pending();
    const time_point now = clock_->now();
    duration total{};
    duration longest{};
    for (const auto& [item, started] : start_times_) {
      const duration age = now - started;
      total += age;
      longest = std::max(longest, age);
    }
    metrics_->on_unfinished_work(total, longest);
  }

 private:
  // st_dirty: to be handed out (queued, or requeued at done());
  // st_processing: held by a worker; st_waiting: waits in the delay heap
  // (independent of the other two, as client-go's waiting set is separate
  // from its queue). State 0 with no heap entry pointing here (idle): the
  // node stays indexed until the next purge and is revived in place if the
  // item is added again before that.
  enum : std::uint8_t { st_dirty = 1, st_processing = 2, st_waiting = 4 };
  static constexpr std::uint8_t st_active = st_dirty | st_processing;

  // One node per item that is dirty, being processed and/or waiting for a
  // delay; the item is stored here only, and the one index finds it. A node
  // is queued (in fifo_) exactly when it is dirty and not processing. Nodes
  // come from pool_, on the executor only.
  //
  // With a std::string item a node is 64 bytes, one cache line (slab cells
  // are line-aligned): at 72 bytes, as it was with a full hash and a 64-bit
  // sequence, the item and the state byte always sat in two lines. So the
  // node keeps only the hash's low 32 bits (the index's home slot, for
  // unindexing; the index slot keeps the same 32 bits) and the delay heap's
  // sequence truncated to 32 bits (see delay_heap's stale()). The item
  // (node_item: a std::string key of up to 32 bytes is kept inline) comes
  // first; the byte fields are declared first so they fill the end of its
  // storage.
  using item_base = node_item<T, Hash, KeyEqual>;
  struct node : item_base {
    template <class U>
    node(U&& i, std::size_t h) : item_base(std::forward<U>(i)), hash_lo(static_cast<std::uint32_t>(h)) {}
    std::uint8_t state = 0;
    bool idle_listed = false;     // on idle_
    bool delayed = false;         // pending add_after
    std::uint32_t hash_lo;        // low bits of the item's hash
    std::uint32_t seq = 0;        // delay heap: sequence of the current entry (low 32 bits)
    std::uint32_t heap_refs = 0;  // delay heap entries pointing here (current or stale)
    time_point ready_at{};        // delay heap: current ready time; pending add_after: its ready time
    std::uint32_t id = 0;         // set by the pool (node_pool.hpp); the index stores it
  };
  static_assert(sizeof(T) > 32 || sizeof(node) <= 64);
  using view_type = typename item_base::view_type;
  // An add()/add_after() from another thread on its way to the executor:
  // made on the calling thread (the item's hash too), pushed onto remote_,
  // applied and destroyed by the executor's next drain.
  struct remote_msg {
    remote_msg(T&& i, std::size_t h) : item(std::move(i)), hash(h) {}
    T item;
    std::size_t hash;
    remote_msg* next = nullptr;
    time_point ready_at{};  // add_after: its ready time, min() meaning now
    bool delayed = false;   // add_after
    void* block = nullptr;  // set by message_blocks
  };
  using messages = message_blocks<remote_msg>;
  using traits = item_traits<T, Hash, KeyEqual>;
  using pool_type = node_pool<node>;

  // The index's equality test for `item` (which must outlive it).
  static auto same_as(const view_type& item) {
    return [&item](const node& n) { return n.same(item); };
  }

  node* lookup(view_type item, std::size_t hash) const { return index_.find(hash, same_as(item)); }

  template <class U>
  node* new_node(U&& item, std::size_t hash) {
    return pool_.create(std::forward<U>(item), hash);
  }

  // An add deferred on the executor (see defer()): its node, not indexed
  // yet, and the item's full hash.
  struct pending_add {
    node* n;
    std::size_t hash;
  };

  void free_node(node* n) noexcept { pool_.destroy(n); }

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

  // ---- cross-thread hand-off ------------------------------------------------

  // The message (and the item's hash) is made on the calling thread, so
  // the executor only applies it.
  template <class U>
  void push_remote(U&& item, bool delayed, time_point ready_at) {
    if (shutting_down()) return;
    const std::size_t h = traits::hash(item);
    remote_msg* m = messages::make(T(std::forward<U>(item)), h);
    m->delayed = delayed;
    m->ready_at = ready_at;
    remote_msg* head = remote_.load(std::memory_order_relaxed);
    do {
      m->next = head;
    } while (!remote_.compare_exchange_weak(head, m, std::memory_order_seq_cst, std::memory_order_relaxed));
    // Only a push that finds the stack empty may schedule a drain, and only
    // if none is scheduled: while adds keep arriving the drain re-posts
    // itself (see drain_remote), so producers post (and wake the executor)
    // once per burst, not once per item when the consumer keeps up.
    if (head == nullptr && !drain_scheduled_.exchange(true, std::memory_order_seq_cst)) post_drain();
  }

  void post_drain() {
    asio::post(ex_, [self = this->shared_from_this()] { self->drain_remote(); });
  }

  // Takes everything pushed so far. If that was something, the drain runs
  // again after the handlers queued meanwhile (the workers taking what was
  // just added), collecting the next batch without any producer posting.
  // If it was nothing, it unschedules itself, then looks once more: a
  // producer that pushed while it was still scheduled did not post. (Both
  // sides use seq_cst: either this load sees that push, or that producer's
  // exchange sees drain_scheduled_ false and posts.)
  // If applying a batch runs out of memory, the exception leaves this
  // handler (and run()); the drain is unscheduled first, as when nothing was
  // taken, so adds pushed since are still drained (a push that finds the
  // stack non-empty never posts).
  void drain_remote() {
    bool took = false;
    try {
      took = take_remote();
    } catch (...) {
      unschedule_drain();
      throw;
    }
    if (!took) {
      unschedule_drain();
      return;
    }
    post_drain();
  }

  void unschedule_drain() {
    drain_scheduled_.store(false, std::memory_order_seq_cst);
    if (remote_.load(std::memory_order_seq_cst) != nullptr &&
        !drain_scheduled_.exchange(true, std::memory_order_seq_cst)) {
      post_drain();
    }
  }

  bool take_remote() {
    flush_pending();  // adds made on the executor before these arrived come first
    remote_msg* m = remote_.exchange(nullptr, std::memory_order_acquire);
    if (m == nullptr) return false;
    // The stack is newest-first: list it once, then apply it oldest-first
    // from the array, loading index slots (and messages) a few ahead, so the
    // lookups' cache misses overlap instead of following one another.
    for (; m != nullptr; m = m->next) batch_.push_back(m);
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
    if (m.delayed && metrics_) metrics_->on_retry();
    bool made = false;
    node* n = find_or_make(std::move(m.item), m.hash, made);
    if (!wait) {
      mark_added(n, made, m.hash);
    } else if (push_delay(n, m.ready_at, made, m.hash)) {  // the ready time was fixed at the call
      arm_timer();
    }
  }

  // ---- deferred adds -----------------------------------------------------------

  // While adds on the executor keep bringing new items (defer_after in a
  // row), each add only copies its item into a node and starts loading the
  // index slot it will probe; up to max_pending such adds are then applied
  // together, in call order. With a large index that probe is a cache miss
  // (~100 ns), and a worker's add loop otherwise waits for each in turn;
  // applied in a batch, the misses overlap. An add that finds its item
  // already there (a duplicate; its copy is then dropped) ends the streak,
  // so re-adding queued or held items never pays for a copy.
  // Pending adds are applied before anything that could observe them:
  // every other executor operation (get, done, add_after, len on the
  // executor, shutdown, timer and cross-thread hand-off) starts with
  // flush_pending(), and a posted flush runs after the current handler, so a
  // parked worker is handed the item as soon as the adder yields.
  // `delayed`: an add_after whose item waits until `at`.
  template <class U>
  void defer(U&& item, std::size_t hash, bool delayed, time_point at) {
    index_.prefetch(hash);
    if (pending_.capacity() == 0) pending_.reserve(max_pending);  // push_back below never throws
    node* r = new_node(std::forward<U>(item), hash);
    r->delayed = delayed;
    r->ready_at = at;
    pending_.push_back(pending_add{r, hash});
    has_pending_.store(true, std::memory_order_relaxed);
    if (pending_.size() >= max_pending) {
      flush_pending();
    } else if (!flush_posted_) {
      flush_posted_ = true;
      asio::post(ex_, [self = this->shared_from_this()] {
        self->flush_posted_ = false;
        self->flush_pending();
      });
    }
  }

  void flush_pending() {
    if (pending_.empty()) return;
    std::size_t i = 0;
    try {
      for (; i < pending_.size(); ++i) {
        const auto [r, hash] = pending_[i];
        if (r->delayed) {
          r->delayed = false;
          new_streak_ = adopt_delayed(r, hash) ? 0 : new_streak_ + 1;
          continue;
        }
        const view_type item = r->view();
        if (node* had = index_.find_or_insert(r, hash, same_as(item))) {
          new_streak_ = 0;
          mark_dirty(had);
          free_node(r);
        } else {
          ++new_streak_;
          mark_dirty(r);
        }
      }
    } catch (...) {
      // Out of memory growing the index or the ready ring, or recording a
      // metric: the add that failed is dropped, the later ones stay
      // pending. Its node is freed unless the item got it for good: indexed
      // and queued or waiting (an indexed node with nothing to do is
      // unindexed first).
      const auto [r, hash] = pending_[i];
      if (lookup(r->view(), hash) != r) {
        free_node(r);
      } else if (r->state == 0 && r->heap_refs == 0) {
        drop_new(r, hash);
      }
      pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(i + 1));
      has_pending_.store(!pending_.empty(), std::memory_order_relaxed);
      throw;
    }
    pending_.clear();
    has_pending_.store(false, std::memory_order_relaxed);
  }

  // ---- ready items ------------------------------------------------------------

  // An add of an item that has a node already. What can fail (out of
  // memory: the ready ring, the metrics' timestamps) comes before any
  // change, so a failed add leaves the node as it was.
  void mark_dirty(node* n) {
    if ((n->state & st_active) == 0) {  // idle or only waiting for a delay: a new add
      reserve_ready();
      metric_add(*n);
      n->state |= st_dirty;
      make_ready(n);
      return;
    }
    if ((n->state & st_dirty) != 0) return;  // already queued: stored once
    metric_add(*n);
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

  // A node just made for an add (indexed, state 0) whose add then failed:
  // unindexed and freed, so no node is left that nothing would retire.
  void drop_new(node* n, std::size_t hash) noexcept {
    index_.erase(n, hash);
    free_node(n);
  }

  // Room in the ready ring for one more item, unless a parked worker will
  // take it: make_ready() then cannot fail.
  void reserve_ready() {
    if (head_ == nullptr && fifo_len_ == fifo_cap_) grow_fifo();
  }

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
    node* n = new_node(std::forward<U>(item), hash);
    try {
      index_.insert(n, hash);
    } catch (...) {
      free_node(n);
      throw;
    }
    return n;
  }

  // `n` is marked dirty and not processing: hand it to the oldest parked
  // worker, or queue it.
  void make_ready(node* n) {
    if (waiter* w = head_) {
      unlink(w);
      n->state = static_cast<std::uint8_t>((n->state & st_waiting) | st_processing);
      ++processing_;
      note_taken(n);
      metric_get(*n);
      w->slot.clear();
      get_handler h = std::move(w->handler);
      delete w;
      complete(std::move(h), error_code{}, n->copy());
      return;
    }
    if (fifo_len_ == fifo_cap_) grow_fifo();
    fifo_[(fifo_head_ + fifo_len_) & (fifo_cap_ - 1)] = n->id;
    len_.store(++fifo_len_, std::memory_order_relaxed);
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
      free_node(n);
    }
    idle_.clear();
    index_.maybe_shrink();
  }

  // How far take_front loads ahead: nodes 12 places, their items' bytes 4
  // (that node was asked for 8 takes earlier). Measured on add_after_random,
  // whose items come out in time order, i.e. in random memory order:
  // 4 / 1 -> 12 / 4 took its consume phase from ~184 to ~165 ms per million;
  // 16 / 8 was slower than both.
  static constexpr std::size_t node_ahead = 12;
  static constexpr std::size_t item_ahead = 4;

  // Doubles the ring (or makes the first one), keeping the order.
  void grow_fifo() {
    const std::size_t cap = fifo_cap_ == 0 ? 16 : fifo_cap_ * 2;
    std::size_t bytes = cap * sizeof(std::uint32_t);
    ring_ptr ring(static_cast<std::uint32_t*>(big_alloc(bytes)));
    for (std::size_t i = 0; i < fifo_len_; ++i) ring[i] = fifo_[(fifo_head_ + i) & (fifo_cap_ - 1)];
    fifo_ = std::move(ring);
    fifo_cap_ = cap;
    fifo_head_ = 0;
  }

  // The worker gets a copy; the node keeps the item as the index key.
  T take_front() {
    const std::size_t mask = fifo_cap_ - 1;
    node* n = pool_.node(fifo_[fifo_head_]);
    // Nodes queued in ready-time order (from the delay heap) or revived
    // ones lie anywhere in memory: start loading the ones about to be taken,
    // and the items of nearer ones (their nodes have arrived by now).
    if (fifo_len_ > node_ahead) __builtin_prefetch(pool_.node(fifo_[(fifo_head_ + node_ahead) & mask]));
    if (fifo_len_ > item_ahead) pool_.node(fifo_[(fifo_head_ + item_ahead) & mask])->prefetch();
    fifo_head_ = (fifo_head_ + 1) & mask;
    len_.store(--fifo_len_, std::memory_order_relaxed);
    if (fifo_len_ == 0 && fifo_cap_ > 4096) {  // after a burst: give the ring back
      fifo_.reset();
      fifo_cap_ = 0;
      fifo_head_ = 0;
    }
    n->state = static_cast<std::uint8_t>((n->state & st_waiting) | st_processing);
    ++processing_;
    note_taken(n);
    metric_get(*n);
    return n->copy();
  }

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

  // ---- delays -----------------------------------------------------------------

  // The item's node (found or made) waits until `ready_at` (unless it
  // waits for an earlier time already).
  template <class U>
  void delay(U&& item, time_point ready_at, std::size_t hash) {
    bool made = false;
    node* n = find_or_make(std::forward<U>(item), hash, made);
    new_streak_ = made ? new_streak_ + 1 : 0;
    if (push_delay(n, ready_at, made, hash)) arm_timer();
  }

  // heap_.push for a node found or just made (`made`). If the push runs out
  // of memory (it changes nothing then), a node made for it is unindexed
  // and freed, so no node is left indexed with nothing to retire it.
  bool push_delay(node* n, time_point ready_at, bool made, std::size_t hash) {
    try {
      return heap_.push(n, ready_at);
    } catch (...) {
      if (made) {
        index_.erase(n, hash);
        free_node(n);
      }
      throw;
    }
  }

  // A node made for an add_after deferred on the executor (see defer()),
  // ready at r->ready_at, later than now; `hash` is its item's. Returns
  // whether the item had a node already (`r` is then freed, once nothing
  // can throw).
  bool adopt_delayed(node* r, std::size_t hash) {
    const view_type item = r->view();
    if (node* n = index_.find_or_insert(r, hash, same_as(item))) {
      if (heap_.push(n, r->ready_at)) arm_timer();
      free_node(r);
      return true;
    }
    r->state = 0;
    bool earlier;
    try {
      earlier = heap_.push(r, r->ready_at);
    } catch (...) {
      index_.erase(r, hash);  // flush_pending's handler frees r (no longer indexed)
      throw;
    }
    if (earlier) arm_timer();
    return false;
  }

  auto unref() {
    return [this](node* n) { maybe_retire(n); };
  }

  // Everything that is ready is moved to the queue in one go; the worker
  // then takes it without going back through the reactor per item. The
  // node itself moves: no copy, no index change.
  void on_timer() {
    if (shut_) return;
    flush_pending();
    const time_point now = clock_->now();
    const std::size_t before = heap_.size();
    // An item that cannot be queued (out of memory, a metrics hook that
    // throws) is dropped; the others are queued and the timer re-armed
    // before the exception goes on.
    std::exception_ptr failed;
    try {
      heap_.pop_ready(
          now, [this](node* n) { mark_dirty(n); }, unref());
    } catch (...) {
      failed = std::current_exception();
    }
    idle_polls_ = heap_.size() != before ? 0 : idle_polls_ + 1;
    timer_armed_ = false;
    arm_timer(now);
    if (failed) std::rethrow_exception(failed);
  }

  // Decides only "wake at t"; what is ready then is the heap's decision.
  // A wake-up less than poll_window away is not given to the OS timer
  // (with Asio's epoll reactor every re-arm is a timerfd_settime syscall,
  // several microseconds, once per earliest item when ready times are
  // dense): on_timer is posted instead and re-checks the clock after the
  // handlers already queued. Items never become ready early. Polls that
  // find nothing ready are bounded (max_idle_polls in a row), after which
  // the OS timer is used, so an idle executor does not spin.
  void arm_timer() { arm_timer(std::nullopt); }

  void arm_timer(std::optional<time_point> known_now) {
    if (shut_ || heap_.empty() || clock_->is_manual()) return;
    const time_point next = heap_.next_ready_at(unref());
    if (timer_armed_ && armed_for_ <= next) return;
    timer_armed_ = true;
    armed_for_ = next;
    const std::uint64_t gen = ++timer_gen_;
    const time_point now = known_now ? *known_now : clock_->now();
    if (next - now <= poll_window && idle_polls_ < max_idle_polls) {
      if (os_timer_waiting_) {  // superseded
        os_timer_waiting_ = false;
        timer_->cancel();
      }
      asio::post(ex_, [self = this->shared_from_this(), gen] {
        if (gen == self->timer_gen_) self->on_timer();
      });
      return;
    }
    idle_polls_ = 0;
    if (!timer_) timer_.emplace(ex_);
    timer_->expires_at(next);
    os_timer_waiting_ = true;
    timer_->async_wait([self = this->shared_from_this(), gen](error_code ec) {
      if (gen == self->timer_gen_) self->os_timer_waiting_ = false;
      if (ec || gen != self->timer_gen_) return;  // re-armed or cancelled
      self->on_timer();
    });
  }

  // ---- shutdown ---------------------------------------------------------------

  void shutdown_local(bool drain, std::optional<drain_handler> h) {
    // Adds made before the shutdown count, from this thread (pending) and
    // from others (pushed before the flag was set, e.g. by the thread that
    // called shutdown(): its adds must not be overtaken by it). If applying
    // them runs out of memory, the rest are dropped and the queue still
    // shuts down before the exception goes on.
    std::exception_ptr failed;
    try {
      flush_pending();
      take_remote();
    } catch (...) {
      failed = std::current_exception();
    }
    shut_ = true;
    shutting_down_.store(true, std::memory_order_release);
    heap_.clear(unref());
    timer_armed_ = false;
    os_timer_waiting_ = false;
    ++timer_gen_;
    if (timer_) timer_->cancel();
    if (work_timer_) work_timer_->cancel();
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

  // ---- metrics ------------------------------------------------------------------

  // Each hook is a test of metrics_ inline; the recording is out of line,
  // so a queue without metrics pays no call on add, get or done.
  void metric_add(const node& n) {
    if (metrics_) record_add(n);
  }
  void metric_get(const node& n) {
    if (metrics_) record_get(n);
  }
  void metric_done(const node& n) {
    if (metrics_) record_done(n);
  }

  [[gnu::noinline]] void record_add(const node& n) {
    add_times_.try_emplace(n.key(), clock_->now());  // (may run out of memory: counted after)
    metrics_->on_add();
  }

  [[gnu::noinline]] void record_get(const node& n) {
    const time_point now = clock_->now();
    decltype(auto) item = n.key();
    start_times_.insert_or_assign(item, now);
    auto it = add_times_.find(item);
    metrics_->on_get(it != add_times_.end() ? now - it->second : duration{});
    if (it != add_times_.end()) add_times_.erase(it);
    if (!work_timer_armed_ && unfinished_period_ > duration::zero() && !clock_->is_manual()) arm_work_timer();
  }

  [[gnu::noinline]] void record_done(const node& n) {
    auto it = start_times_.find(n.key());
    if (it == start_times_.end()) return;
    metrics_->on_done(clock_->now() - it->second);
    start_times_.erase(it);
  }

  void arm_work_timer() {
    work_timer_armed_ = true;
    if (!work_timer_) work_timer_.emplace(ex_);
    work_timer_->expires_after(unfinished_period_);
    work_timer_->async_wait([self = this->shared_from_this()](error_code ec) {
      self->work_timer_armed_ = false;
      if (ec || self->shut_) return;
      self->update_unfinished_work();
      if (self->processing_ > 0) self->arm_work_timer();
    });
  }

  // ---- state ----------------------------------------------------------------------

  asio::any_io_executor ex_;
  executor_probe probe_;
  const clock* clock_;
  std::shared_ptr<metrics_hooks> metrics_;
  duration unfinished_period_;

  // executor-confined
  pool_type pool_;              // declared before index_: destroyed after the nodes are
  flat_index<node> index_{pool_};  // every node, by item
  static constexpr std::size_t idle_batch = 256;
  std::vector<node*> idle_;                // retired nodes, still indexed
  std::vector<remote_msg*> batch_;         // take_remote's scratch
  static constexpr std::size_t defer_after = 16;
  static constexpr std::size_t max_pending = 16;
  std::size_t new_streak_ = 0;             // executor adds in a row that brought a new item
  std::vector<pending_add> pending_;       // deferred adds, in call order (not indexed yet)
  bool flush_posted_ = false;
  std::array<node*, 2> recent_{};          // last handed out (for done)
  std::size_t recent_next_ = 0;
  using ring_ptr = std::unique_ptr<std::uint32_t[], big_free>;
  ring_ptr fifo_;  // ready items (node ids), in order: a ring of fifo_cap_ (a power of 2)
  std::size_t fifo_cap_ = 0;
  std::size_t fifo_head_ = 0;
  std::size_t fifo_len_ = 0;
  std::size_t processing_ = 0;
  waiter* head_ = nullptr;  // parked async_get operations, oldest first
  waiter* tail_ = nullptr;
  std::vector<drain_handler> drain_waiters_;
  std::optional<asio::any_io_executor> work_;
  bool shut_ = false;
  bool drain_ = false;
  delay_heap<node, st_waiting> heap_;  // the waiting nodes (all indexed)
  // Timers are created on first use: a timer starts the io_context's reactor,
  // after which the scheduler polls epoll between handlers.
  std::optional<asio::steady_timer> timer_;
  bool timer_armed_ = false;
  bool os_timer_waiting_ = false;  // an async_wait of the current generation
  time_point armed_for_{};
  std::uint64_t timer_gen_ = 0;
  static constexpr duration poll_window = std::chrono::microseconds(50);
  static constexpr unsigned max_idle_polls = 64;
  unsigned idle_polls_ = 0;  // polls in a row that found nothing ready
  boost::unordered_flat_map<T, time_point, Hash, KeyEqual> add_times_;
  boost::unordered_flat_map<T, time_point, Hash, KeyEqual> start_times_;
  std::optional<asio::steady_timer> work_timer_;
  bool work_timer_armed_ = false;

  // any thread
  std::atomic<remote_msg*> remote_{nullptr};
  std::atomic<bool> drain_scheduled_{false};  // a drain_remote is posted or running
  std::atomic<bool> shutting_down_{false};
  std::atomic<bool> has_pending_{false};  // pending_ is not empty (written on the executor only)
  std::atomic<std::size_t> len_{0};
};

}  // namespace kube::workqueue::detail

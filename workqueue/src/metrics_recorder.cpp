#include <kube/workqueue/detail/metrics_recorder.hpp>
#include <kube/workqueue/detail/node_pool.hpp>

#include <algorithm>

namespace kube::workqueue::detail {

namespace {
constexpr metrics_recorder::id_type cell_mask = (metrics_recorder::id_type{1} << node_id_cell_bits) - 1;
constexpr std::size_t min_slots = 256;
}  // namespace

metrics_recorder::metrics_recorder(std::shared_ptr<kube::metrics::workqueue_metrics> hooks, const clock& time_source,
                                   duration unfinished_period, boost::asio::any_io_executor ex)
    : hooks_(std::move(hooks)),
      clock_(&time_source),
      period_(unfinished_period),
      ex_(std::move(ex)) {}

metrics_recorder::slot& metrics_recorder::at(id_type id) noexcept {
  return slabs_[id >> node_id_cell_bits][id & cell_mask];
}

metrics_recorder::slot& metrics_recorder::make(id_type id) {
  const std::size_t number = id >> node_id_cell_bits;
  const std::size_t cell = id & cell_mask;
  if (number >= slabs_.size()) slabs_.resize(number + 1);
  std::vector<slot>& cells = slabs_[number];
  // Doubling: a slab's cells are used from the first up.
  if (cell >= cells.size()) cells.resize(std::max({cell + 1, cells.size() * 2, min_slots}));
  return cells[cell];
}

void metrics_recorder::record_add(id_type id) {
  make(id).added = batch_now_ ? *batch_now_ : clock_->now();
  hooks_->on_add();
}

void metrics_recorder::record_get(id_type id) {
  const time_point now = clock_->now();
  slot& s = at(id);
  hooks_->on_get(now - s.added);
  s.started = now;
  s.prev = held_tail_;
  s.next = no_id;
  (held_tail_ != no_id ? at(held_tail_).next : held_head_) = id;
  held_tail_ = id;
}

void metrics_recorder::record_done(id_type id) {
  slot& s = at(id);
  hooks_->on_done(clock_->now() - s.started);
  (s.prev != no_id ? at(s.prev).next : held_head_) = s.next;
  (s.next != no_id ? at(s.next).prev : held_tail_) = s.prev;
}

void metrics_recorder::report_unfinished() {
  if (!hooks_) return;
  const time_point now = clock_->now();
  duration total{};
  duration longest{};
  for (id_type id = held_head_; id != no_id; id = at(id).next) {
    const duration age = now - at(id).started;
    total += age;
    longest = std::max(longest, age);
  }
  hooks_->on_unfinished_work(total, longest);
}

}  // namespace kube::workqueue::detail

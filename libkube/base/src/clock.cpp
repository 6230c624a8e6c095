#include <kube/base/clock.hpp>
#include <kube/base/manual_clock.hpp>

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <utility>

namespace kube {
namespace {

class steady final : public clock {
public:
  time_point now() const noexcept override { return std::chrono::steady_clock::now(); }
};

}  // namespace

const clock& real_clock() noexcept {
  static const steady instance;
  return instance;
}

manual_clock::manual_clock() noexcept
    : manual_clock(time_point{} + std::chrono::hours(1)) {}

manual_clock::manual_clock(time_point start) noexcept
    : now_ns_(start.time_since_epoch().count()) {}

clock::time_point manual_clock::now() const noexcept {
  return time_point(duration(now_ns_.load(std::memory_order_acquire)));
}

void manual_clock::on_advance(std::function<bool()> listener, time_point due) const {
  const std::lock_guard lock(mutex_);
  if (due != time_point::max()) sleeps_.push_back(due - now());
  listeners_.push_back({due, std::move(listener)});
}

void manual_clock::advance(duration d) {
  if (d < duration::zero()) {
    throw std::invalid_argument("manual_clock::advance: negative duration");
  }
  now_ns_.fetch_add(d.count(), std::memory_order_acq_rel);
  notify();
}

void manual_clock::set(time_point t) {
  auto cur = now_ns_.load(std::memory_order_acquire);
  if (t.time_since_epoch().count() < cur) {
    throw std::invalid_argument("manual_clock::set: time would move backwards");
  }
  now_ns_.store(t.time_since_epoch().count(), std::memory_order_release);
  notify();
}

std::vector<clock::duration> manual_clock::sleeps() const {
  const std::lock_guard lock(mutex_);
  return sleeps_;
}

std::size_t manual_clock::pending() const {
  const std::lock_guard lock(mutex_);
  return static_cast<std::size_t>(
      std::count_if(listeners_.begin(), listeners_.end(), [](const waiter& l) { return l.due != time_point::max(); }));
}

clock::duration manual_clock::next_wake_in() const {
  const std::lock_guard lock(mutex_);
  auto earliest = time_point::max();
  for (const auto& l : listeners_) earliest = std::min(earliest, l.due);
  return earliest == time_point::max() ? duration::zero() : earliest - now();
}

void manual_clock::notify() {
  // Listeners run outside the lock: they post to executors and may register
  // further listeners. Sleepers are woken in due order, as a real timer would.
  std::vector<waiter> current;
  {
    const std::lock_guard lock(mutex_);
    current.swap(listeners_);
  }
  std::stable_sort(current.begin(), current.end(), [](const waiter& a, const waiter& b) { return a.due < b.due; });
  std::vector<waiter> keep;
  for (auto& l : current) {
    if (l.fn()) keep.push_back(std::move(l));
  }
  const std::lock_guard lock(mutex_);
  keep.insert(keep.end(), std::make_move_iterator(listeners_.begin()), std::make_move_iterator(listeners_.end()));
  listeners_.swap(keep);
}

}  // namespace kube

// kube::controller: keys, owner references and the work loop (the parts
// that are not templates).
#include <kube/controller/owner.hpp>
#include <kube/controller/reconcile.hpp>
#include <kube/controller/work_loop.hpp>

#include <kube/base/strand.hpp>
#include <kube/exception.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <exception>
#include <stdexcept>

namespace kube::controller {

namespace asio = boost::asio;

const char* to_string(reconcile_result::action a) noexcept {
  switch (a) {
  case reconcile_result::action::done:
    return "done";
  case reconcile_result::action::requeue:
    return "requeue";
  case reconcile_result::action::requeue_after:
    return "requeue_after";
  case reconcile_result::action::error:
    return "error";
  }
  return "?";
}

std::string object_key::str() const {
  if (namespace_.empty()) {
    return name;
  }
  return namespace_ + "/" + name;
}

std::optional<object_key> parse_key(std::string_view key) {
  if (key.empty()) {
    return std::nullopt;
  }
  const auto slash = key.find('/');
  if (slash == std::string_view::npos) {
    return object_key{{}, std::string(key)};
  }
  const auto ns = key.substr(0, slash);
  const auto name = key.substr(slash + 1);
  if (ns.empty() || name.empty() || name.find('/') != std::string_view::npos) {
    return std::nullopt;
  }
  return object_key{std::string(ns), std::string(name)};
}

// ---- owner references -------------------------------------------------------

std::string_view group_of(std::string_view api_version) noexcept {
  const auto slash = api_version.find('/');
  return slash == std::string_view::npos ? std::string_view{} : api_version.substr(0, slash);
}

bool is_controller_ref_to(std::string_view ref_api_version, std::string_view ref_kind, bool ref_controller,
                          const owner_type& owner) noexcept {
  return ref_controller && ref_kind == owner.kind && group_of(ref_api_version) == owner.group;
}

std::optional<std::string> owner_key(std::string_view dependent_namespace, std::string_view owner_name,
                                     const owner_type& owner) {
  if (owner_name.empty()) {
    return std::nullopt;
  }
  if (!owner.namespaced) {
    return std::string(owner_name);
  }
  if (dependent_namespace.empty()) {
    return std::nullopt;  // a cluster-scoped dependent cannot have a namespaced owner
  }
  std::string k;
  k.reserve(dependent_namespace.size() + 1 + owner_name.size());
  k.append(dependent_namespace).append(1, '/').append(owner_name);
  return k;
}

std::optional<std::string> controller_owner_key(const unstructured& obj, const owner_type& owner) {
  const auto* md = obj.object().if_contains("metadata");
  if (md == nullptr || !md->is_object()) {
    return std::nullopt;
  }
  const auto* refs = md->as_object().if_contains("ownerReferences");
  if (refs == nullptr || !refs->is_array()) {
    return std::nullopt;
  }
  auto str = [](const boost::json::object& o, std::string_view k) -> std::string_view {
    const auto* v = o.if_contains(k);
    return v != nullptr && v->is_string() ? std::string_view(v->as_string()) : std::string_view{};
  };
  for (const auto& r : refs->as_array()) {
    if (!r.is_object()) {
      continue;
    }
    const auto& ref = r.as_object();
    const auto* c = ref.if_contains("controller");
    if (c == nullptr || !c->is_bool() || !c->as_bool()) {
      continue;
    }
    if (!is_controller_ref_to(str(ref, "apiVersion"), str(ref, "kind"), true, owner)) {
      return std::nullopt;
    }
    const auto ns = obj.namespace_();
    return owner_key(ns, str(ref, "name"), owner);
  }
  return std::nullopt;
}

// ---- work_loop ----------------------------------------------------------------

namespace {

std::unique_ptr<workqueue::rate_limited_queue<std::string>> make_queue(const asio::any_io_executor& strand,
                                                                       const work_loop_params& o) {
  auto limiter = o.rate_limiter ? o.rate_limiter() : workqueue::default_controller_rate_limiter<std::string>();
  auto qp = o.queue;
  if (!qp.metrics && o.metrics) {
    qp.metrics = o.metrics->workqueue(o.name);
  }
  return std::make_unique<workqueue::rate_limited_queue<std::string>>(strand, std::move(limiter), qp);
}

}  // namespace

work_loop::work_loop(const asio::any_io_executor& ex, work_loop_params options)
    : strand_(kube::make_strand_executor(ex)),
      opts_(std::move(options)),
      queue_(make_queue(strand_, opts_)),
      cv_(strand_, asio::steady_timer::time_point::max()),
      metrics_(opts_.metrics ? opts_.metrics->controller(opts_.name) : nullptr) {
  if (opts_.workers == 0) {
    throw std::invalid_argument("kube::controller::work_loop: workers must be at least 1");
  }
}

work_loop::~work_loop() = default;

work_loop_stats work_loop::stats() const noexcept {
  work_loop_stats s;
  s.reconciles = reconciles_.load();
  s.succeeded = succeeded_.load();
  s.failed = failed_.load();
  s.requeued = requeued_.load();
  s.in_flight = in_flight_.load();
  s.max_in_flight = max_in_flight_.load();
  return s;
}

asio::awaitable<void> work_loop::run(reconcile_fn reconcile, ready_fn ready) {
  if (running_ || stopping_) {
    throw boost::system::system_error(make_error_code(client_errc::already_running));
  }
  if (!reconcile) {
    throw boost::system::system_error(make_error_code(boost::system::errc::invalid_argument));
  }
  running_ = true;
  if (ready) {
    try {
      co_await ready();
    } catch (...) {
      stopping_ = true;
      queue_->shutdown();
      throw;
    }
  }
  // Cancelled while waiting for the caches (a ready_fn that ignored it)?
  {
    auto cs = co_await asio::this_coro::cancellation_state;
    if (cs.cancelled() != asio::cancellation_type::none) {
      stopping_ = true;
      queue_->shutdown();
      throw boost::system::system_error(asio::error::operation_aborted);
    }
  }
  workers_started_.store(true, std::memory_order_release);
  if (metrics_) {
    metrics_->on_workers(opts_.workers);
    metrics_->on_active(0);
  }
  for (unsigned i = 1; i <= opts_.workers; ++i) {
    ++active_;
    // Not bound to our cancellation: a stop lets in-flight reconciles finish.
    asio::co_spawn(strand_, worker(i, reconcile), [this](const std::exception_ptr&) {
      --active_;
      cv_.cancel();
    });
  }
  for (;;) {
    auto [ec] = co_await cv_.async_wait(asio::as_tuple(asio::use_awaitable));
    (void)ec;
    auto cs = co_await asio::this_coro::cancellation_state;
    if (cs.cancelled() != asio::cancellation_type::none || active_ == 0) {
      break;
    }
  }
  // Graceful stop: no new reconciles; wait for the running ones.
  co_await asio::this_coro::reset_cancellation_state();
  co_await asio::this_coro::throw_if_cancelled(false);
  stopping_ = true;
  queue_->shutdown();
  while (active_ > 0) {
    auto [ec] = co_await cv_.async_wait(asio::as_tuple(asio::use_awaitable));
    (void)ec;
  }
  running_ = false;
  throw boost::system::system_error(asio::error::operation_aborted);
}

asio::awaitable<void> work_loop::worker(unsigned id, const reconcile_fn& reconcile) {
  const auto& clk = queue_->time_source();
  for (;;) {
    if (stopping_) {
      co_return;
    }
    std::optional<std::string> key = queue_->try_get();
    if (!key) {
      auto [ec, got] = co_await queue_->async_get(asio::as_tuple(asio::use_awaitable));
      if (ec) {
        co_return;  // shut down
      }
      key = std::move(got);
    }
    if (stopping_) {
      queue_->done(*key);
      co_return;
    }
    const auto n = in_flight_.fetch_add(1) + 1;
    unsigned prev = max_in_flight_.load();
    while (n > prev && !max_in_flight_.compare_exchange_weak(prev, n)) {}
    if (metrics_) {
      metrics_->on_active(n);
    }
    reconcile_outcome out;
    out.key = *key;
    out.worker = id;
    const auto start = clk.now();
    std::exception_ptr failure;
    reconcile_result result;
    try {
      result = co_await reconcile(*key);
    } catch (...) {
      failure = std::current_exception();
    }
    out.took = clk.now() - start;
    const auto left = in_flight_.fetch_sub(1) - 1;
    if (metrics_) {
      metrics_->on_active(left);
    }
    if (failure) {
      finish(*key, out, nullptr, kube::exception_message(failure));
    } else {
      finish(*key, out, &result, {});
    }
    queue_->done(*key);
  }
}

void work_loop::finish(const std::string& key, reconcile_outcome& out, const reconcile_result* r,
                       const std::string& what) {
  using action = reconcile_result::action;
  ++reconciles_;
  const action a = r != nullptr ? r->what() : action::error;
  out.action = a;
  switch (a) {
  case action::done:
    queue_->forget(key);
    ++succeeded_;
    break;
  case action::requeue_after:
    if (r->delay() > std::chrono::steady_clock::duration::zero()) {
      queue_->forget(key);
      queue_->add_after(key, r->delay());
      out.requeue_after = r->delay();
      ++succeeded_;
      ++requeued_;
      break;
    }
    out.action = action::requeue;
    [[fallthrough]];
  case action::requeue:
    queue_->add_rate_limited(key);
    ++succeeded_;
    ++requeued_;
    break;
  case action::error:
    if (r != nullptr) {
      out.error = r->message();
      if (r->error()) {
        out.error += (out.error.empty() ? "" : ": ") + r->error().message();
      }
      if (out.error.empty()) {
        out.error = "reconcile failed";
      }
    } else {
      out.error = what;
    }
    queue_->add_rate_limited(key);
    ++failed_;
    break;
  }
  out.retries = queue_->num_requeues(key);
  if (metrics_) {
    using kube::metrics::reconcile_label;
    const auto label = out.action == action::error           ? reconcile_label::error
                       : out.action == action::requeue       ? reconcile_label::requeue
                       : out.action == action::requeue_after ? reconcile_label::requeue_after
                                                             : reconcile_label::success;
    metrics_->on_reconcile(label, out.took);
  }
  if (opts_.on_reconciled) {
    try {
      opts_.on_reconciled(out);
    } catch (...) {  // NOLINT(bugprone-empty-catch): a logging hook must not stop the worker
    }
  }
}

}  // namespace kube::controller

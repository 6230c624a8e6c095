#include "rest/transport_params.hpp"
#include "transport/client_impl.hpp"
#include "watch/watch_state.hpp"

#include <kube/rest/write_observer.hpp>
#include <kube/rest/client.hpp>
#include <kube/rest/separate_client.hpp>

#include <algorithm>

namespace kube {

void add_write_observer(const client& c, std::weak_ptr<write_observer> o) {
  detail::client_access::impl(c)->add_write_observer(std::move(o));
}

namespace detail {
void client_impl::add_write_observer(std::weak_ptr<write_observer> o) {
  const std::lock_guard lock(observers_mutex_);
  observers_.push_back(std::move(o));
  any_observer_.store(true, std::memory_order_release);
}

void client_impl::note_written(const written_object& w) {
  if (!any_observer_.load(std::memory_order_acquire)) return;  // the usual case: no controller remembers writes
  std::vector<std::shared_ptr<write_observer>> live;
  {
    const std::lock_guard lock(observers_mutex_);
    std::erase_if(observers_, [](const std::weak_ptr<write_observer>& o) { return o.expired(); });
    for (const auto& o : observers_) {
      if (auto p = o.lock()) live.push_back(std::move(p));
    }
  }
  // Told outside the lock: an observer may add another.
  for (const auto& o : live) o->on_written(w);
}

void start_request(const std::shared_ptr<client_impl>& impl, request req, completion<response> handler) {
  spawn_operation(
      impl->strand, [impl, req = std::move(req)]() mutable { return impl->run(std::move(req)); }, std::move(handler),
      finish_result{});
}

void start_watch(const std::shared_ptr<client_impl>& impl, request req, std::chrono::milliseconds idle_timeout,
                 completion<watch_stream> handler) {
  spawn_operation(
      impl->strand,
      [impl, req = std::move(req), idle_timeout]() mutable {
        return open_watch(impl, std::move(req), {.idle_timeout = idle_timeout});
      },
      std::move(handler), finish_result{});
}
}  // namespace detail

client::client(executor_type ex, const client_config& config, client_params options)
    : client(std::move(ex), detail::to_settings(config, std::move(options))) {}

client::client(executor_type ex, detail::transport_params settings)
    : impl_(std::make_shared<detail::client_impl>(std::move(ex), std::move(settings))) {}

client::executor_type client::get_executor() const noexcept { return impl_->executor; }

const std::shared_ptr<metrics::provider>& client::metrics_provider() const noexcept { return impl_->settings.metrics; }

std::size_t client::connections_opened() const noexcept {
  return impl_->connections_opened.load(std::memory_order_relaxed);
}

client separate_client(const client& c) {
  const auto& impl = detail::client_access::impl(c);
  return detail::client_access::make(impl->executor, impl->settings);
}

}  // namespace kube

#include "config/transport_params.hpp"
#include "transport/client_impl.hpp"

#include <kube/rest/client.hpp>

namespace kube {

namespace detail {
void start_request(const std::shared_ptr<client_impl>& impl, request req, completion<response> handler) {
  spawn_operation(
      impl->strand, [impl, req = std::move(req)]() mutable { return impl->run(std::move(req)); }, std::move(handler),
      finish_result{});
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

}  // namespace kube

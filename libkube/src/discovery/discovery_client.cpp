#include "transport/client_impl.hpp"

#include <kube/discovery/discovery_client.hpp>

namespace kube {
namespace asio = boost::asio;

void discovery_client::invalidate_cache() const {
  s_->cache.invalidate(detail::client_access::impl(s_->c)->settings.server);
}

namespace detail {

void start_discover(std::shared_ptr<const discovery_state> s, bool refresh, completion<discovery_document> h) {
  const auto& impl = detail::client_access::impl(s->c);
  spawn_operation(
      impl->strand,
      [s, impl, refresh]() -> asio::awaitable<result<discovery_document>> {
        result<discovery_document> out;
        const auto& server = impl->settings.server;
        if (s->params.use_cache && !refresh) {
          if (auto cached = s->cache.load(server)) {
            out.value = std::move(*cached);
            co_return out;
          }
        }
        discovery_planner planner(s->params.discovery);
        while (!planner.done()) {
          for (const auto& dreq : planner.take_requests()) {
            auto r = co_await impl->run(request{}.raw_path(dreq.path).accept(dreq.accept));
            if (r.ec == asio::error::operation_aborted) {
              out.ec = r.ec;
              co_return out;
            }
            if (r.value.status == 0) {
              out.diag = std::move(r.diag);  // the transport's sentence names the server and the cause
              out.ec = planner.on_transport_error(dreq, r.ec, out.diag);
            } else {
              const discovery_response resp{static_cast<int>(r.value.status), r.value.content_type, r.value.body};
              out.ec = planner.on_response(dreq, resp, out.diag);
              if (out.ec == api_errc::unauthorized)
                out.diag.set_client_message(impl->unauthorized("discovery: GET " + dreq.path));
            }
            if (out.ec) co_return out;
          }
        }
        out.value = std::move(planner).result();
        if (s->params.use_cache) {
          diagnostics cache_diag;
          if (auto ec = s->cache.store(server, out.value, cache_diag))
            impl->settings.log.log(log_level::warning, "discovery cache: " + cache_diag.client_message());
        }
        co_return out;
      },
      std::move(h), finish_result{});
}

}  // namespace detail
}  // namespace kube

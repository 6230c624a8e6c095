// pods/portforward over WebSocket: the subprotocol v4.channel.k8s.io with
// one port per connection (channel_layout::port_forward). The apiserver
// passes such an upgrade on to the kubelet, which speaks it; kubectl 1.31+
// tunnels SPDY through a WebSocket instead (SPDY/3.1+portforward.k8s.io),
// which needs a SPDY framer for no gain here. See docs/guides/streams.md.
#include "streams/channel_socket.hpp"
#include "tools/complete_now.hpp"

#include <kube/async.hpp>
#include <kube/base/listen.hpp>
#include <kube/streams/port_forward.hpp>
#include <kube/streams/pod_streams.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <atomic>
#include <list>
#include <tuple>

namespace kube::detail {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {
request port_forward_request(const std::string& ns, const std::string& pod, std::uint16_t port) {
  request req;  // a GET with the upgrade headers (the WebSocket handshake)
  req.version("v1").resource("pods").namespace_(ns).name(pod).subresource("portforward");
  req.param("ports", std::to_string(port));
  // What kubectl sends: the upgrade has no representation to choose, and
  // KWOK's kubelet stand-in refuses "application/json" here (406).
  req.accept("*/*");
  return req;
}

// What is missing for a port-forward request, or empty.
std::string missing(const std::string& ns, const std::string& pod, std::uint16_t port) {
  if (ns.empty() || pod.empty() || port == 0) return ": needs a namespace, a pod name and a port above 0";
  return {};
}

// Opens the WebSocket of one forwarded connection (on the client's strand).
asio::awaitable<std::shared_ptr<remote_state>> open_port(std::shared_ptr<client_impl> impl, request req, error_code& ec,
                                                         diagnostics& diag) {
  std::vector<std::string_view> protocols{channel_v4};  // g++ 12: not a braced list inside the co_await
  auto st = co_await open_channel_socket(std::move(impl), std::move(req), channel_layout::port_forward,
                                         std::move(protocols), ec, diag);
  if (st) st->with_stdin = true;  // channel 0 carries the data both ways
  co_return st;
}

}  // namespace

void start_pod_port_forward(client c, std::string ns, std::string name, std::uint16_t port,
                            completion<forwarded_stream> h) {
  const auto& impl = client_access::impl(c);
  auto req = port_forward_request(ns, name, port);
  auto problem = missing(ns, name, port);
  spawn_operation(
      impl->strand,
      [impl, req = std::move(req),
       problem = std::move(problem)]() mutable -> asio::awaitable<result<forwarded_stream>> {
        result<forwarded_stream> r;
        if (!problem.empty()) {
          r.ec = client_errc::invalid_config;
          r.diag.set_client_message(req.describe() + problem);
          co_return r;
        }
        auto st = co_await open_port(impl, req, r.ec, r.diag);
        if (st) r.value = forwarded_stream(program_handle(st));
        co_return r;
      },
      std::move(h), finish_result{});
}

class port_forwarder_impl : public std::enable_shared_from_this<port_forwarder_impl> {
public:
  port_forwarder_impl(client c, std::string ns, std::string pod, std::uint16_t port, const port_forward_params& p)
      : client_(std::move(c)),
        impl_(client_access::impl(client_)),
        req_(port_forward_request(ns, pod, port)),
        acceptor_(impl_->strand),
        max_connections_(p.max_connections),
        slot_freed_(impl_->strand, asio::steady_timer::time_point::max()) {
    const std::string where = p.address + ":" + std::to_string(p.local_port);
    if (auto problem = missing(ns, pod, port); !problem.empty()) {
      throw kube::error(client_errc::invalid_config, req_.describe() + problem);
    }
    error_code ec;
    const auto address = asio::ip::make_address(p.address, ec);
    if (ec) throw kube::error(ec, "port-forward: \"" + p.address + "\" is not an IP address");
    ec = kube::listen_cloexec(acceptor_, tcp::endpoint(address, p.local_port));
    if (!ec) local_port_ = acceptor_.local_endpoint(ec).port();
    if (ec) throw kube::error(ec, "port-forward: cannot listen on " + where);  // what() adds the reason
  }

  [[nodiscard]] std::uint16_t local_port() const { return local_port_; }
  [[nodiscard]] port_forwarder_stats stats() const { return {accepted_.load(), failed_.load(), open_.load()}; }

  void start(asio::any_completion_handler<void(error_code)> handler) {
    if (running_.exchange(true)) {
      complete_now(impl_->strand, std::move(handler), make_error_code(client_errc::already_running));
      return;
    }
    auto self = shared_from_this();
    spawn_operation(impl_->strand, accept_loop(), std::move(handler), [self](std::exception_ptr e) {
      for (auto& c : self->conns_) c.close();  // each connection ends when its coroutines see it
      self->running_ = false;
      return std::tuple{error_of(e)};
    });
  }

private:
  struct forwarded {
    std::shared_ptr<tcp::socket> local;
    forwarded_stream remote;
    void close() {
      error_code ignored;
      local->close(ignored);
      remote.close();
    }
  };

  client client_;
  std::shared_ptr<client_impl> impl_;
  request req_;
  tcp::acceptor acceptor_;
  std::uint16_t local_port_ = 0;
  std::atomic<bool> running_{false};
  std::atomic<std::uint64_t> accepted_{0}, failed_{0}, open_{0};
  std::size_t max_connections_;
  asio::steady_timer slot_freed_;  // never expires; cancelled when a connection ends
  std::list<forwarded> conns_;     // on the strand

  void warn(const std::string& line) const {
    const auto& lg = impl_->settings.log;
    if (lg.enabled(log_level::warning)) lg.log(log_level::warning, line);
  }

  asio::awaitable<void> accept_loop() {
    for (;;) {
      if (max_connections_ > 0) co_await wait_until(slot_freed_, [this] { return open_.load() < max_connections_; });
      auto [ec, s] = co_await acceptor_.async_accept(use_tuple);
      if (ec == asio::error::operation_aborted) throw boost::system::system_error(ec);
      if (ec) {  // out of descriptors and the like: go on after a pause, as a server does
        warn("port-forward " + req_.describe() + ": accept failed: " + ec.message());
        asio::steady_timer pause(impl_->strand, std::chrono::milliseconds(100));
        co_await pause.async_wait(asio::use_awaitable);
        continue;
      }
      ++accepted_;
      ++open_;               // here, not in forward(): the next turn of this loop counts it
      kube::set_cloexec(s);  // as the client's own connections: a process we start holds none
      auto self = shared_from_this();
      asio::co_spawn(
          impl_->strand, [self, local = std::make_shared<tcp::socket>(std::move(s))] { return self->forward(local); },
          asio::detached);
    }
  }

  // One local connection: open its forwarded stream, then copy both ways
  // until either side ends; the other is closed then. The connection is
  // in conns_ from the start, so that the end of async_run closes its
  // local side even while its WebSocket is still being opened.
  asio::awaitable<void> forward(std::shared_ptr<tcp::socket> local) {
    auto it = conns_.insert(conns_.end(), forwarded{local, {}});
    error_code ec;
    diagnostics diag;
    auto st = co_await open_port(impl_, req_, ec, diag);
    if (st && local->is_open()) {
      it->remote = forwarded_stream(program_handle(st));
      asio::co_spawn(impl_->strand, pump(*it, direction::to_pod), asio::detached);
      co_await pump(*it, direction::from_pod);
      it->close();
      // A failure is what the stream says, not which side ended first.
      if (!st->status.empty() || st->failure) {
        auto end = st->end_of_output();
        ec = end.ec;
        diag = std::move(end.diag);
      }
    } else if (st) {
      st->close();  // async_run ended while the WebSocket was being opened
    }
    if (ec) {
      ++failed_;
      warn(std::string("port-forward: ") + kube::error(ec, diag).what());
    }
    it->close();
    conns_.erase(it);
    --open_;
    slot_freed_.cancel();
  }

  enum class direction { to_pod, from_pod };

  // Copies one way until either side fails or ends, then closes both (a
  // forwarded connection ends as a whole: the protocol has no half-close).
  // `f` is a copy: the connection's entry may go before this ends.
  static asio::awaitable<void> pump(forwarded f, direction d) {
    std::array<char, 16 * 1024> buf;
    for (;;) {
      error_code ec;
      std::size_t n = 0;
      if (d == direction::to_pod) {
        std::tie(ec, n) = co_await f.local->async_read_some(asio::buffer(buf), use_tuple);
      } else {
        std::tie(ec, n) = co_await f.remote.async_read_some(asio::buffer(buf), use_tuple);
      }
      if (ec) break;
      if (d == direction::to_pod) {
        std::tie(ec, n) = co_await asio::async_write(f.remote, asio::buffer(buf.data(), n), use_tuple);
      } else {
        std::tie(ec, n) = co_await asio::async_write(*f.local, asio::buffer(buf.data(), n), use_tuple);
      }
      if (ec) break;
    }
    f.close();
  }
};

void port_forwarder_start(std::shared_ptr<port_forwarder_impl> impl,
                          asio::any_completion_handler<void(error_code)> handler) {
  impl->start(std::move(handler));
}

}  // namespace kube::detail

namespace kube {

port_forwarder::port_forwarder(client c, std::string namespace_name, std::string pod, std::uint16_t pod_port,
                               const port_forward_params& params)
    : impl_(std::make_shared<detail::port_forwarder_impl>(std::move(c), std::move(namespace_name), std::move(pod),
                                                          pod_port, params)) {}

std::uint16_t port_forwarder::local_port() const { return impl_->local_port(); }
port_forwarder_stats port_forwarder::stats() const { return impl_->stats(); }

}  // namespace kube

// asio-embedding: an informer inside a service that already has an
// io_context. The "existing service" is a small Boost.Beast HTTP server; the
// informer's cache answers its requests. One io_context, one thread, runs
// the server, the informer's list/watch and the signal handling:
//
//   GET /healthz                                  200 "ok" once the cache has synced, 503 before
//   GET /configmaps[?namespace=NS][&selector=SEL] 200 {"items":[{"namespace","name","resourceVersion"}...]}
//                                                 (sorted; 400 for a malformed selector)
//
// SIGINT/SIGTERM close the listener and the open connections, stop the
// informer, and the process exits 0 once io.run() has returned.
//
// usage: asio-embedding [--port N] [--namespace NS] [--kubeconfig FILE] [--context NAME]
//        --port 0 (the default) picks a free port; the first line printed is
//        "listening on http://127.0.0.1:PORT".
#include <kube/rest/client.hpp>
#include <kube/config/client_config.hpp>
#include <kube/informer/informer_factory.hpp>

#include <kube/k8s/core/v1/config_map.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <boost/url/parse.hpp>

#include <algorithm>
#include <csignal>
#include <functional>
#include <iostream>
#include <set>
#include <string>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
namespace ki = kube::informer;
using asio::ip::tcp;
using k8s::core::v1::ConfigMap;
using request = http::request<http::string_body>;
using response = http::response<http::string_body>;

namespace {

struct options {
  unsigned short port = 0;
  std::string namespace_name, kubeconfig, context;  // empty namespace: all namespaces
};

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(std::string(a) + " needs a value");
      return argv[++i];
    };
    if (a == "--port") {
      const auto v = value();
      if (v.empty() || v.size() > 5 || v.find_first_not_of("0123456789") != std::string::npos || std::stoul(v) > 65535)
        throw std::invalid_argument("--port: not a port number (0-65535): \"" + v + "\"");
      o.port = static_cast<unsigned short>(std::stoul(v));
    } else if (a == "-n" || a == "--namespace")
      o.namespace_name = value();
    else if (a == "--kubeconfig")
      o.kubeconfig = value();
    else if (a == "--context")
      o.context = value();
    else
      throw std::invalid_argument("unknown argument " + std::string(a));
  }
  return o;
}

// ---- the "existing" HTTP server: knows nothing about Kubernetes ----------------
// [server]
// A minimal Beast server: one coroutine per connection, keep-alive, a 30 s
// idle timeout, every request answered by `handler`. stop() closes the
// listener and cancels every open connection, so the io_context runs out of
// work and io.run() returns.
class http_server {
public:
  using handler_type = std::function<response(const request&)>;

  http_server(asio::io_context& io, tcp::endpoint at, handler_type handler)
      : acceptor_(io, at),
        handler_(std::move(handler)) {}

  [[nodiscard]] tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }

  void start() { asio::co_spawn(acceptor_.get_executor(), accept_loop(), asio::detached); }

  void stop() {
    stopping_ = true;
    acceptor_.close();
    for (auto* s : sessions_) s->cancel();
  }

private:
  asio::awaitable<void> accept_loop() {
    for (;;) {
      auto [ec, socket] = co_await acceptor_.async_accept(asio::as_tuple(asio::use_awaitable));
      if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
      if (!ec) asio::co_spawn(acceptor_.get_executor(), session(std::move(socket)), asio::detached);
    }
  }

  asio::awaitable<void> session(tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    sessions_.insert(&stream);
    beast::flat_buffer buffer;
    while (!stopping_) {
      stream.expires_after(std::chrono::seconds(30));
      request req;
      auto [rec, rn] = co_await http::async_read(stream, buffer, req, asio::as_tuple(asio::use_awaitable));
      if (rec) break;  // closed by the peer, timed out, cancelled by stop(), or a malformed request
      response res;
      try {
        res = handler_(req);
      } catch (const std::exception& e) {
        res = response(http::status::internal_server_error, 11);
        res.body() = std::string(e.what()) + "\n";
      }
      res.version(req.version());
      res.keep_alive(req.keep_alive());
      res.prepare_payload();
      auto [wec, wn] = co_await http::async_write(stream, res, asio::as_tuple(asio::use_awaitable));
      if (wec || !res.keep_alive()) break;
    }
    sessions_.erase(&stream);
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

  tcp::acceptor acceptor_;
  handler_type handler_;
  std::set<beast::tcp_stream*> sessions_;  // these two are touched only on the io_context's thread
  bool stopping_ = false;
};
// [server]

response reply(http::status status, std::string body, std::string_view type = "application/json") {
  response res(status, 11);
  res.set(http::field::content_type, type);
  res.body() = std::move(body);
  return res;
}

response error_reply(http::status status, const std::string& message) {
  return reply(status, json::serialize(json::object{{"error", message}}));
}

// The informers retry on their own (with backoff); say why, e.g. RBAC.
void log_watch_error(const ki::watch_failure& f) {
  std::cerr << "asio-embedding: watch error: " << kube::error_message(f.ec, f.diag) << "; retrying in "
            << f.retry_in.count() << " ms" << (f.relist ? " with a relist" : "") << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "asio-embedding: " << e.what()
              << "\nusage: asio-embedding [--port N] [--namespace NS] [--kubeconfig FILE] [--context NAME]\n";
    return 2;
  }
  try {
    kube::load_default_params lp;
    lp.kubeconfig.explicit_path = o.kubeconfig;
    lp.overrides.context = o.context;

    // [embed]
    asio::io_context io;  // the service's io_context: everything below runs on it

    // The informer: list+watch ConfigMaps into a cache, on the same io_context.
    kube::client c(io.get_executor(), kube::client_config::load_default(lp));
    ki::informer_factory factory(
        c, {.namespace_name = o.namespace_name, .strip_managed_fields = true, .on_watch_error = log_watch_error});
    auto configmaps = factory.for_type<ConfigMap>();
    // Selectors match on ConfigMap::labels() (metadata.labels, read in place).
    const auto lister = configmaps->make_lister();

    // The server's routes read the cache: no request to the API server per
    // HTTP request, and answers as fresh as the watch.
    http_server server(io, {asio::ip::make_address("127.0.0.1"), o.port}, [&](const request& req) {
      if (req.method() != http::verb::get) return error_reply(http::status::method_not_allowed, "only GET");
      auto url = boost::urls::parse_origin_form(req.target());
      if (!url) return error_reply(http::status::bad_request, "bad request target");
      if (url->path() == "/healthz") {
        return factory.has_synced() ? reply(http::status::ok, "ok\n", "text/plain")
                                    : reply(http::status::service_unavailable, "cache not synced\n", "text/plain");
      }
      if (url->path() != "/configmaps") return error_reply(http::status::not_found, "no such path");
      if (!factory.has_synced()) return error_reply(http::status::service_unavailable, "cache not synced");
      const auto params = url->params();  // percent-decoded
      std::string ns, selector;
      if (auto it = params.find("namespace"); it != params.end()) ns = (*it).value;
      if (auto it = params.find("selector"); it != params.end()) selector = (*it).value;
      std::vector<std::shared_ptr<const ConfigMap>> found;
      try {
        const auto sel = ki::label_selector::parse(selector);
        found = ns.empty() ? lister.list(sel) : lister.list(ns, sel);
      } catch (const std::invalid_argument& e) {
        return error_reply(http::status::bad_request, e.what());
      }
      std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
        return std::pair(a->namespace_(), a->name()) < std::pair(b->namespace_(), b->name());
      });
      json::array items;
      for (const auto& cm : found) {
        items.push_back(json::object{
            {"namespace", cm->namespace_()}, {"name", cm->name()}, {"resourceVersion", cm->resource_version()}});
      }
      return reply(http::status::ok, json::serialize(json::object{{"items", std::move(items)}}) + "\n");
    });
    server.start();
    std::cout << "listening on http://" << server.local_endpoint() << std::endl;

    // Run the informers; SIGINT/SIGTERM stop them and the server.
    asio::cancellation_signal stop_informers;
    factory.async_run(asio::bind_cancellation_slot(stop_informers.slot(), [](kube::error_code) {}));
    asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](boost::system::error_code ec, int signo) {
      if (ec) return;
      std::cout << "signal " << signo << ": stopping" << std::endl;
      server.stop();
      stop_informers.emit(asio::cancellation_type::terminal);
    });
    io.run();  // returns once the server and the informers have stopped
    // [embed]
    std::cout << "stopped" << std::endl;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "asio-embedding: " << e.what() << "\n";
    return 1;
  }
}

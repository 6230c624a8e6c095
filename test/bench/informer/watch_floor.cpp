// The floor under the informer benchmark's update phase: what receiving the
// same watch events costs with less and less work done on them. Run by
// test/bench/informer/run.sh -F next to the informers, same cluster, same
// updates.
//
//   kube-bench-watch-floor --kubeconfig F --namespace NS --updates M --mode tls|tls-blocking|watch
//
//   tls    bytes only: one TLS connection through Asio (the transport kube
//          uses: asio::ssl::stream over a TCP socket, one io_context), the
//          watch request written by hand (client certificate or bearer
//          token), and the body read in 64 KiB reads and scanned for the
//          start of a MODIFIED event. No HTTP parser, no chunk decoding, no
//          JSON. Nothing a client can skip.
//   tls-blocking  the same without the reactor: every socket operation is
//          synchronous, so each read is one blocking recvfrom (no
//          epoll_wait, no EAGAIN). The least a client on this machine can
//          spend to receive the events.
//   watch  kube's typed watch (kube::api<Pod>::async_watch): HTTP, chunks,
//          envelope and each Pod read into k8s::core::v1::Pod, no informer.
//
// Both start at the resourceVersion of a one-item list, so they receive the
// updates only, and count MODIFIED events until they have seen M.
//
// Output lines (key=value), as kube-bench-informer's:
//   SYNCED objects=0        the watch is open: the harness starts the updates
//   RESULT impl=floor-tls|floor-tls-blocking|floor-watch objects=0 sync_s=.. updates_s=.. cpu_s=.. cpu_synced_s=.. sys_s=.. maxrss_kb=.. rss_before_kb=.. rss_synced_kb=..

#include <kube/typed/api.hpp>
#include <kube/api/core/v1/pod.hpp>
#include <kube/rest/client.hpp>
#include <kube/config/client_config.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/url/parse.hpp>

#include "../tools/bench_config.hpp"
#include "../tools/process_stats.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace asio = boost::asio;
using Pod = k8s::core::v1::Pod;
using kube_bench::cpu_seconds;

namespace {

struct counters {
  long updates = 0;
  long seen = 0;
  std::chrono::steady_clock::time_point start;
  double cpu_open = 0;

  void opened() {
    cpu_open = cpu_seconds();
    std::cout << "SYNCED objects=0" << std::endl;
    start = std::chrono::steady_clock::now();
  }
};

// Counts `{"type":"MODIFIED"` in a stream read in pieces. A match that
// spans two reads is found in the last bytes kept from the previous read
// joined to the first bytes of the new one; neither can hold a whole match.
class event_counter {
public:
  long feed(std::string_view bytes) {
    const std::size_t head = std::min(bytes.size(), keep);
    std::copy_n(bytes.data(), head, join_.data() + carried_);
    long found = count(std::string_view(join_.data(), carried_ + head));
    found += count(bytes);
    if (bytes.size() >= keep) {
      std::copy_n(bytes.data() + bytes.size() - keep, keep, join_.data());
      carried_ = keep;
    } else {
      const std::size_t total = carried_ + head;
      carried_ = std::min(total, keep);
      std::copy(join_.data() + total - carried_, join_.data() + total, join_.data());
    }
    return found;
  }

private:
  static constexpr std::string_view pattern = R"({"type":"MODIFIED")";
  static constexpr std::size_t keep = pattern.size() - 1;

  static long count(std::string_view s) {
    long n = 0;
    for (auto at = s.find(pattern); at != std::string_view::npos; at = s.find(pattern, at + pattern.size())) ++n;
    return n;
  }

  std::array<char, 2 * keep> join_{};  // the carried bytes, then the new read's first ones
  std::size_t carried_ = 0;
};

asio::awaitable<std::string> list_resource_version(kube::api<Pod>& pods) {
  kube::list_params lp;
  lp.limit = 1;
  const auto list = co_await pods.async_list(lp);
  std::string rv = list.metadata ? list.metadata->resource_version.value_or("") : "";
  if (rv.empty()) throw std::runtime_error("the pod list carries no resourceVersion");
  co_return rv;
}

// What both TLS modes share: the endpoint, the TLS settings of the
// kubeconfig, the request, and the response head.
struct tls_watch {
  std::string host, port, sni, request;
  asio::ssl::context ctx{asio::ssl::context::tls_client};
  std::array<char, 64 * 1024> buf{};
  std::string head;
  event_counter events;

  tls_watch(const kube::client_config& cfg, const std::string& ns, const std::string& rv) {
    const auto url = boost::urls::parse_uri(cfg.server).value();
    host = url.host();
    port = url.has_port() ? std::string(url.port()) : "443";
    sni = cfg.tls_server_name.empty() ? host : cfg.tls_server_name;
    if (!cfg.ca_pem.empty()) ctx.add_certificate_authority(asio::buffer(cfg.ca_pem));
    ctx.set_verify_mode(cfg.insecure_skip_tls_verify ? asio::ssl::verify_none : asio::ssl::verify_peer);
    if (!cfg.client_cert_pem.empty()) {
      ctx.use_certificate_chain(asio::buffer(cfg.client_cert_pem));
      ctx.use_private_key(asio::buffer(cfg.client_key_pem.reveal()), asio::ssl::context::pem);
    }
    request = "GET /api/v1/namespaces/" + ns + "/pods?watch=true&allowWatchBookmarks=true&resourceVersion=" + rv +
              " HTTP/1.1\r\nHost: " + host + "\r\nAccept: application/json\r\nUser-Agent: " + cfg.user_agent + "\r\n";
    if (!cfg.bearer_token.reveal().empty()) request += "Authorization: Bearer " + cfg.bearer_token.reveal() + "\r\n";
    request += "\r\n";
  }

  void prepare(asio::ssl::stream<asio::ip::tcp::socket>& s) const {
    s.next_layer().set_option(asio::ip::tcp::no_delay(true));
    SSL_set_tlsext_host_name(s.native_handle(), sni.c_str());
  }

  // Takes the bytes of one read before the body; true once the head is whole.
  bool read_head(std::size_t got, counters& n) {
    head.append(buf.data(), got);
    const auto body_at = head.find("\r\n\r\n");
    if (body_at == std::string::npos) return false;
    if (head.rfind("HTTP/1.1 200", 0) != 0) {
      throw std::runtime_error("watch refused: " + head.substr(0, head.find('\r')));
    }
    n.seen = events.feed(std::string_view(head).substr(body_at + 4));
    n.opened();
    return true;
  }

  void read_body(std::size_t got, counters& n) { n.seen += events.feed(std::string_view(buf.data(), got)); }
};

// --mode tls: the socket on the io_context, as kube's transport uses it.
asio::awaitable<void> run_tls(tls_watch& w, counters& n) {
  auto ex = co_await asio::this_coro::executor;
  asio::ssl::stream<asio::ip::tcp::socket> s(ex, w.ctx);
  asio::ip::tcp::resolver resolver(ex);
  co_await asio::async_connect(s.next_layer(), co_await resolver.async_resolve(w.host, w.port, asio::use_awaitable),
                               asio::use_awaitable);
  w.prepare(s);
  co_await s.async_handshake(asio::ssl::stream_base::client, asio::use_awaitable);
  co_await asio::async_write(s, asio::buffer(w.request), asio::use_awaitable);
  while (!w.read_head(co_await s.async_read_some(asio::buffer(w.buf), asio::use_awaitable), n)) {}
  while (n.seen < n.updates) w.read_body(co_await s.async_read_some(asio::buffer(w.buf), asio::use_awaitable), n);
}

// --mode tls-blocking: no reactor at all. Every operation on the socket is
// synchronous, so Asio never makes it non-blocking and each read is one
// recvfrom that sleeps in the kernel until bytes arrive.
void run_tls_blocking(tls_watch& w, counters& n) {
  asio::io_context ioc(1);
  asio::ssl::stream<asio::ip::tcp::socket> s(ioc, w.ctx);
  asio::ip::tcp::resolver resolver(ioc);
  asio::connect(s.next_layer(), resolver.resolve(w.host, w.port));
  w.prepare(s);
  s.handshake(asio::ssl::stream_base::client);
  asio::write(s, asio::buffer(w.request));
  while (!w.read_head(s.read_some(asio::buffer(w.buf)), n)) {}
  while (n.seen < n.updates) w.read_body(s.read_some(asio::buffer(w.buf)), n);
}

asio::awaitable<void> run_watch(kube::api<Pod>& pods, const std::string& rv, counters& n) {
  kube::watch_params wp;
  wp.resource_version = rv;
  auto w = co_await pods.async_watch(wp);
  n.opened();
  while (n.seen < n.updates) {
    auto ev = co_await w.async_next();
    if (ev.type == kube::watch_event_type::modified) ++n.seen;
  }
  w.close();
}

}  // namespace

int main(int argc, char** argv) {
  std::string kubeconfig;
  std::string ns = "bench";
  std::string mode;
  counters n;
  n.updates = 10000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::cerr
          << "usage: kube-bench-watch-floor --kubeconfig F --namespace NS --updates M --mode tls|tls-blocking|watch\n";
      return 2;
    }
    const std::string v = argv[++i];
    if (a == "--kubeconfig") {
      kubeconfig = v;
    } else if (a == "--namespace") {
      ns = v;
    } else if (a == "--updates") {
      n.updates = std::stol(v);
    } else if (a == "--mode") {
      mode = v;
    } else {
      std::cerr << "unknown option " << a << "\n";
      return 2;
    }
  }
  if (mode != "tls" && mode != "tls-blocking" && mode != "watch") {
    std::cerr << "--mode must be tls, tls-blocking or watch\n";
    return 2;
  }
  asio::io_context ioc(1);
  auto cfg = kube_bench::load_config(kubeconfig);
  kube::client c(ioc.get_executor(), cfg);
  kube::api<Pod> pods(c, ns);
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        const std::string rv = co_await list_resource_version(pods);
        if (mode == "tls" || mode == "tls-blocking") {
          tls_watch w(cfg, ns, rv);
          if (mode == "tls") {
            co_await run_tls(w, n);
          } else {
            run_tls_blocking(w, n);
          }
        } else {
          co_await run_watch(pods, rv, n);
        }
      },
      [](const std::exception_ptr& e) {
        if (e) std::rethrow_exception(e);
      });
  ioc.run();
  const double updates_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - n.start).count();
  const auto u = kube_bench::usage_now();
  std::printf("RESULT impl=floor-%s objects=0 sync_s=0 updates_s=%.3f cpu_s=%.3f cpu_synced_s=%.3f sys_s=%.3f "
              "maxrss_kb=%ld rss_before_kb=0 rss_synced_kb=0\n",
              mode.c_str(), updates_s, u.cpu, n.cpu_open, u.system, u.max_rss_kb);
  return 0;
}

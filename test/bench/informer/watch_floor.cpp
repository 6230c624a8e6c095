// The floor under the informer benchmark: what receiving the same pods
// (a streaming list) and the same watch events costs with less and less
// work done on them. Run by test/bench/informer/run.sh -F next to the
// informers, same cluster, same updates.
//
//   kube-bench-watch-floor --kubeconfig F --namespace NS --updates M --mode tls|tls-blocking|watch [--json]
//
//   tls    bytes only: one TLS connection through Asio (the transport kube
//          uses: asio::ssl::stream over a TCP socket, one io_context), the
//          watch request written by hand (client certificate or bearer
//          token), and the body read in 64 KiB reads, its chunk framing
//          taken off (a chunk boundary can fall inside an event's first
//          bytes) and scanned for the start of a MODIFIED event. No HTTP
//          parser, no decoding. Nothing a client can skip. It asks for protobuf, as
//          kube does for Pods by default, and finds each event's type
//          field (`0a 08 MODIFIED`); with --json it asks for JSON and finds
//          `{"type":"MODIFIED"`.
//   tls-blocking  the same without the reactor: every socket operation is
//          synchronous, so each read is one blocking recvfrom (no
//          epoll_wait, no EAGAIN). The least a client on this machine can
//          spend to receive the events.
//   watch  kube's typed watch (kube::api<Pod>::async_watch): HTTP, chunks,
//          envelope and each Pod read into k8s::core::v1::Pod, no informer
//          (protobuf, or JSON with --json).
//
// Each syncs as kube's informer does by default: one watch with
// sendInitialEvents=true, whose initial events are every pod, ended by a
// bookmark annotated k8s.io/initial-events-end (found in the bytes by the
// TLS modes). That is the synced moment (time and CPU from after the client
// is made, as kube-bench-informer measures). Then each counts MODIFIED
// events until it has seen M.
//
// Output lines (key=value), as kube-bench-informer's:
//   SYNCED objects=0        the initial events are in: the harness starts the updates
//   RESULT impl=floor-tls|floor-tls-blocking|floor-watch[-json] objects=0 sync_s=.. updates_s=.. cpu_s=.. cpu_synced_s=.. sys_s=.. maxrss_kb=.. rss_before_kb=.. rss_synced_kb=..

#include <kube/typed/api.hpp>
#include <kube/k8s/core/v1/pod.hpp>
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
#include <cctype>
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
  std::chrono::steady_clock::time_point begin = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point start;
  double sync_s = 0;
  double cpu_open = 0;

  // The initial events are in: the harness starts the updates.
  void synced() {
    cpu_open = cpu_seconds();
    start = std::chrono::steady_clock::now();
    sync_s = std::chrono::duration<double>(start - begin).count();
    std::cout << "SYNCED objects=0" << std::endl;
  }
};

// Counts a pattern (the start of a MODIFIED event, the annotation that
// ends the initial events) in a stream read in pieces. A match that spans
// two reads is found in the last bytes kept from the previous read joined
// to the first bytes of the new one; neither can hold a whole match.
class pattern_counter {
public:
  explicit pattern_counter(std::string_view pattern)
      : pattern_(pattern),
        keep_(pattern.size() - 1) {
    if (pattern.size() > max_pattern) throw std::logic_error("pattern_counter: pattern too long");
  }

  long feed(std::string_view bytes) {
    const std::size_t head = std::min(bytes.size(), keep_);
    std::copy_n(bytes.data(), head, join_.data() + carried_);
    long found = count(std::string_view(join_.data(), carried_ + head));
    found += count(bytes);
    if (bytes.size() >= keep_) {
      std::copy_n(bytes.data() + bytes.size() - keep_, keep_, join_.data());
      carried_ = keep_;
    } else {
      const std::size_t total = carried_ + head;
      carried_ = std::min(total, keep_);
      std::copy(join_.data() + total - carried_, join_.data() + total, join_.data());
    }
    return found;
  }

private:
  static constexpr std::size_t max_pattern = 32;

  long count(std::string_view s) const {
    long n = 0;
    for (auto at = s.find(pattern_); at != std::string_view::npos; at = s.find(pattern_, at + pattern_.size())) ++n;
    return n;
  }

  std::string_view pattern_;
  std::size_t keep_;  // fewer bytes than a match, so a match is never counted twice

  std::array<char, 2 * max_pattern> join_{};  // the carried bytes, then the new read's first ones
  std::size_t carried_ = 0;
};

// Takes the chunk framing (RFC 9112 7.1: hex size, extensions, CRLF, data,
// CRLF) off a body read in pieces and gives the data to `sink`, piece by
// piece. No trailers: the watch never ends while it is read.
class chunk_stripper {
public:
  template <class Sink>
  void feed(std::string_view bytes, Sink&& sink) {
    while (!bytes.empty()) {
      switch (state_) {
      case state::size: {
        const char c = bytes.front();
        bytes.remove_prefix(1);
        if (c == '\n') {
          state_ = left_ > 0 ? state::data : state::data_end;
        } else if (!in_extension_ && std::isxdigit(static_cast<unsigned char>(c)) != 0) {
          left_ = left_ * 16 + static_cast<std::size_t>(std::isdigit(static_cast<unsigned char>(c)) != 0
                                                            ? c - '0'
                                                            : (std::tolower(static_cast<unsigned char>(c)) - 'a' + 10));
        } else {
          in_extension_ = true;  // ';' extensions, and the '\r'
        }
        break;
      }
      case state::data: {
        const std::size_t n = std::min(left_, bytes.size());
        sink(bytes.substr(0, n));
        bytes.remove_prefix(n);
        left_ -= n;
        if (left_ == 0) state_ = state::data_end;
        break;
      }
      case state::data_end:  // the CRLF after the data
        if (bytes.front() == '\n') {
          state_ = state::size;
          in_extension_ = false;
        }
        bytes.remove_prefix(1);
        break;
      }
    }
  }

private:
  enum class state { size, data, data_end };
  state state_ = state::size;
  std::size_t left_ = 0;
  bool in_extension_ = false;
};

// What both TLS modes share: the endpoint, the TLS settings of the
// kubeconfig, the request, and the response head.
struct tls_watch {
  std::string host, port, sni, request;
  asio::ssl::context ctx{asio::ssl::context::tls_client};
  std::array<char, 64 * 1024> buf{};
  std::string head;
  // A MODIFIED event starts with its type: JSON `{"type":"MODIFIED"`,
  // protobuf versioned.Event field 1, a string of 8 bytes.
  pattern_counter modified;
  // The bookmark that ends the initial events carries this annotation.
  pattern_counter initial_events_end{"k8s.io/initial-events-end"};
  bool synced = false;
  chunk_stripper chunks;

  tls_watch(const kube::client_config& cfg, const std::string& ns, bool json)
      : modified(json ? std::string_view(R"({"type":"MODIFIED")") : std::string_view("\x0a\x08MODIFIED")) {
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
    request = "GET /api/v1/namespaces/" + ns +
              "/pods?watch=true&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
              " HTTP/1.1\r\nHost: " +
              host + "\r\nAccept: " + (json ? "application/json" : "application/vnd.kubernetes.protobuf;stream=watch") +
              "\r\nUser-Agent: " + cfg.user_agent + "\r\n";
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
    if (head.find("Transfer-Encoding: chunked") == std::string::npos) {
      throw std::runtime_error("the watch answer is not chunked");
    }
    feed(std::string_view(head).substr(body_at + 4), n);
    return true;
  }

  void read_body(std::size_t got, counters& n) { feed(std::string_view(buf.data(), got), n); }

  void feed(std::string_view bytes, counters& n) {
    chunks.feed(bytes, [&](std::string_view data) {
      if (!synced && initial_events_end.feed(data) > 0) {
        synced = true;
        n.synced();
      }
      n.seen += modified.feed(data);
    });
  }
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

asio::awaitable<void> run_watch(kube::api<Pod>& pods, counters& n) {
  kube::watch_params wp;
  wp.send_initial_events = true;
  wp.resource_version_match = "NotOlderThan";
  auto w = co_await pods.async_watch(wp);
  while (n.seen < n.updates) {
    auto ev = co_await w.async_next();
    if (ev.initial_events_end) n.synced();
    if (ev.type == kube::watch_event_type::modified) ++n.seen;
  }
  w.close();
}

}  // namespace

int main(int argc, char** argv) {
  std::string kubeconfig;
  std::string ns = "bench";
  std::string mode;
  bool json = false;
  counters n;
  n.updates = 10000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") {
      json = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::cerr
          << "usage: kube-bench-watch-floor --kubeconfig F --namespace NS --updates M --mode tls|tls-blocking|watch "
             "[--json]\n";
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
  kube::client_params cp;
  cp.json_only = json;
  kube::client c(ioc.get_executor(), cfg, cp);
  n.begin = std::chrono::steady_clock::now();  // as kube-bench-informer: from after the client is made
  kube::api<Pod> pods(c, ns);
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        if (mode == "tls" || mode == "tls-blocking") {
          tls_watch w(cfg, ns, json);
          if (mode == "tls") {
            co_await run_tls(w, n);
          } else {
            run_tls_blocking(w, n);
          }
        } else {
          co_await run_watch(pods, n);
        }
      },
      [](const std::exception_ptr& e) {
        if (e) std::rethrow_exception(e);
      });
  ioc.run();
  const double updates_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - n.start).count();
  const auto u = kube_bench::usage_now();
  std::printf("RESULT impl=floor-%s%s objects=0 sync_s=%.3f updates_s=%.3f cpu_s=%.3f cpu_synced_s=%.3f sys_s=%.3f "
              "maxrss_kb=%ld rss_before_kb=0 rss_synced_kb=0\n",
              mode.c_str(), json ? "-json" : "", n.sync_s, updates_s, u.cpu, n.cpu_open, u.system, u.max_rss_kb);
  return 0;
}

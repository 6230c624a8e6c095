// The WebSocket under pods/exec, pods/attach and pods/portforward: opening
// it through the client's transport, and the reader and writer of
// channel_socket.hpp. Beast's WebSocket templates are instantiated here
// once, over erased_stream, which puts the plain and the TLS connection
// behind one type: two instantiations (one per stream type) made this the
// slowest file of the library to compile.
#include "streams/channel_socket.hpp"

#include <kube/async.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include <algorithm>
#include <type_traits>
#include <utility>
#include <variant>

namespace kube::detail {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;

namespace {
constexpr std::size_t max_buffered = 1 << 20;  // past this the connection is not read until the program reads
}  // namespace

/// A connection of the client's transport (plain or TLS) as one
/// AsyncStream type. Each read or write takes the first non-empty buffer
/// of its sequence (Asio's TLS stream does the same), and the handler is
/// type-erased: one more allocation per operation, from the handler's
/// allocator.
class erased_stream {
public:
  using executor_type = asio::any_io_executor;
  using io_handler = asio::any_completion_handler<void(error_code, std::size_t)>;
  using done_handler = asio::any_completion_handler<void(error_code)>;

  explicit erased_stream(std::unique_ptr<connection> c)
      : conn_(std::move(c)) {}

  executor_type get_executor() { return conn_->tcp().get_executor(); }

  template <class MutableBuffers, class Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    return asio::async_initiate<Token, void(error_code, std::size_t)>(
        [this](auto h, asio::mutable_buffer b) { read_some(b, io_handler(std::move(h))); }, token,
        first_mutable(buffers));
  }
  template <class ConstBuffers, class Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token) {
    return asio::async_initiate<Token, void(error_code, std::size_t)>(
        [this](auto h, asio::const_buffer b) { write_some(b, io_handler(std::move(h))); }, token, first_const(buffers));
  }

  // Beast and Asio post completions through the handler's executor, and
  // Boost 1.81's erased handler has one they cannot ask for "never
  // blocking": bind the connection's, the client's strand, which is also
  // the one of every handler that comes here (the WebSocket's operations
  // run on the strand).
  void read_some(asio::mutable_buffer b, io_handler h) {
    conn_->visit([&](auto& s) { s.async_read_some(b, asio::bind_executor(get_executor(), std::move(h))); });
  }
  void write_some(asio::const_buffer b, io_handler h) {
    if (!hold_write_errors_) {
      conn_->visit([&](auto& s) { s.async_write_some(b, asio::bind_executor(get_executor(), std::move(h))); });
      return;
    }
    if (*write_error_) {  // a write failed before: this one goes nowhere
      asio::post(get_executor(), [h = std::move(h), n = b.size()]() mutable { std::move(h)(error_code{}, n); });
      return;
    }
    conn_->visit([&](auto& s) {
      s.async_write_some(b, asio::bind_executor(get_executor(), [failed = write_error_, n = b.size(), h = std::move(h)](
                                                                    error_code ec, std::size_t k) mutable {
                           if (ec) {
                             *failed = ec;
                             ec = {};
                             k = n;
                           }
                           std::move(h)(ec, k);
                         }));
    });
  }
  /// From the end of the handshake: a failed write is kept here and shown to
  /// Beast as done. Beast fails the whole stream on a write error, and its
  /// next read then ends with operation_aborted, losing what the server sent
  /// before it closed (an exec's Status, the kubelet's error text): the reads
  /// go on, and remote_state::send reports the write's error itself.
  void hold_write_errors() { hold_write_errors_ = true; }
  [[nodiscard]] error_code write_error() const { return *write_error_; }
  void expires_never() { conn_->tcp().expires_never(); }
  void close() {
    error_code ignored;
    conn_->tcp().socket().close(ignored);
  }
  // The closing handshake of the layers under the WebSocket (TLS
  // close_notify, TCP shutdown), as Beast does it for the concrete types.
  void shut_down(beast::role_type role, error_code& ec) {
    using websocket::teardown;
    conn_->visit([&](auto& s) { teardown(role, s, ec); });
  }
  void async_shut_down(beast::role_type role, done_handler h) {
    conn_->visit([&](auto& s) {
      if constexpr (std::is_same_v<std::decay_t<decltype(s)>, connection::tls_stream>) {
        // What Beast's async_teardown of an ssl_stream does (close_notify,
        // then the TCP teardown, the first error wins), written out: Boost
        // 1.81 declares that one as a friend with other template parameters
        // than its definition, which clang 16 finds ambiguous through ADL
        // and inaccessible when named.
        s.async_shutdown(asio::bind_executor(get_executor(), [this, role, &s, h = std::move(h)](error_code ec) mutable {
          using websocket::async_teardown;
          async_teardown(role, s.next_layer(),
                         asio::bind_executor(get_executor(), [ec, h = std::move(h)](error_code ec2) mutable {
                           std::move(h)(ec ? ec : ec2);
                         }));
        }));
      } else {
        using websocket::async_teardown;
        async_teardown(role, s, asio::bind_executor(get_executor(), std::move(h)));
      }
    });
  }

private:
  std::unique_ptr<connection> conn_;
  bool hold_write_errors_ = false;
  std::shared_ptr<error_code> write_error_ = std::make_shared<error_code>();  // shared with a write in flight
};

// Found by Beast through argument-dependent lookup: the closing handshake
// under the WebSocket, and the hard close of a timed-out handshake.
void beast_close_socket(erased_stream& s) { s.close(); }
void teardown(beast::role_type role, erased_stream& s, error_code& ec) { s.shut_down(role, ec); }
template <class Handler>
void async_teardown(beast::role_type role, erased_stream& s, Handler&& h) {
  s.async_shut_down(role, erased_stream::done_handler(std::forward<Handler>(h)));
}

struct channel_websocket {
  websocket::stream<erased_stream> ws;
  explicit channel_websocket(std::unique_ptr<connection> c)
      : ws(std::move(c)) {}
};

remote_state::remote_state(const asio::any_io_executor& strand)
    : signal(strand, asio::steady_timer::time_point::max()),
      write_timer(strand) {}

remote_state::~remote_state() = default;

void remote_state::close() {
  if (!ws) return;
  ws->ws.next_layer().close();
  ended = true;
  notify();
}

asio::awaitable<void> remote_state::read_loop() {
  beast::flat_buffer b;
  for (;;) {
    co_await wait_until(signal, [this] { return ended || buffered() < max_buffered; });
    if (ended) co_return;
    b.clear();
    auto [ec, n] = co_await ws->ws.async_read(b, use_tuple);
    (void)n;
    if (ec) {
      // A close frame, or any end once the Status is in, or our own close().
      const bool clean = ec == websocket::error::closed || !status.empty() || ended;
      if (!clean) {
        failure = ec;
        failure_diag.set_client_message(req.describe() + ": the stream broke: " + ec.message());
      }
      ended = true;
      notify();
      co_return;
    }
    take(std::string_view(static_cast<const char*>(b.data().data()), b.data().size()));
  }
}

void remote_state::take(std::string_view message) {
  if (message.empty()) return;
  const auto channel = static_cast<unsigned char>(message[0]);
  std::string_view payload = message.substr(1);
  output* to = nullptr;
  bool is_status = false;
  if (layout == channel_layout::remote_command) {
    if (channel == 1 || channel == 2) to = &out[channel];
    is_status = channel == 3;
  } else if (channel <= 1) {
    const std::size_t skip = std::min(prefix[channel], payload.size());  // the port number
    prefix[channel] -= skip;
    payload.remove_prefix(skip);
    if (channel == 0) to = &out[0];
    is_status = channel == 1;
  }
  if (to) {
    if (to->pos > 0 && to->pos * 2 >= to->data.size()) {
      to->data.erase(0, to->pos);
      to->pos = 0;
    }
    to->data.append(payload);
  } else if (is_status && status.size() + payload.size() <= max_buffered) {
    status.append(payload);
  }
  notify();
}

result<std::size_t> remote_state::end_of_output() const {
  result<std::size_t> r;
  if (layout == channel_layout::port_forward && !status.empty()) {
    r.ec = client_errc::connection_failed;
    r.diag.set_client_message(req.describe() + ": " + status);
  } else if (failure && status.empty()) {
    r.ec = failure;
    r.diag = failure_diag;
  } else {
    r.ec = asio::error::eof;
  }
  return r;
}

asio::awaitable<error_code> remote_state::send(unsigned char channel, std::string_view bytes) {
  co_await wait_until(signal, [this] { return ended || !writing; });
  if (ended) co_return failure ? failure : error_code(asio::error::broken_pipe);
  // The error channel has spoken (an exec's Status, a forwarded port's
  // error): the server is closing, and a write now could only fail.
  if (!status.empty()) co_return error_code(asio::error::broken_pipe);
  writing = true;
  const auto limit = impl->settings.read_timeout;
  if (limit.count() > 0) {
    write_timer.expires_after(limit);
    write_timer.async_wait([w = weak_from_this(), seq = ++writes](error_code e) {
      auto s = w.lock();
      if (e || !s || !s->writing || s->writes != seq) return;
      s->write_timed_out = true;
      if (!s->failure) {
        s->failure = client_errc::timeout;
        s->failure_diag.set_client_message(s->req.describe() + ": a write made no progress for " +
                                           std::to_string(s->impl->settings.read_timeout.count()) +
                                           " ms (read_timeout); the connection was closed");
      }
      s->close();
    });
  }
  std::string msg;
  msg.reserve(bytes.size() + 1);
  msg.push_back(static_cast<char>(channel));
  msg.append(bytes);
  ws->ws.binary(true);
  auto [ec, n] = co_await ws->ws.async_write(asio::buffer(msg), use_tuple);
  (void)n;
  writing = false;
  write_timer.cancel();
  if (!ec) ec = ws->ws.next_layer().write_error();
  if (write_timed_out) ec = failure;
  notify();
  co_return ec;
}

asio::awaitable<std::shared_ptr<remote_state>> open_channel_socket(std::shared_ptr<client_impl> impl, request req,
                                                                   channel_layout layout,
                                                                   std::vector<std::string_view> protocols,
                                                                   error_code& ec, diagnostics& diag) {
  // Not throttled: as client-go's SPDY/WebSocket upgrades, these do not
  // take the client's qps/burst tokens (a port-forwarder's burst of local
  // connections must not delay the program's lists and Lease renewals).
  request_meter meter(*impl, req);  // to the end of the handshake
  auto conn = co_await impl->connect(ec, diag);
  if (!conn) co_return nullptr;
  auto m = impl->to_http(req);
  if ((ec = co_await impl->add_headers(m, diag))) co_return nullptr;
  auto st = std::make_shared<remote_state>(impl->strand);
  st->impl = impl;
  st->req = req;
  st->layout = layout;
  st->ws = std::make_unique<channel_websocket>(std::move(conn));
  auto& w = st->ws->ws;
  w.next_layer().expires_never();  // the WebSocket's own timeouts from here
  const auto timeout = impl->settings.read_timeout;
  websocket::stream_base::timeout opt{};
  opt.handshake_timeout = timeout.count() > 0 ? timeout : websocket::stream_base::none();
  opt.idle_timeout = websocket::stream_base::none();  // a command or a connection may be silent for long
  opt.keep_alive_pings = false;
  w.set_option(opt);
  // The client's headers (credentials, impersonation, user agent) on the
  // upgrade request, which Beast writes itself.
  std::vector<std::pair<std::string, std::string>> headers;
  for (const auto& f : m) {
    switch (f.name()) {
    case http::field::host:
    case http::field::connection:
    case http::field::upgrade:
    case http::field::content_length:
    case http::field::content_type:
      break;
    default:
      headers.emplace_back(f.name_string(), f.value());
    }
  }
  std::string offered;
  for (auto p : protocols) offered += (offered.empty() ? "" : ", ") + std::string(p);
  w.set_option(websocket::stream_base::decorator([headers, offered](websocket::request_type& up) {
    for (const auto& field : headers) up.erase(field.first);                 // Beast's own User-Agent
    for (const auto& field : headers) up.insert(field.first, field.second);  // repeated: impersonated groups
    up.set(http::field::sec_websocket_protocol, offered);
  }));
  w.read_message_max(64 * 1024 * 1024);
  // One frame per message: the kubelet's WebSocket library (x/net/websocket)
  // takes every frame for a message, so the continuation frames of a
  // fragmented one would be read as messages whose first byte is a channel.
  w.auto_fragment(false);
  websocket::response_type res;
  const std::string host(m[http::field::host]);
  const std::string target(m.target());
  auto [hec] = co_await w.async_handshake(res, host, target, use_tuple);
  // The answer to the upgrade: 101, or the refusal; 0 when none came (a
  // response_type starts as 200 OK, so it cannot tell by itself).
  meter.attempt(!hec || hec == websocket::error::upgrade_declined ? static_cast<int>(res.result_int()) : 0, 0);
  if (hec) {
    st->close();
    if (hec == websocket::error::upgrade_declined && res.result_int() >= 300) {
      ec = impl->refusal(res.result_int(), res.body(), req, diag);  // the server's Status
    } else {
      ec = hec == beast::error::timeout ? error_code(client_errc::timeout) : hec;
      diag.set_client_message(req.describe() + ": the WebSocket handshake failed: " + hec.message());
    }
    co_return nullptr;
  }
  st->protocol = std::string(res[http::field::sec_websocket_protocol]);
  if (std::find(protocols.begin(), protocols.end(), std::string_view(st->protocol)) == protocols.end()) {
    st->close();
    ec = client_errc::protocol_error;
    diag.set_client_message(req.describe() + ": the server chose the subprotocol \"" + st->protocol +
                            "\" (this client speaks " + offered + ")");
    co_return nullptr;
  }
  w.next_layer().hold_write_errors();
  asio::co_spawn(
      impl->strand, [st]() { return st->read_loop(); }, asio::detached);
  co_return st;
}

std::shared_ptr<remote_state> program_handle(const std::shared_ptr<remote_state>& st) {
  return std::shared_ptr<remote_state>(
      st.get(), [st](remote_state*) { asio::dispatch(st->impl->strand, [st] { st->close(); }); });
}

}  // namespace kube::detail

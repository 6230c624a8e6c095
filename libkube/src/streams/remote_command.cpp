// pods/exec and pods/attach over WebSocket, as kubectl speaks them: the
// subprotocol v5.channel.k8s.io (v4.channel.k8s.io when the server offers
// only that). Every binary message starts with its channel: 0 stdin,
// 1 stdout, 2 stderr, 3 the error channel (a Status once the command has
// ended), 4 resize (JSON {"Width":w,"Height":h}), and in v5 255 closes the
// channel named by the next byte (stdin). Everything runs on the client's
// strand; one reader coroutine per command fills the output buffers.
#include "codec/parse_json.hpp"
#include "transport/client_impl.hpp"

#include <kube/streams/remote_command.hpp>
#include <kube/typed/api.hpp>

#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/json.hpp>

#include <array>
#include <charconv>
#include <cstring>
#include <functional>
#include <optional>
#include <variant>

namespace kube::detail {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;

namespace {
constexpr std::string_view v5 = "v5.channel.k8s.io";
constexpr std::string_view v4 = "v4.channel.k8s.io";
constexpr unsigned char stdin_channel = 0;
constexpr unsigned char error_channel = 3;
constexpr unsigned char resize_channel = 4;
constexpr unsigned char close_channel = 255;
constexpr std::size_t max_buffered = 1 << 20;  // past this the connection is not read until the program reads
constexpr std::size_t max_message = 32 * 1024;
}  // namespace

using ws_plain = websocket::stream<beast::tcp_stream>;
using ws_tls = websocket::stream<connection::tls_stream>;

struct remote_state {
  std::shared_ptr<client_impl> impl;
  request req;
  std::variant<std::monostate, std::unique_ptr<ws_plain>, std::unique_ptr<ws_tls>> ws;
  std::string protocol;
  bool with_stdin = false;
  bool stdin_closed = false;
  struct output {
    std::string data;
    std::size_t pos = 0;
    [[nodiscard]] std::size_t available() const { return data.size() - pos; }
  };
  std::array<output, 3> out;  // [1] stdout, [2] stderr
  std::string status;         // the error channel's bytes
  bool ended = false;         // no more messages will come
  error_code failure;         // the connection broke (not a close)
  diagnostics failure_diag;
  bool writing = false;
  asio::steady_timer signal;  // never expires; cancelled when anything above changes

  explicit remote_state(const asio::any_io_executor& strand)
      : signal(strand, asio::steady_timer::time_point::max()) {}

  void notify() { signal.cancel(); }

  template <class F>
  auto visit(F&& f) {
    if (auto* p = std::get_if<std::unique_ptr<ws_plain>>(&ws)) return f(**p);
    return f(*std::get<std::unique_ptr<ws_tls>>(ws));
  }

  [[nodiscard]] std::size_t buffered() const { return out[1].available() + out[2].available(); }

  void close() {
    if (std::holds_alternative<std::monostate>(ws)) return;
    visit([](auto& w) {
      error_code ignored;
      beast::get_lowest_layer(w).socket().close(ignored);
    });
    ended = true;
    notify();
  }

  // Reads messages until the connection ends, filling the outputs.
  asio::awaitable<void> read_loop() {
    beast::flat_buffer b;
    for (;;) {
      co_await wait_until(signal, [this] { return ended || buffered() < max_buffered; });
      if (ended) co_return;
      b.clear();
      auto ec = co_await visit([&](auto& w) -> asio::awaitable<error_code> {
        auto [rec, n] = co_await w.async_read(b, use_tuple);
        (void)n;
        co_return rec;
      });
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
      const auto* p = static_cast<const unsigned char*>(b.data().data());
      const std::size_t n = b.data().size();
      if (n == 0) continue;
      const std::string_view payload(reinterpret_cast<const char*>(p + 1), n - 1);
      if (p[0] == 1 || p[0] == 2) {
        auto& o = out[p[0]];
        if (o.pos > 0 && o.pos * 2 >= o.data.size()) {
          o.data.erase(0, o.pos);
          o.pos = 0;
        }
        o.data.append(payload);
      } else if (p[0] == error_channel) {
        if (status.size() + payload.size() <= max_buffered) status.append(payload);
      }
      notify();
    }
  }

  // Sends one message on `channel`, after any write in flight.
  asio::awaitable<error_code> send(unsigned char channel, std::string_view bytes) {
    co_await wait_until(signal, [this] { return ended || !writing; });
    if (ended) co_return failure ? failure : error_code(asio::error::broken_pipe);
    writing = true;
    std::string msg;
    msg.reserve(bytes.size() + 1);
    msg.push_back(static_cast<char>(channel));
    msg.append(bytes);
    auto ec = co_await visit([&](auto& w) -> asio::awaitable<error_code> {
      w.binary(true);
      auto [wec, n] = co_await w.async_write(asio::buffer(msg), use_tuple);
      (void)n;
      co_return wec;
    });
    writing = false;
    notify();
    co_return ec;
  }
};

namespace {

// The exit code in a NonZeroExitCode Status (details.causes, reason
// ExitCode), or nullopt.
std::optional<int> exit_code_of(const boost::json::object& st) {
  const auto* details = st.if_contains("details");
  const auto* causes = details && details->is_object() ? details->as_object().if_contains("causes") : nullptr;
  if (!causes || !causes->is_array()) return std::nullopt;
  for (const auto& c : causes->as_array()) {
    if (!c.is_object()) continue;
    const auto* reason = c.as_object().if_contains("reason");
    const auto* message = c.as_object().if_contains("message");
    if (!reason || !message || !reason->is_string() || !message->is_string() || reason->as_string() != "ExitCode") {
      continue;
    }
    int code = 0;
    const std::string_view m = message->as_string();
    if (std::from_chars(m.data(), m.data() + m.size(), code).ec == std::errc{}) return code;
  }
  return std::nullopt;
}

}  // namespace

remote_exit remote_exit_of(std::string_view status, const request& req, error_code& ec, diagnostics& diag) {
  boost::system::error_code pec;
  auto v = parse_json(status, pec);
  if (pec || !v.is_object()) {
    ec = client_errc::protocol_error;
    diag.set_client_message(req.describe() + ": the error channel did not carry a Status");
    return {};
  }
  const auto& st = v.as_object();
  const auto* phase = st.if_contains("status");
  if (phase && phase->is_string() && phase->as_string() == "Success") return {};
  const auto* reason = st.if_contains("reason");
  if (reason && reason->is_string() && reason->as_string() == "NonZeroExitCode") {
    if (auto code = exit_code_of(st)) return {*code};
  }
  // The kubelet writes the Status without its kind: read it here rather
  // than through status_error, which wants a kind.
  const auto* code = st.if_contains("code");
  const int http = code && code->is_int64() ? static_cast<int>(code->as_int64()) : 500;
  const std::string why = reason && reason->is_string() ? std::string(reason->as_string()) : std::string();
  ec = api_errc_from_status(why, http);
  diag.set_client_message(req.describe() + ": the command failed");
  diag.set_server_status(st);
  return {};
}

namespace {

// How the command ended, once the stream has: the Status on the error
// channel, else the connection's failure, else success (a v4 server need
// not send a Status for a command that exited 0).
result<remote_exit> ending(const remote_state& s) {
  result<remote_exit> r;
  if (!s.status.empty()) {
    r.value = remote_exit_of(s.status, s.req, r.ec, r.diag);
  } else if (s.failure) {
    r.ec = s.failure;
    r.diag = s.failure_diag;
  }
  return r;
}

// Completes `h` at once with `ec` (an operation on a default-constructed
// remote_process, which has no strand).
template <class T>
void fail_now(completion<T> h, const char* what) {
  auto ex = asio::get_associated_executor(h);
  ex.execute([h = std::move(h), what]() mutable {
    diagnostics d;
    d.set_client_message(what);
    std::move(h)(error_code(client_errc::protocol_error), std::move(d), T{});
  });
}

// Runs `body` on the command's strand as an operation with completion
// void(error_code).
void run_void(const std::shared_ptr<remote_state>& s, remote_done h,
              std::function<asio::awaitable<error_code>(remote_state&)> body) {
  if (!s) {
    auto ex = asio::get_associated_executor(h);
    ex.execute([h = std::move(h)]() mutable { std::move(h)(error_code(client_errc::protocol_error)); });
    return;
  }
  spawn_operation(
      s->impl->strand,
      [s, body = std::move(body)]() -> asio::awaitable<void> {
        if (auto ec = co_await body(*s)) throw boost::system::system_error(ec);
      },
      std::move(h), finish_with_error_code{});
}

}  // namespace

void typed_remote_command(typed_ptr t, std::string name, std::vector<std::string> command, remote_command_params p,
                          std::shared_ptr<remote_process> out, typed_completion h) {
  const auto& impl = client_access::impl(t->c);
  const std::string ns = t->namespace_name;
  const bool exec = !command.empty();
  request req;  // a GET with the upgrade headers (the WebSocket handshake)
  req.group(t->group).version(t->version).resource(t->plural).namespace_(ns).name(name);
  req.subresource(exec ? "exec" : "attach");
  for (auto& c : command) req.param("command", std::move(c));
  if (!p.container.empty()) req.param("container", p.container);
  req.param("stdin", p.with_stdin ? "true" : "false");
  req.param("stdout", p.with_stdout ? "true" : "false");
  req.param("stderr", p.with_stderr && !p.tty ? "true" : "false");
  req.param("tty", p.tty ? "true" : "false");
  const bool bad = name.empty() || ns.empty();
  const bool no_stream = !p.with_stdin && !p.with_stdout && !(p.with_stderr && !p.tty);
  spawn_operation(
      impl->strand,
      [impl, req = std::move(req), out = std::move(out), bad, no_stream,
       with_stdin = p.with_stdin]() mutable -> asio::awaitable<result<typed_done>> {
        result<typed_done> r;
        if (bad || no_stream) {
          r.ec = client_errc::invalid_config;
          r.diag.set_client_message(req.describe() + (bad ? ": needs a pod name and an api bound to a namespace"
                                                          : ": needs at least one of stdin, stdout and stderr"));
          co_return r;
        }
        if ((r.ec = co_await impl->throttle())) co_return r;
        auto conn = co_await impl->connect(r.ec, r.diag);
        if (!conn) co_return r;
        auto m = impl->to_http(req);
        if ((r.ec = co_await impl->add_headers(m, r.diag))) co_return r;
        auto st = std::make_shared<remote_state>(impl->strand);
        st->impl = impl;
        st->req = req;
        st->with_stdin = with_stdin;
        if (auto* plain = std::get_if<std::unique_ptr<beast::tcp_stream>>(&conn->stream)) {
          st->ws = std::make_unique<ws_plain>(std::move(**plain));
        } else {
          st->ws =
              std::make_unique<ws_tls>(std::move(*std::get<std::unique_ptr<connection::tls_stream>>(conn->stream)));
        }
        const std::string host(m[http::field::host]);
        const std::string target(m.target());
        websocket::response_type res;
        const auto timeout = impl->settings.read_timeout;
        auto ec = co_await st->visit([&](auto& w) -> asio::awaitable<error_code> {
          beast::get_lowest_layer(w).expires_never();  // the WebSocket's own timeouts from here
          websocket::stream_base::timeout opt{};
          opt.handshake_timeout = timeout.count() > 0 ? timeout : websocket::stream_base::none();
          opt.idle_timeout = websocket::stream_base::none();  // a command may be silent for as long as it likes
          opt.keep_alive_pings = false;
          w.set_option(opt);
          // The client's headers (credentials, impersonation, user agent)
          // on the upgrade request, which Beast writes itself.
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
          w.set_option(websocket::stream_base::decorator([headers](websocket::request_type& up) {
            for (const auto& field : headers) up.erase(field.first);                 // Beast's own User-Agent
            for (const auto& field : headers) up.insert(field.first, field.second);  // repeated: impersonated groups
            up.set(http::field::sec_websocket_protocol, std::string(v5) + ", " + std::string(v4));
          }));
          w.read_message_max(64 * 1024 * 1024);
          auto [hec] = co_await w.async_handshake(res, host, target, use_tuple);
          co_return hec;
        });
        if (ec) {
          st->close();
          if (ec == websocket::error::upgrade_declined && res.result_int() >= 300) {
            r.ec = status_error(res.result_int(), res.body(), req, r.diag);  // the server's Status
          } else {
            r.ec = ec == beast::error::timeout ? error_code(client_errc::timeout) : ec;
            r.diag.set_client_message(req.describe() + ": the WebSocket handshake failed: " + ec.message());
          }
          co_return r;
        }
        st->protocol = std::string(res[http::field::sec_websocket_protocol]);
        if (st->protocol != v5 && st->protocol != v4) {
          st->close();
          r.ec = client_errc::protocol_error;
          r.diag.set_client_message(req.describe() + ": the server chose the subprotocol \"" + st->protocol +
                                    "\" (this client speaks " + std::string(v5) + " and " + std::string(v4) + ")");
          co_return r;
        }
        asio::co_spawn(
            impl->strand, [st]() { return st->read_loop(); }, asio::detached);
        // The reader loop owns the state; the program's copies share a
        // handle whose last copy closes the connection when it goes.
        *out = remote_process(std::shared_ptr<remote_state>(
            st.get(), [st](remote_state*) { asio::dispatch(st->impl->strand, [st] { st->close(); }); }));
        co_return r;
      },
      std::move(h), finish_result{});
}

void remote_read_some(const std::shared_ptr<remote_state>& s, int channel, asio::mutable_buffer b, remote_io h) {
  if (!s || channel < 1 || channel > 2) {
    fail_now(std::move(h), "async_read_some on an empty remote_process");
    return;
  }
  spawn_operation(
      s->impl->strand,
      [s, channel, b]() -> asio::awaitable<result<std::size_t>> {
        auto& o = s->out[static_cast<std::size_t>(channel)];
        result<std::size_t> r;
        if (b.size() == 0) co_return r;
        co_await wait_until(s->signal, [&] { return o.available() > 0 || s->ended; });
        if (o.available() == 0) {
          r.ec = s->failure && s->status.empty() ? s->failure : error_code(asio::error::eof);
          r.diag = s->failure_diag;
          co_return r;
        }
        const std::size_t n = std::min(b.size(), o.available());
        std::memcpy(b.data(), o.data.data() + o.pos, n);
        o.pos += n;
        r.value = n;
        s->notify();  // room again for the reader loop
        co_return r;
      },
      std::move(h), finish_result{});
}

void remote_write_some(const std::shared_ptr<remote_state>& s, asio::const_buffer b, remote_io h) {
  if (!s) {
    fail_now(std::move(h), "async_write_some on an empty remote_process");
    return;
  }
  spawn_operation(
      s->impl->strand,
      [s, b]() -> asio::awaitable<result<std::size_t>> {
        result<std::size_t> r;
        if (!s->with_stdin || s->stdin_closed) {
          r.ec = asio::error::broken_pipe;
          r.diag.set_client_message(s->req.describe() +
                                    (s->with_stdin ? ": stdin is closed" : ": stdin was not requested (with_stdin)"));
          co_return r;
        }
        const std::size_t n = std::min(b.size(), max_message);
        if (n == 0) co_return r;
        r.ec = co_await s->send(stdin_channel, std::string_view(static_cast<const char*>(b.data()), n));
        if (!r.ec) r.value = n;
        co_return r;
      },
      std::move(h), finish_result{});
}

void remote_close_stdin(const std::shared_ptr<remote_state>& s, remote_done h) {
  run_void(s, std::move(h), [](remote_state& st) -> asio::awaitable<error_code> {
    if (!st.with_stdin || st.stdin_closed) co_return error_code{};
    if (st.protocol != v5) co_return error_code(asio::error::operation_not_supported);
    st.stdin_closed = true;
    const char which = static_cast<char>(stdin_channel);
    co_return co_await st.send(close_channel, std::string_view(&which, 1));
  });
}

void remote_resize(const std::shared_ptr<remote_state>& s, std::uint16_t width, std::uint16_t height, remote_done h) {
  run_void(s, std::move(h), [width, height](remote_state& st) -> asio::awaitable<error_code> {
    const std::string size = R"({"Width":)" + std::to_string(width) + R"(,"Height":)" + std::to_string(height) + "}";
    co_return co_await st.send(resize_channel, size);
  });
}

void remote_wait(const std::shared_ptr<remote_state>& s, completion<remote_exit> h) {
  if (!s) {
    fail_now(std::move(h), "async_wait on an empty remote_process");
    return;
  }
  spawn_operation(
      s->impl->strand,
      [s]() -> asio::awaitable<result<remote_exit>> {
        co_await wait_until(s->signal, [&] { return s->ended; });
        co_return ending(*s);
      },
      std::move(h), finish_result{});
}

void remote_close(const std::shared_ptr<remote_state>& s) {
  if (!s) return;
  asio::dispatch(s->impl->strand, [s] { s->close(); });
}

asio::any_io_executor remote_executor(const std::shared_ptr<remote_state>& s) {
  return s ? s->impl->strand : asio::any_io_executor();
}

std::string remote_protocol(const std::shared_ptr<remote_state>& s) { return s ? s->protocol : std::string(); }

}  // namespace kube::detail

// pods/exec and pods/attach over WebSocket, as kubectl speaks them: the
// subprotocol v5.channel.k8s.io (v4.channel.k8s.io when the server offers
// only that), channel_layout::remote_command. The connection and its
// reader are in channel_socket.cpp; the reads and writes of the program's
// streams here serve port_forward.cpp's forwarded_stream as well.
#include "codec/parse_json.hpp"
#include "streams/channel_socket.hpp"
#include "tools/complete_now.hpp"

#include <kube/async.hpp>
#include <kube/streams/remote_command.hpp>
#include <kube/streams/pod_streams.hpp>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/system_executor.hpp>
#include <boost/json.hpp>

#include <charconv>
#include <cstring>
#include <functional>
#include <optional>

namespace kube::detail {
namespace asio = boost::asio;

namespace {
constexpr unsigned char stdin_channel = 0;
constexpr unsigned char resize_channel = 4;
constexpr unsigned char close_channel = 255;
constexpr std::size_t max_message = 32 * 1024;
}  // namespace

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

// Runs `body` on the command's strand as an operation with completion
// void(error_code).
void run_void(const std::shared_ptr<remote_state>& s, remote_done h,
              std::function<asio::awaitable<error_code>(remote_state&)> body) {
  if (!s) {
    complete_now(asio::system_executor(), std::move(h), make_error_code(client_errc::protocol_error));
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

void start_pod_command(client c, std::string ns, std::string name, std::vector<std::string> command,
                       remote_command_params p, completion<remote_process> h) {
  const auto& impl = client_access::impl(c);
  const bool exec = !command.empty();
  request req;  // a GET with the upgrade headers (the WebSocket handshake)
  req.version("v1").resource("pods").namespace_(ns).name(name);
  req.subresource(exec ? "exec" : "attach");
  for (auto& arg : command) req.param("command", std::move(arg));
  if (!p.container.empty()) req.param("container", p.container);
  req.param("stdin", p.with_stdin ? "true" : "false");
  req.param("stdout", p.with_stdout ? "true" : "false");
  req.param("stderr", p.with_stderr && !p.tty ? "true" : "false");
  req.param("tty", p.tty ? "true" : "false");
  const bool bad = name.empty() || ns.empty();
  const bool no_stream = !p.with_stdin && !p.with_stdout && !(p.with_stderr && !p.tty);
  spawn_operation(
      impl->strand,
      [impl, req = std::move(req), bad, no_stream,
       with_stdin = p.with_stdin]() mutable -> asio::awaitable<result<remote_process>> {
        result<remote_process> r;
        if (bad || no_stream) {
          r.ec = client_errc::invalid_config;
          r.diag.set_client_message(req.describe() + (bad ? ": needs a pod name and an api bound to a namespace"
                                                          : ": needs at least one of stdin, stdout and stderr"));
          co_return r;
        }
        std::vector<std::string_view> protocols{channel_v5,
                                                channel_v4};  // g++ 12: not a braced list inside the co_await
        auto st =
            co_await open_channel_socket(impl, req, channel_layout::remote_command, std::move(protocols), r.ec, r.diag);
        if (!st) co_return r;
        st->with_stdin = with_stdin;
        r.value = remote_process(program_handle(st));
        co_return r;
      },
      std::move(h), finish_result{});
}

void remote_read_some(const std::shared_ptr<remote_state>& s, int channel, asio::mutable_buffer b, remote_io h) {
  if (!s || channel < 0 || channel > 2) {
    complete_empty(std::move(h), "async_read_some on an empty stream");
    return;
  }
  spawn_operation(
      s->impl->strand,
      [s, channel, b]() -> asio::awaitable<result<std::size_t>> {
        auto& o = s->out[static_cast<std::size_t>(channel)];
        result<std::size_t> r;
        if (b.size() == 0) co_return r;
        co_await wait_until(s->signal, [&] { return o.available() > 0 || s->ended; });
        if (o.available() == 0) co_return s->end_of_output();
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
    complete_empty(std::move(h), "async_write_some on an empty stream");
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
        if (!r.ec) {
          r.value = n;
        } else {
          // Say what the other side said last, if anything: a command that
          // has ended (its Status), a port the kubelet could not reach.
          constexpr std::size_t max_quoted = 1024;
          r.diag.set_client_message(
              s->req.describe() + ": the write failed" + (s->ended ? " (the stream has ended)" : "") +
              (s->status.empty() ? std::string() : "; the error channel said: " + s->status.substr(0, max_quoted)));
        }
        co_return r;
      },
      std::move(h), finish_result{});
}

void remote_close_stdin(const std::shared_ptr<remote_state>& s, remote_done h) {
  run_void(s, std::move(h), [](remote_state& st) -> asio::awaitable<error_code> {
    if (!st.with_stdin || st.stdin_closed) co_return error_code{};
    if (st.protocol != channel_v5) co_return error_code(asio::error::operation_not_supported);
    st.stdin_closed = true;
    // A command that has ended (its Status is in, or the server is closing
    // the connection after it) has no stdin left to close: that is done,
    // not an error; async_wait says how it ended.
    if (st.ended || !st.status.empty()) co_return error_code{};
    const char which = static_cast<char>(stdin_channel);
    const auto ec = co_await st.send(close_channel, std::string_view(&which, 1));
    if (ec == asio::error::broken_pipe || ec == asio::error::connection_reset || ec == asio::error::eof) {
      co_return error_code{};
    }
    co_return ec;
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
    complete_empty(std::move(h), "async_wait on an empty remote_process");
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

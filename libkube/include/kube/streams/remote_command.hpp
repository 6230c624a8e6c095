#pragma once

// A command running in a container: what kube::async_exec and
// async_attach yield. The guide is docs/guides/streams.md.

#include <kube/detail/buffers.hpp>
#include <kube/detail/initiate.hpp>
#include <kube/transport/request.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kube {

/// Options of `pods/exec` and `pods/attach`. The streams are named
/// with_stdin/... because stdin, stdout and stderr are macros in C.
struct remote_command_params {
  std::string container = {};  ///< required when the pod has several containers
  bool with_stdin = false;     ///< open the process's standard input (remote_process::in())
  bool with_stdout = true;     ///< read its standard output (remote_process::out())
  bool with_stderr = true;     ///< read its standard error (remote_process::err()); never with tty
  bool tty = false;            ///< a terminal: output comes on stdout only, resize works
};

/// How a remote command ended, from the Status the server sends on the
/// error channel.
struct remote_exit {
  int code = 0;  ///< 0 on success, the exit code for NonZeroExitCode
};

namespace detail {
struct remote_state;
using remote_io = completion<std::size_t>;
using remote_done = boost::asio::any_completion_handler<void(error_code)>;
void remote_read_some(const std::shared_ptr<remote_state>& s, int channel, boost::asio::mutable_buffer b, remote_io h);
void remote_write_some(const std::shared_ptr<remote_state>& s, boost::asio::const_buffer b, remote_io h);
void remote_close_stdin(const std::shared_ptr<remote_state>& s, remote_done h);
void remote_resize(const std::shared_ptr<remote_state>& s, std::uint16_t width, std::uint16_t height, remote_done h);
void remote_wait(const std::shared_ptr<remote_state>& s, completion<remote_exit> h);
void remote_close(const std::shared_ptr<remote_state>& s);
[[nodiscard]] boost::asio::any_io_executor remote_executor(const std::shared_ptr<remote_state>& s);
[[nodiscard]] std::string remote_protocol(const std::shared_ptr<remote_state>& s);
/// How a command of `req` ended, from the Status text of its error channel
/// (not empty): Success is code 0, NonZeroExitCode its code; anything else
/// sets `ec` and `diag` (the Status) as a refused request would.
[[nodiscard]] remote_exit remote_exit_of(std::string_view status, const request& req, error_code& ec,
                                         diagnostics& diag);

}  // namespace detail

/// A command running in a container, over one WebSocket connection to the
/// apiserver (subprotocol `v5.channel.k8s.io`, or `v4.channel.k8s.io` when
/// the server offers only that), as kubectl exec/attach speak it.
///
///   const std::vector<std::string> cmd{"sh", "-c", "echo hi"};  // g++ 12: not inside the co_await
///   auto p = co_await kube::async_exec(pods, "web-0", cmd);
///   std::string out;
///   auto [ec, n] = co_await asio::async_read(p.out(), asio::dynamic_buffer(out),
///                                            asio::as_tuple(asio::use_awaitable));  // eof at the end
///   auto exit = co_await p.async_wait();                                           // exit.code
///
/// out() and err() are AsyncReadStreams: async_read_some completes with the
/// bytes that arrived (what is not read stays buffered; past 1 MiB the
/// connection is not read until the program catches up) and with
/// asio::error::eof once the command has ended and everything was read.
/// in() is an AsyncWriteStream (the command's standard input, with
/// remote_command_params::with_stdin); async_close_stdin() ends it (needs
/// v5; with v4 it completes with operation_not_supported). async_resize()
/// sets a tty's size. async_wait() completes when the command has ended,
/// with its exit code: 0 on success, the code of a NonZeroExitCode Status;
/// any other Status (the command could not run, the container is gone) is
/// the error, with the server's Status in the diagnostics. A connection that
/// breaks before the Status arrives completes reads and async_wait with its
/// error.
///
/// Thread safety: copies share one command; one read per stream and one
/// write at a time; work runs on the client's strand. close() may be called
/// from any thread: it drops the connection, pending operations complete
/// (reads with eof after what was buffered). The connection is also closed
/// when the last copy of the remote_process and of its streams goes.
class remote_process {
public:
  remote_process() = default;
  explicit remote_process(std::shared_ptr<detail::remote_state> s)
      : state_(std::move(s)),
        out_(state_, 1),
        err_(state_, 2),
        in_(state_) {}

  /// One of the command's output streams (out(), err()).
  class reader {
  public:
    using executor_type = boost::asio::any_io_executor;
    reader(std::shared_ptr<detail::remote_state> s, int channel)
        : state_(std::move(s)),
          channel_(channel) {}
    [[nodiscard]] executor_type get_executor() const { return detail::remote_executor(state_); }

    /// Completion: void(error_code, std::size_t).
    template <class MutableBuffers, class Token = use_awaitable_t>
    auto async_read_some(const MutableBuffers& buffers, Token&& token = {}) {
      return detail::initiate<std::size_t>(
          [s = state_, c = channel_, b = detail::first_mutable(buffers)](detail::remote_io h) mutable {
            detail::remote_read_some(s, c, b, std::move(h));
          },
          std::forward<Token>(token));
    }

  private:
    std::shared_ptr<detail::remote_state> state_;
    int channel_;
  };

  /// The command's standard input (in()).
  class writer {
  public:
    using executor_type = boost::asio::any_io_executor;
    explicit writer(std::shared_ptr<detail::remote_state> s)
        : state_(std::move(s)) {}
    [[nodiscard]] executor_type get_executor() const { return detail::remote_executor(state_); }

    /// Completion: void(error_code, std::size_t).
    template <class ConstBuffers, class Token = use_awaitable_t>
    auto async_write_some(const ConstBuffers& buffers, Token&& token = {}) {
      return detail::initiate<std::size_t>(
          [s = state_, b = detail::first_const(buffers)](detail::remote_io h) mutable {
            detail::remote_write_some(s, b, std::move(h));
          },
          std::forward<Token>(token));
    }

  private:
    std::shared_ptr<detail::remote_state> state_;
  };

  /// The streams, as objects the Asio algorithms take by reference
  /// (`asio::async_read(p.out(), ...)`); copies of them work as well.
  [[nodiscard]] reader& out() noexcept { return out_; }
  [[nodiscard]] reader& err() noexcept { return err_; }
  [[nodiscard]] writer& in() noexcept { return in_; }

  /// Completion: void(error_code).
  template <class Token = use_awaitable_t>
  auto async_close_stdin(Token&& token = {}) {
    return detail::initiate_void(
        [s = state_](auto h) mutable { detail::remote_close_stdin(s, detail::remote_done(std::move(h))); },
        std::forward<Token>(token));
  }

  /// Completion: void(error_code).
  template <class Token = use_awaitable_t>
  auto async_resize(std::uint16_t width, std::uint16_t height, Token&& token = {}) {
    return detail::initiate_void(
        [s = state_, width, height](auto h) mutable {
          detail::remote_resize(s, width, height, detail::remote_done(std::move(h)));
        },
        std::forward<Token>(token));
  }

  /// Completion: void(error_code, remote_exit).
  template <class Token = use_awaitable_t>
  auto async_wait(Token&& token = {}) {
    return detail::initiate<remote_exit>(
        [s = state_](detail::completion<remote_exit> h) mutable { detail::remote_wait(s, std::move(h)); },
        std::forward<Token>(token));
  }

  /// The subprotocol the server chose ("v5.channel.k8s.io" or "v4.channel.k8s.io").
  [[nodiscard]] std::string protocol() const { return detail::remote_protocol(state_); }

  void close() { detail::remote_close(state_); }

private:
  std::shared_ptr<detail::remote_state> state_;
  reader out_{nullptr, 1};
  reader err_{nullptr, 2};
  writer in_{nullptr};
};

}  // namespace kube

#pragma once

// Internal to libkube's sources: a response body read as it arrives.

#include "transport/client_impl.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kube::detail {

/// A streamed response (a watch's events, a pod's log) on a connection of
/// its own: the chunked-body parser, the read buffer, the idle watchdog and
/// how the stream ended. client_impl::open_stream opens it; the watch
/// (watch/watch_state.hpp) and the log stream read from it. Touched only on
/// the client's strand.
struct body_stream : std::enable_shared_from_this<body_stream> {
  std::shared_ptr<client_impl> impl;
  request req;
  std::unique_ptr<connection> conn;
  boost::beast::http::response_parser<boost::beast::http::buffer_body> parser;
  std::vector<char> buf = std::vector<char>(64 * 1024);
  std::atomic<bool> done{false};  // written on the strand; is_open() reads it anywhere
  error_code failure;             // reported once what arrived before it is consumed
  diagnostics failure_diag;
  std::chrono::milliseconds idle_timeout{0};  ///< see stream_params

  // The idle_timeout watchdog: one timer per stream that fires at most once
  // per idle_timeout, instead of a timer wait armed and cancelled around
  // every read (two timer operations and a timerfd update per event).
  std::optional<boost::asio::steady_timer> watchdog;
  std::chrono::steady_clock::time_point read_since{};  ///< when the read in flight started
  bool reading = false;                                ///< a read is in flight
  bool armed = false;                                  ///< the watchdog's wait is pending

  [[nodiscard]] const boost::asio::any_io_executor& strand() const { return impl->strand; }
  [[nodiscard]] std::string_view content_type() const;

  /// Reads the next piece of body into buf; n is how many bytes arrived.
  boost::asio::awaitable<error_code> read_some(std::size_t& n);

  /// The same read without a coroutine (the per-event path of every watch):
  /// begin_read(); then, unless parse_buffered() ends the read at once,
  /// async_read(handler), and in the handler end_read().
  void begin_read();
  /// Parses the bytes already in the connection's buffer, as Beast's
  /// http::async_read_some does before it reads, but without the post it
  /// then makes to complete (a scheduler trip, and an epoll_wait, for every
  /// chunk header and chunk of every event). True when that ends the read
  /// (`ec` says how); false when the parser needs bytes from the socket.
  bool parse_buffered(error_code& ec);
  /// Reads from the socket; completion void(error_code, std::size_t).
  template <class Token>
  auto async_read(Token&& token) {
    return conn->visit([&](auto& s) {
      return boost::beast::http::async_read_some(s, conn->buffer, parser, std::forward<Token>(token));
    });
  }
  /// After a read: n is how many body bytes arrived; returns the read's
  /// error as the caller should see it (the watchdog's timed_out, when it
  /// closed the stream under the read).
  error_code end_read(error_code ec, std::size_t& n);

  /// Waits until `at`, then closes the stream if a read has been in flight
  /// for idle_timeout, waits again if a younger one is, else stops (the
  /// next read arms it: a stream nobody reads keeps no work pending).
  void arm_watchdog(std::chrono::steady_clock::time_point at);

  /// A read ended because the connection closed (a FIN, TLS without
  /// close_notify, Beast's end_of_stream or partial_message): the body's end
  /// if the parser is done, else the body was cut short.
  static bool connection_closed(error_code ec);
  /// Ends the stream with `ec`; `why` (default: the idle timeout's or the
  /// code's message) follows the request's description in the message.
  void fail(error_code ec, std::string why = {});
  /// Closes the socket only: a read may still be pending on the
  /// connection's stream and buffer, so they live as long as this does.
  void close();
};

}  // namespace kube::detail

#pragma once

// The WebSocket channel protocol (`v5.channel.k8s.io`, `v4.channel.k8s.io`)
// that pods/exec, pods/attach and pods/portforward speak: every binary
// message starts with its channel's number. One remote_state is one
// connection; its reader coroutine sorts the messages into buffers that
// the program's streams read. The Beast WebSocket code is in
// channel_socket.cpp only (one instantiation, over a type-erased stream).

#include "transport/client_impl.hpp"

#include <kube/streams/remote_command.hpp>

#include <boost/asio/steady_timer.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kube::detail {

/// The subprotocols: exec and attach offer both, port-forward v4 only.
inline constexpr std::string_view channel_v5 = "v5.channel.k8s.io";
inline constexpr std::string_view channel_v4 = "v4.channel.k8s.io";

/// What the channels of a connection mean.
enum class channel_layout {
  /// exec and attach: 0 stdin, 1 stdout, 2 stderr, 3 the error channel (a
  /// Status once the command has ended), 4 resize; v5 also 255 (close).
  remote_command,
  /// portforward of one port: 0 the data (both ways), 1 the error text;
  /// each starts with the port number (2 bytes, little endian).
  port_forward,
};

struct channel_websocket;  // the Beast stream, in channel_socket.cpp

struct remote_state : std::enable_shared_from_this<remote_state> {
  std::shared_ptr<client_impl> impl;
  request req;
  channel_layout layout = channel_layout::remote_command;
  std::unique_ptr<channel_websocket> ws;
  std::string protocol;     // the subprotocol the server chose
  bool with_stdin = false;  // channel 0 may be written
  bool stdin_closed = false;
  struct output {
    std::string data;
    std::size_t pos = 0;
    [[nodiscard]] std::size_t available() const { return data.size() - pos; }
  };
  std::array<output, 3> out;                // remote_command: [1] stdout, [2] stderr; port_forward: [0]
  std::array<std::size_t, 2> prefix{2, 2};  // port_forward: port bytes still to drop on channels 0 and 1
  std::string status;                       // the error channel's bytes
  bool ended = false;                       // no more messages will come
  error_code failure;                       // the connection broke (not a close)
  diagnostics failure_diag;
  bool writing = false;
  bool write_timed_out = false;           // a write made no progress for read_timeout: the connection was closed
  std::uint64_t writes = 0;               // counts sends, so a late deadline knows its write has completed
  boost::asio::steady_timer signal;       // never expires; cancelled when anything above changes
  boost::asio::steady_timer write_timer;  // the deadline of the write in flight

  explicit remote_state(const boost::asio::any_io_executor& strand);
  ~remote_state();
  remote_state(const remote_state&) = delete;
  remote_state& operator=(const remote_state&) = delete;

  void notify() { signal.cancel(); }
  [[nodiscard]] std::size_t buffered() const { return out[0].available() + out[1].available() + out[2].available(); }

  /// Drops the connection; pending reads see the end after what was buffered.
  void close();
  /// Reads messages until the connection ends, filling the outputs.
  boost::asio::awaitable<void> read_loop();
  /// Sorts one message (its channel byte first) into the outputs or the
  /// error channel's text.
  void take(std::string_view message);
  /// What a read past the last byte of an output gives: eof; the error of
  /// a connection that broke before the command's Status came; for a
  /// forwarded port, connection_failed with the error text the kubelet
  /// sent when it could not reach the port.
  [[nodiscard]] result<std::size_t> end_of_output() const;
  /// Sends one message on `channel`, after any write in flight. Nothing is
  /// written once the connection has ended or the error channel has spoken;
  /// a write that makes no progress for the client's read_timeout closes
  /// the connection (client_errc::timeout). A failed write leaves the reads
  /// going: what the server sent before it closed is still read.
  boost::asio::awaitable<error_code> send(unsigned char channel, std::string_view bytes);
};

/// Opens the WebSocket for `req` (a GET of an upgradable subresource),
/// offering `protocols` in order of preference, and starts its reader.
/// Null on failure, with `ec` and `diag` set: the server's Status when it
/// refused the upgrade.
boost::asio::awaitable<std::shared_ptr<remote_state>> open_channel_socket(std::shared_ptr<client_impl> impl,
                                                                          request req, channel_layout layout,
                                                                          std::vector<std::string_view> protocols,
                                                                          error_code& ec, diagnostics& diag);

/// The handle the program holds: its last copy closes the connection (the
/// reader coroutine keeps the state itself alive until it ends).
std::shared_ptr<remote_state> program_handle(const std::shared_ptr<remote_state>& st);

}  // namespace kube::detail

// Fuzz target: the WebSocket channel messages of pods/exec, pods/attach
// and pods/portforward as the client sorts them (remote_state::take), and
// how an exec ends from its error channel's Status (remote_exit_of).
//
// Input: the first byte picks the channel layout (bit 0: port-forward);
// then messages, each one length byte and that many bytes (the channel
// byte first). After every message part of each output is read, as a
// program would. The checks:
//   - each output gives exactly the payloads of its channel, in order
//     (port-forward: without the 2 bytes of port number at the start of
//     each channel), whatever the reads in between;
//   - the error channel's text is the error channel's payloads;
//   - a read past the end is eof, or for a port-forward with error text
//     connection_failed naming it; an exec Status that is not Success or
//     NonZeroExitCode with a code is an error with a message.
#include "fuzz_support.hpp"
#include "streams/channel_socket.hpp"

#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

constexpr const char* target = "channel_messages_fuzz";

// Reads `n` bytes of output `o` as remote_read_some does.
void read(kube::detail::remote_state::output& o, std::size_t n, std::string& into) {
  n = std::min(n, o.available());
  into.append(o.data, o.pos, n);
  o.pos += n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using kube::detail::channel_layout;
  if (size == 0) return 0;
  boost::asio::io_context io;
  kube::detail::remote_state st(io.get_executor());
  st.req.version("v1").resource("pods").namespace_("ns").name("p").subresource("exec");
  st.layout = (data[0] & 1) != 0 ? channel_layout::port_forward : channel_layout::remote_command;
  const bool forward = st.layout == channel_layout::port_forward;

  std::array<std::string, 3> want, got;
  std::string want_status;
  std::array<std::size_t, 2> port_bytes{2, 2};
  std::size_t i = 1;
  while (i < size) {
    const std::size_t n = std::min<std::size_t>(data[i], size - i - 1);
    const std::string_view message(reinterpret_cast<const char*>(data + i + 1), n);
    i += 1 + n;
    st.take(message);
    if (!message.empty()) {
      const auto channel = static_cast<unsigned char>(message[0]);
      std::string_view payload = message.substr(1);
      if (!forward) {
        if (channel == 1 || channel == 2) want[channel].append(payload);
        if (channel == 3) want_status.append(payload);
      } else if (channel <= 1) {
        const std::size_t skip = std::min(port_bytes[channel], payload.size());
        port_bytes[channel] -= skip;
        payload.remove_prefix(skip);
        (channel == 0 ? want[0] : want_status).append(payload);
      }
    }
    for (std::size_t c = 0; c < 3; ++c) read(st.out[c], (st.out[c].available() + 1) / 2, got[c]);
  }
  for (std::size_t c = 0; c < 3; ++c) {
    read(st.out[c], st.out[c].available(), got[c]);
    fuzz::require(got[c] == want[c], target, "an output gives its channel's payloads in order");
  }
  fuzz::require(st.status == want_status, target, "the error channel's text is its payloads");

  st.ended = true;
  const auto end = st.end_of_output();
  if (forward && !want_status.empty()) {
    fuzz::require(end.ec == kube::client_errc::connection_failed, target, "a kubelet error ends a forwarded port");
    fuzz::require(end.diag.client_message().find(want_status) != std::string::npos, target,
                  "the kubelet's error is in the message");
  } else {
    fuzz::require(end.ec == boost::asio::error::eof, target, "an output ends with eof");
  }
  if (!forward && !want_status.empty()) {
    kube::error_code ec;
    kube::diagnostics diag;
    const auto exit = kube::detail::remote_exit_of(want_status, st.req, ec, diag);
    fuzz::require(!ec || !diag.client_message().empty(), target, "a failed command says so");
    fuzz::require(!ec || exit.code == 0, target, "a failed command has no exit code");
  }
  return 0;
}

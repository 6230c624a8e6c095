#pragma once

// Internal: the first non-empty buffer of a sequence, which is what the
// SDK's streams (logs, exec, port-forward) read into or write from per
// async_read_some / async_write_some, as Asio's own TLS stream does.

#include <boost/asio/buffer.hpp>

namespace kube::detail {

template <class Buffers>
boost::asio::mutable_buffer first_mutable(const Buffers& b) {
  for (auto it = boost::asio::buffer_sequence_begin(b); it != boost::asio::buffer_sequence_end(b); ++it) {
    if (boost::asio::mutable_buffer(*it).size() > 0) return *it;
  }
  return {};
}

template <class Buffers>
boost::asio::const_buffer first_const(const Buffers& b) {
  for (auto it = boost::asio::buffer_sequence_begin(b); it != boost::asio::buffer_sequence_end(b); ++it) {
    if (boost::asio::const_buffer(*it).size() > 0) return *it;
  }
  return {};
}

}  // namespace kube::detail

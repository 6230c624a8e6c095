#pragma once

// The strand the SDK runs its own state on, and users may run theirs on.

#include <boost/asio/any_io_executor.hpp>

namespace kube {

/// A strand over `ex`, type-erased (what the informers, the controller and
/// the client's connection pool run their state on). Over an io_context's own executor this is
/// a strand<io_context::executor_type>: 24 bytes, which any_io_executor keeps
/// inline. A strand<any_io_executor> (72 bytes) is kept on the heap instead,
/// and each copy with another property, such as the work guards Asio and
/// Beast take for every operation, then allocates a new one (some 40
/// allocations per watch event in the informer benchmark). Any other
/// executor gets a strand<any_io_executor>; both serialize the same way.
[[nodiscard]] boost::asio::any_io_executor make_strand_executor(const boost::asio::any_io_executor& ex);

}  // namespace kube

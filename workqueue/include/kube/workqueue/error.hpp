#pragma once

// Error codes of the workqueue ("kube.workqueue" category).
//
// The workqueue depends on Asio only, so it has its own small category rather
// than libkube's; the type is the same boost::system::error_code.

#include <boost/system/error_code.hpp>

#include <type_traits>

namespace kube::workqueue {

using error_code = boost::system::error_code;

enum class errc {
  shut_down = 1,  ///< async_get: the queue is shutting down and holds no more items
};

[[nodiscard]] const boost::system::error_category& workqueue_category() noexcept;

[[nodiscard]] inline error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), workqueue_category()}; }

}  // namespace kube::workqueue

// Boost's trait, specialised: kept out of the API reference.
/// @cond
template <>
struct boost::system::is_error_code_enum<kube::workqueue::errc> : std::true_type {};
/// @endcond

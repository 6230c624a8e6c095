#pragma once

// kube::use_awaitable: the default completion token of every kube
// operation. No Asio header is needed to name it.

namespace kube {

/// Completion token: like asio::use_awaitable (`co_await op(...)`), but a
/// failure is thrown as kube::error carrying the server's Status and the
/// client's message (kube/error.hpp). Asio's own use_awaitable, passed to a
/// kube operation, behaves the same way.
struct use_awaitable_t {};
inline constexpr use_awaitable_t use_awaitable{};

}  // namespace kube

#pragma once

// kube::with_diagnostics: keeps the server's Status with any completion token.

#include <kube/diagnostics.hpp>

#include <type_traits>
#include <utility>

namespace kube {

/// Completion token adapter: completes as `token` does, with the same
/// signature void(error_code, T), and first stores the operation's
/// diagnostics (the server's Status, the client's message) in `*diag`.
/// Works with callbacks, asio::as_tuple, asio::deferred and asio::use_future;
/// kube::use_awaitable and asio::use_awaitable need no adapter (both throw
/// kube::error, which carries them).
/// The diagnostics object must outlive the operation.
template <class Token>
struct with_diagnostics_t {
  diagnostics* diag;
  Token token;
};

/// `api.async_get("x", kube::with_diagnostics(diag, asio::as_tuple(asio::use_awaitable)))`
template <class Token>
[[nodiscard]] with_diagnostics_t<std::decay_t<Token>> with_diagnostics(diagnostics& diag, Token&& token) {
  return {&diag, std::forward<Token>(token)};
}

namespace detail {
template <class T>
struct is_with_diagnostics : std::false_type {};
template <class Token>
struct is_with_diagnostics<with_diagnostics_t<Token>> : std::true_type {};
}  // namespace detail

}  // namespace kube

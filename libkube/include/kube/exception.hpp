#pragma once

#include <kube/diagnostics.hpp>
#include <kube/error.hpp>

#include <boost/system/system_error.hpp>

#include <exception>
#include <string>

namespace kube {

/// The exception the SDK throws (with use_awaitable, and from synchronous
/// loaders such as kubeconfig). Carries the error code and the diagnostics;
/// what() joins the code's message with the client and server messages.
///
/// Thread safety: immutable after construction (the message is built
/// eagerly); what(), code() and diag() may be called concurrently.
class error : public boost::system::system_error {
public:
  error(error_code ec, diagnostics diag);
  error(error_code ec, std::string client_message);

  [[nodiscard]] const diagnostics& diag() const noexcept { return diag_; }
  [[nodiscard]] const char* what() const noexcept override { return what_.c_str(); }

private:
  diagnostics diag_;
  std::string what_;
};

/// The error code a caught exception stands for, as kube::async_spawn
/// completes with it: a system_error's code (kube::error is one;
/// operation_aborted after a cancellation), the first exception's of the
/// multiple_exceptions Asio's awaitable operators throw, else
/// errc::state_not_recoverable. Empty for a null pointer.
[[nodiscard]] error_code error_of(const std::exception_ptr& e);

/// One line for a log: what() of a std::exception (kube::error's sentence),
/// else "unknown exception". Empty for a null pointer.
[[nodiscard]] std::string exception_message(const std::exception_ptr& e);

}  // namespace kube

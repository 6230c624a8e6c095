#pragma once

#include <kube/diagnostics.hpp>
#include <kube/error.hpp>

#include <boost/system/system_error.hpp>

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

}  // namespace kube

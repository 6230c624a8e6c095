#pragma once

// Internal to kube::controller: the text of a caught exception, for logs and
// reconcile outcomes.

#include <exception>
#include <string>

namespace kube::controller::detail {

/// what() of a std::exception, else "unknown exception".
inline std::string exception_text(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace kube::controller::detail

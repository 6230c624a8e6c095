#pragma once

// kube::secret_string: a credential (token, password, private key) that cannot
// be printed by accident. Used by kube::kubeconfig and kube::client_config.

#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace kube {

/// Holds a credential. Streaming it (`os << s`) prints `<redacted>` (or
/// nothing when empty), and there is no implicit conversion to a string, so a
/// log line or error message cannot pick the value up without an explicit
/// `reveal()` at the one place that needs it (an Authorization header, a TLS
/// key load).
///
/// Thread safety: a plain value; distinct objects may be used concurrently.
class secret_string {
public:
  secret_string() = default;
  explicit secret_string(std::string v)
      : value_(std::move(v)) {}

  /// The credential itself. Call it only where the value is sent or loaded.
  [[nodiscard]] const std::string& reveal() const noexcept { return value_; }

  [[nodiscard]] bool empty() const noexcept { return value_.empty(); }
  [[nodiscard]] std::size_t size() const noexcept { return value_.size(); }
  void clear() noexcept { value_.clear(); }

  friend bool operator==(const secret_string&, const secret_string&) = default;

  /// Prints `<redacted>` for a set value and nothing for an empty one.
  friend std::ostream& operator<<(std::ostream& os, const secret_string& s) {
    return os << (s.empty() ? std::string_view{} : std::string_view{"<redacted>"});
  }

private:
  std::string value_;
};

}  // namespace kube

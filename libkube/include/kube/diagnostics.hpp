#pragma once

#include <boost/json/fwd.hpp>

#include <memory>
#include <string>

namespace kube {

/// What went wrong beyond the error code, kept in two parts (as Boost.MySQL
/// does): our message, and the server's Status object when there is one.
///
/// Messages never contain credentials: tokens, keys and passwords are not
/// formatted into them anywhere in the SDK.
///
/// Thread safety: a plain value; distinct objects may be used concurrently.
class diagnostics {
public:
  diagnostics() = default;

  /// The client's explanation (names the file, field or object at fault).
  [[nodiscard]] const std::string& client_message() const noexcept { return client_message_; }

  /// The server's metav1.Status, if the failure was an API answer; else
  /// null. Include <boost/json/object.hpp> to read it.
  [[nodiscard]] const boost::json::object* server_status() const noexcept { return server_status_.get(); }

  /// Status.message, or empty.
  [[nodiscard]] std::string server_message() const;

  void set_client_message(std::string m) { client_message_ = std::move(m); }
  void set_server_status(boost::json::object s);
  void clear() noexcept {
    client_message_.clear();
    server_status_.reset();
  }

private:
  std::string client_message_;
  // Shared: a diagnostics is copied along a failure's path, the Status in
  // it never changes. A pointer also keeps Boost.JSON's object out of this
  // header, which every operation's header includes.
  std::shared_ptr<const boost::json::object> server_status_;
};

}  // namespace kube

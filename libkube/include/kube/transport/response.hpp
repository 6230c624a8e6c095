#pragma once

#include <kube/diagnostics.hpp>

#include <string>
#include <vector>

namespace kube {

/// What the apiserver answered to a unary request.
///
/// On success (2xx) `body` holds the payload. When the request failed with a
/// Status, the operation's error_code says why (kube.api category) and
/// `diag` carries the server's Status; `status` and `body` are still set. An
/// error body that is not a Status (a proxy's page) is kept as a synthetic
/// Status whose message is its first 512 bytes.
///
/// Thread safety: a plain value; distinct objects may be used concurrently,
/// one object not.
struct response {
  unsigned status = 0;       ///< HTTP status code, 0 if none was received
  std::string content_type;  ///< Content-Type of the body
  /// "gzip" when the server compressed the body (the client asks for it
  /// unless client_config::disable_compression); `body` is decoded already.
  std::string content_encoding;
  std::vector<std::string> warnings;  ///< Warning headers (RFC 7234 299 "text"), text only
  std::string body;
  diagnostics diag;
};

}  // namespace kube

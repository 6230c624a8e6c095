#pragma once

// Error codes of the SDK.
//
// kube::error_code is boost::system::error_code. Two categories:
//   - "kube.client" (kube::client_errc): failures on our side — bad
//     configuration, TLS, connection, decoding, authentication plugins.
//   - "kube.api" (kube::api_errc): the server answered with a non-2xx Status;
//     mapped from Status.reason (and the HTTP code when reason is empty),
//     as client-go's apimachinery/pkg/api/errors does.
// The server's full Status and our own message travel beside the code in
// kube::diagnostics; kube::error (an exception) carries both.

#include <boost/system/error_code.hpp>

#include <string>
#include <string_view>
#include <type_traits>

namespace kube {

using error_code = boost::system::error_code;

/// Failures detected by the client itself. The diagnostics beside the code
/// name what was wrong (file, field, request, byte offset).
///
/// Thread safety: codes are plain values and both categories are immutable
/// singletons, usable from any thread.
enum class client_errc {
  invalid_config = 1,  ///< kubeconfig / in-cluster config is malformed or incomplete
  file_error,          ///< a referenced file (CA, cert, key, token) cannot be read
  tls_error,           ///< TLS setup or handshake failed (verification, bad key)
  connection_failed,   ///< TCP connect / proxy CONNECT failed
  protocol_error,      ///< the server's HTTP response could not be understood
  decode_error,        ///< a body or event did not decode into the expected type
  auth_failed,         ///< credentials could not be obtained (token file, exec plugin)
  exec_plugin_failed,  ///< an exec credential plugin failed or timed out
  timeout,             ///< the operation's deadline passed
  watch_stream_error,  ///< a watch stream carried a malformed event
  too_many_retries,    ///< retries exhausted (Retry-After answers)
  already_running,     ///< async_run on an object that is running (or, one-shot, has run)
  encode_error,        ///< a request body could not be sent as it is (nested deeper than codec::max_json_depth)
  response_too_large,  ///< a response body (or its gzip-decoded form) exceeded client_params::max_response_body
  not_running,         ///< waited on an object that stopped running (an informer's async_wait_for_resource_version)
};

/// Status reasons of the Kubernetes API (metav1.StatusReason), plus the HTTP
/// codes that have no reason of their own.
enum class api_errc {
  unknown = 1,               ///< non-2xx with no recognised reason or code
  bad_request,               ///< 400 BadRequest
  unauthorized,              ///< 401 Unauthorized
  forbidden,                 ///< 403 Forbidden
  not_found,                 ///< 404 NotFound
  method_not_allowed,        ///< 405 MethodNotAllowed
  not_acceptable,            ///< 406 NotAcceptable
  already_exists,            ///< 409 AlreadyExists
  conflict,                  ///< 409 Conflict
  gone,                      ///< 410 Gone
  expired,                   ///< 410 Expired (resourceVersion too old)
  request_entity_too_large,  ///< 413 RequestEntityTooLarge
  unsupported_media_type,    ///< 415 UnsupportedMediaType
  invalid,                   ///< 422 Invalid
  too_many_requests,         ///< 429 TooManyRequests
  internal_error,            ///< 500 InternalError
  service_unavailable,       ///< 503 ServiceUnavailable
  server_timeout,            ///< 500/504 ServerTimeout (server could not complete in time)
  timeout,                   ///< 504 Timeout (request timed out)
};

[[nodiscard]] const boost::system::error_category& client_category() noexcept;
[[nodiscard]] const boost::system::error_category& api_category() noexcept;

[[nodiscard]] inline error_code make_error_code(client_errc e) noexcept {
  return {static_cast<int>(e), client_category()};
}
[[nodiscard]] inline error_code make_error_code(api_errc e) noexcept { return {static_cast<int>(e), api_category()}; }

/// Maps a Status (reason, HTTP code) to an api_errc the way client-go's
/// errors.ReasonForError does: the reason wins; an empty or unknown reason
/// falls back to the code.
[[nodiscard]] api_errc api_errc_from_status(std::string_view reason, int http_code) noexcept;

class diagnostics;

/// One sentence for a person, as kube::error::what() gives it: the client's
/// message (naming the server, file or object and the likely cause), then
/// the server's Status message; the code's own message only when neither
/// says anything. For code that has a code and diagnostics and no
/// exception: a log line, a watch_failure. Holds no credentials.
[[nodiscard]] std::string error_message(const error_code& ec, const diagnostics& diag);

/// True for errors that mean "the resourceVersion you asked for is gone":
/// 410 Gone and Expired (a watch or list must restart from a fresh list).
[[nodiscard]] bool is_resource_expired(const error_code& ec) noexcept;

}  // namespace kube

// Boost's trait, specialised: kept out of the API reference.
/// @cond
template <>
struct boost::system::is_error_code_enum<kube::client_errc> : std::true_type {};
template <>
struct boost::system::is_error_code_enum<kube::api_errc> : std::true_type {};
/// @endcond

#pragma once

// Internal: where the Authorization header comes from.

#include <kube/detail/transport_params.hpp>
#include <kube/diagnostics.hpp>
#include <kube/error.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kube::detail {

class authenticator {
public:
  virtual ~authenticator() = default;
  /// The Authorization header value, or empty for none. Runs on the client's strand.
  virtual boost::asio::awaitable<error_code> authorization(std::string& out, diagnostics& diag) = 0;
  /// Called after a 401: the next authorization() fetches fresh credentials.
  /// Returns false when there is nothing to refresh (static credentials).
  virtual bool invalidate() { return false; }
};

/// "Basic " + base64(user ":" password): the API's basic auth and a proxy's
/// Proxy-Authorization share it.
std::string basic_authorization(std::string_view user, std::string_view password);

/// Picks the authenticator for the settings: bearer token, token file, basic
/// or exec plugin; none when no credentials are configured.
/// An exec plugin's runs are told to `metrics` (may be null).
std::unique_ptr<authenticator> make_authenticator(const transport_params& s, boost::asio::any_io_executor ex,
                                                  std::shared_ptr<metrics::client_metrics> metrics = nullptr);

/// Which credentials the settings send, for messages ("the token in
/// /path", "the client certificate /path"); never their value.
std::string describe_credentials(const transport_params& s);

/// Runs an exec credential plugin and parses its ExecCredential. Exposed for tests.
struct exec_credential {
  std::string token;
  std::string client_certificate_pem, client_key_pem;
  std::optional<std::chrono::system_clock::time_point> expiry;
};
/// How a run ended, for metrics: the exit code (-1 when it did not exit)
/// and client-go's call_status.
struct exec_run_report {
  int exit_code = -1;
  metrics::exec_plugin_status status = metrics::exec_plugin_status::client_internal_error;
};
boost::asio::awaitable<error_code> run_exec_plugin(const exec_params& e, const std::string& cluster_server,
                                                   exec_credential& out, diagnostics& diag,
                                                   exec_run_report* report = nullptr);

/// The plugin's environment: `inherited` (environ), where the exec config's
/// env entries replace variables of the same name, and KUBERNETES_EXEC_INFO
/// set to `info`. Exposed for tests.
std::vector<std::string> exec_plugin_environment(const exec_params& e, char** inherited, const std::string& info);

/// Parses an ExecCredential JSON document (names the field that is wrong).
error_code parse_exec_credential(std::string_view json, const std::string& expected_api_version, exec_credential& out,
                                 diagnostics& diag);

}  // namespace kube::detail

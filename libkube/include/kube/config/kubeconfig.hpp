#pragma once

// kube::kubeconfig — the kubeconfig document model (clientcmd's api.Config)
// and loading with kubectl's rules. See docs/guides/configuration.md.

#include <kube/config/secret_string.hpp>
#include <kube/diagnostics.hpp>
#include <kube/error.hpp>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kube {

/// Where load() looks for kubeconfig files. Every field has a default.
struct kubeconfig_load_params {
  /// `--kubeconfig`: when set, only this file is read and it must exist.
  std::string explicit_path = {};

  /// The files to merge, first wins. Unset: the `KUBECONFIG` environment
  /// variable (colon-separated, duplicates and empty entries dropped) or,
  /// when that is unset or empty, `$HOME/.kube/config`. Missing files in this
  /// list are skipped (they are reported in kubeconfig::missing_files).
  std::optional<std::vector<std::string>> precedence = std::nullopt;

  /// Resolve relative file references (certificate-authority,
  /// client-certificate, client-key, tokenFile, an exec command containing
  /// '/') against the directory of the file that defined them, as clientcmd's
  /// loader does. `kubectl config view` does not (it prints them as written).
  bool resolve_paths = true;
};

/// A kubeconfig: clusters, users (AuthInfo), contexts and current-context,
/// merged from one or more files with kubectl's rules:
///
/// - the first file that defines a cluster/user/context name wins the whole
///   entry (later files' fields for that name are ignored, not merged in);
/// - the first file with a non-empty current-context sets it; the same for
///   preferences.colors (first true) and each extension name;
/// - `*-data` fields are base64 in the file and decoded here;
/// - relative paths resolve against the defining file's directory
///   (kubeconfig_load_params::resolve_paths).
///
/// It is a plain value: copy it, edit it, hand it to client_config. Credential
/// fields are kube::secret_string and print as `<redacted>`.
///
/// Errors: loading throws kube::error with client_errc::file_error (a file
/// cannot be read) or client_errc::invalid_config (malformed YAML, a field of
/// the wrong type, bad base64, duplicate names in one file). The message names
/// the file, the field path (e.g. `users[name=dev].user.client-key-data`) and,
/// for YAML problems, the line and column; it never contains a field's value
/// for credential fields. The overloads taking error_code& and diagnostics&
/// report the same without throwing.
///
/// Thread safety: loading touches only the files named and the environment
/// (KUBECONFIG, HOME); the result is a plain value.
struct kubeconfig {
  struct exec_env_var {
    std::string name;
    std::string value;
    friend bool operator==(const exec_env_var&, const exec_env_var&) = default;
  };

  /// users[].user.exec: a client.authentication.k8s.io credential plugin.
  struct exec_config {
    std::string api_version;  ///< client.authentication.k8s.io/v1 or v1beta1
    std::string command;      ///< resolved like a path when it contains '/'
    std::vector<std::string> args;
    std::vector<exec_env_var> env;
    std::string install_hint;
    bool provide_cluster_info = false;
    /// Never, IfAvailable or Always. Empty in the file defaults to IfAvailable
    /// for v1beta1 (as clientcmd's defaulting does) and stays empty for v1,
    /// which client_config then rejects as kubectl does.
    std::string interactive_mode;
  };

  /// users[].user.auth-provider: kept so it round-trips and so client_config
  /// can say it is unsupported. Its config holds tokens, hence secret values.
  struct auth_provider_config {
    std::string name;
    std::map<std::string, secret_string> config;
  };

  struct cluster {
    std::string server;
    std::string tls_server_name;
    bool insecure_skip_tls_verify = false;
    std::string certificate_authority;       ///< a path (see resolve_paths)
    std::string certificate_authority_data;  ///< PEM bytes, decoded from base64
    std::string proxy_url;
    bool disable_compression = false;
    std::map<std::string, boost::json::value> extensions;
    std::string location_of_origin;  ///< the file this entry came from
  };

  struct auth_info {
    std::string client_certificate;       ///< a path
    std::string client_certificate_data;  ///< PEM bytes, decoded from base64
    std::string client_key;               ///< a path
    secret_string client_key_data;        ///< PEM bytes, decoded from base64
    secret_string token;
    std::string token_file;  ///< a path (`tokenFile`)
    std::string as;          ///< impersonated user
    std::string as_uid;
    std::vector<std::string> as_groups;
    std::map<std::string, std::vector<std::string>> as_user_extra;
    std::string username;
    secret_string password;
    std::optional<auth_provider_config> auth_provider;
    std::optional<exec_config> exec;
    std::map<std::string, boost::json::value> extensions;
    std::string location_of_origin;
  };

  struct context {
    std::string cluster;
    std::string user;
    std::string namespace_name;  ///< `namespace` in the file
    std::map<std::string, boost::json::value> extensions;
    std::string location_of_origin;
  };

  struct preferences {
    bool colors = false;
    std::map<std::string, boost::json::value> extensions;
  };

  preferences prefs;
  std::map<std::string, cluster> clusters;
  std::map<std::string, auth_info> users;
  std::map<std::string, context> contexts;
  std::string current_context;
  std::map<std::string, boost::json::value> extensions;

  /// The files that were read, in precedence order (for messages).
  std::vector<std::string> files;
  /// Files of the precedence list that did not exist and were skipped.
  std::vector<std::string> missing_files;

  /// Loads and merges with kubectl's rules (see kubeconfig_load_params).
  /// No file at all is not an error: the result is empty, `files` is empty.
  [[nodiscard]] static kubeconfig load(const kubeconfig_load_params& params = {});
  [[nodiscard]] static kubeconfig load(const kubeconfig_load_params& params, error_code& ec, diagnostics& diag);

  /// Reads one file (which must exist); paths are resolved when asked.
  [[nodiscard]] static kubeconfig load_file(const std::string& path, bool resolve_paths = true);

  /// Parses one document. `origin` names it in messages and is the base for
  /// relative paths (when resolve_paths; a relative origin is taken against
  /// the current directory).
  [[nodiscard]] static kubeconfig parse(std::string_view yaml, const std::string& origin, bool resolve_paths = false);

  /// The files load() would consider, without reading them: the explicit
  /// path, or KUBECONFIG's list, or $HOME/.kube/config.
  [[nodiscard]] static std::vector<std::string> default_precedence();

  /// Merges `other` below this one (this one's entries win), as a later file
  /// in KUBECONFIG would.
  void merge_from(const kubeconfig& other);

  /// The document in clientcmd v1's JSON shape, exactly as
  /// `kubectl config view --raw -o json` prints it (names sorted, `*-data`
  /// re-encoded as base64). It CONTAINS credentials: do not log it.
  [[nodiscard]] boost::json::object to_json() const;

  /// "a, b" — the files that were read, for messages.
  [[nodiscard]] std::string describe_files() const;
};

}  // namespace kube

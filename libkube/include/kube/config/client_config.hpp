#pragma once

// kube::client_config — the resolved settings a client needs to reach one
// API server: URL, TLS material, credentials, impersonation, proxy, default
// namespace, limiter defaults. Built from a kubeconfig (with kubectl-style
// overrides), from the in-cluster service account, or by the default chain.
// See docs/guides/configuration.md.

#include <kube/config/secret_string.hpp>
#include <kube/diagnostics.hpp>
#include <kube/error.hpp>
#include <kube/config/kubeconfig.hpp>

#include <boost/json/value.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kube {

/// kubectl's global flags that override the kubeconfig (`--context`,
/// `--namespace`, `--server`, `--user`, ...). Empty means "not given".
struct client_config_overrides {
  std::string context = {};                ///< --context: must exist
  std::string cluster = {};                ///< --cluster: must exist
  std::string user = {};                   ///< --user: must exist
  std::string namespace_name = {};         ///< --namespace / -n
  std::string server = {};                 ///< --server; clears tls-server-name unless that is given too
  std::string tls_server_name = {};        ///< --tls-server-name
  std::string certificate_authority = {};  ///< --certificate-authority (a path); replaces the cluster's CA settings
  bool insecure_skip_tls_verify = false;   ///< --insecure-skip-tls-verify; replaces the cluster's CA settings
  secret_string token = {};                ///< --token
  std::string impersonate = {};            ///< --as
  std::string impersonate_uid = {};        ///< --as-uid
  std::vector<std::string> impersonate_groups = {};  ///< --as-group (repeatable)
};

/// Where in_cluster() looks. Every field has a default; tests point
/// service_account_dir at a temporary directory.
struct in_cluster_params {
  /// Holds `token`, `ca.crt` and `namespace`.
  std::string service_account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  /// Unset: $KUBERNETES_SERVICE_HOST / $KUBERNETES_SERVICE_PORT.
  std::optional<std::string> service_host = std::nullopt;
  std::optional<std::string> service_port = std::nullopt;
  /// Unset: $POD_NAMESPACE (clientcmd's in-cluster namespace source), then
  /// the `namespace` file, then "default".
  std::optional<std::string> pod_namespace = std::nullopt;
};

/// What load_default() tries. Every field has a default.
struct load_default_params {
  kubeconfig_load_params kubeconfig = {};
  client_config_overrides overrides = {};
  in_cluster_params in_cluster = {};
};

/// Resolved client settings (client-go's rest.Config).
///
/// File-based TLS material (CA, client certificate and key) is read eagerly
/// when the config is built, so a missing or unreadable file is reported
/// here, naming the kubeconfig, the field and the path; the paths are kept
/// too (`*_file`) for messages and for a transport that reloads rotated
/// certificates. A token file is also read eagerly (clientcmd fails early
/// the same way) and its path kept in token_file: the transport re-reads it
/// (every minute and after a 401).
///
/// Credentials are secret_string: printing this struct's fields shows
/// `<redacted>`, and no error message contains them.
///
/// Errors: the builders throw kube::error with client_errc::invalid_config
/// (unknown context/cluster/user, missing server, conflicting or incomplete
/// credentials, not in a cluster) or client_errc::file_error (a referenced
/// file cannot be read). Overloads taking error_code& and diagnostics& do not
/// throw.
///
/// Thread safety: a plain value. The builders read files and the environment
/// and are safe to call concurrently as long as nobody modifies the
/// environment at the same time.
struct client_config {
  /// Impersonate-User / -Uid / -Group / -Extra-* headers; empty user = none.
  struct impersonation_config {
    std::string user;
    std::string uid;
    std::vector<std::string> groups;
    std::map<std::string, std::vector<std::string>> extra;
  };

  std::string server;  ///< scheme://host[:port][/prefix]; scheme defaulted like client-go

  // --- TLS ---
  std::string ca_pem;                     ///< CA bundle; empty: the system's default roots
  std::string ca_file;                    ///< where ca_pem was read from (empty for inline data)
  std::string client_cert_pem;            ///< client certificate chain (PEM)
  secret_string client_key_pem;           ///< its private key (PEM)
  std::string client_cert_file;           ///< source path of client_cert_pem, if any
  std::string client_key_file;            ///< source path of client_key_pem, if any
  bool insecure_skip_tls_verify = false;  ///< only when the kubeconfig or an override says so
  std::string tls_server_name;            ///< SNI and verified name instead of the URL's host

  // --- authentication (kubectl allows one of token / basic; exec may add) ---
  secret_string bearer_token;  ///< static token, or the token file's content when it was read
  std::string token_file;      ///< re-read by the transport; empty: no file
  std::string username;        ///< basic auth
  secret_string password;
  std::optional<kubeconfig::exec_config> exec;  ///< credential plugin (command path resolved)
  /// The cluster's `client.authentication.k8s.io/exec` extension, passed to
  /// the plugin as cluster.config when exec->provide_cluster_info.
  boost::json::value exec_cluster_config;

  impersonation_config impersonate;

  // --- connection ---
  std::string proxy_url;  ///< kubeconfig proxy-url; empty: HTTPS_PROXY/NO_PROXY apply
  /// Do not ask for gzip-compressed responses (kubeconfig
  /// `disable-compression`). By default unary requests send
  /// `Accept-Encoding: gzip`, as client-go's do; the apiserver compresses
  /// bodies above 128 KiB (lists), which saves bandwidth and costs CPU.
  bool disable_compression = false;

  std::string namespace_name = "default";  ///< default namespace for namespaced calls
  std::string user_agent = default_user_agent();
  double qps = 5;  ///< client-side limiter: requests per second
  int burst = 10;  ///< client-side limiter: bucket size (requests)

  // --- provenance (for messages; empty for in-cluster) ---
  std::string context_name;
  std::string cluster_name;
  std::string user_name;
  bool in_cluster_source = false;  ///< true when built by in_cluster()
  /// Non-fatal findings (e.g. the context names a user that does not exist,
  /// which kubectl treats as anonymous; an unreadable in-cluster ca.crt).
  std::vector<std::string> warnings;

  /// Resolves the current (or overridden) context as kubectl does.
  [[nodiscard]] static client_config from_kubeconfig(const kubeconfig& kc,
                                                     const client_config_overrides& overrides = {});
  [[nodiscard]] static client_config from_kubeconfig(const kubeconfig& kc, const client_config_overrides& overrides,
                                                     error_code& ec, diagnostics& diag);

  /// The pod's service account: token file, ca.crt, namespace, and
  /// https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT (IPv6 hosts
  /// bracketed).
  [[nodiscard]] static client_config in_cluster(const in_cluster_params& params = {});

  /// clientcmd's test: host and port set and the token file exists.
  [[nodiscard]] static bool in_cluster_possible(const in_cluster_params& params = {});

  /// The default chain: the kubeconfig (explicit path, KUBECONFIG, or
  /// ~/.kube/config); when it yields no usable context (no file, no
  /// current-context), the in-cluster config. Errors in a kubeconfig that
  /// exists are reported, not skipped. When neither works the error says what
  /// was tried.
  [[nodiscard]] static client_config load_default(const load_default_params& params = {});
  [[nodiscard]] static client_config load_default(const load_default_params& params, error_code& ec, diagnostics& diag);

  /// "kube-cpp/<sdk version> (linux) kubernetes/<api version>".
  [[nodiscard]] static std::string default_user_agent();
};

}  // namespace kube

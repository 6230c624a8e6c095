#pragma once

// Internal: what the transport needs, resolved from a client_config.

#include <kube/base/metrics.hpp>
#include <kube/logger.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kube::detail {

struct exec_params {
  std::string api_version;  // client.authentication.k8s.io/v1 or v1beta1
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  bool provide_cluster_info = false;
  std::string install_hint;
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};
};

struct transport_params {
  std::string server;  // https://host:port[/prefix]

  // TLS
  std::string ca_pem;   // empty: the system's default roots
  std::string ca_file;  // for messages: where ca_pem came from
  std::string client_cert_pem, client_key_pem;
  std::string client_cert_file, client_key_file;  // for messages
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;  // overrides SNI and the verified name

  // Authentication (at most one of token / token_file / basic / exec applies)
  std::string token;
  std::string token_file;
  std::chrono::seconds token_file_refresh{60};
  std::string username, password;
  bool has_exec = false;
  exec_params exec;

  // Impersonation
  std::string impersonate_user, impersonate_uid;
  std::vector<std::string> impersonate_groups;
  std::map<std::string, std::vector<std::string>> impersonate_extra;

  std::string proxy_url;             // explicit proxy-url; empty: HTTPS_PROXY/NO_PROXY
  bool disable_compression = false;  // do not send Accept-Encoding: gzip
  std::string user_agent = "kube-cpp";
  double qps = 5;  // requests per second; <= 0 disables the limiter
  int burst = 10;
  std::chrono::milliseconds timeout{0};  // per request; 0 = none
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(30)};
  std::chrono::milliseconds read_timeout{std::chrono::seconds(60)};  // per byte of a unary response; 0 = none
  std::chrono::seconds tcp_keepalive{30};                            // 0 = off
  std::size_t max_idle_connections = 32;
  std::size_t max_response_body = std::size_t{1} << 30;  // bytes after gzip decoding; 0 = none
  int max_retries = 10;                                  // Retry-After answers followed at most this often
  bool json_only = false;                                // never ask for protobuf (client_params::json_only)

  logger log;
  std::function<void(std::string_view)> on_warning;  // server Warning headers
  std::shared_ptr<kube::metrics::provider> metrics;  // client_params::metrics
};

}  // namespace kube::detail

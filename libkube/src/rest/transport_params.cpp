// What the transport needs, resolved from a client_config and the
// client_params (kube/detail/transport_params.hpp).
#include "rest/transport_params.hpp"

namespace kube::detail {

transport_params to_settings(const client_config& c, client_params o) {
  transport_params s;
  s.server = c.server;
  s.ca_pem = c.ca_pem;
  s.ca_file = c.ca_file;
  s.client_cert_pem = c.client_cert_pem;
  s.client_key_pem = c.client_key_pem.reveal();
  s.client_cert_file = c.client_cert_file;
  s.client_key_file = c.client_key_file;
  s.insecure_skip_tls_verify = c.insecure_skip_tls_verify;
  s.tls_server_name = c.tls_server_name;
  // A token file wins over its content read at load time: the transport re-reads it.
  if (c.token_file.empty()) s.token = c.bearer_token.reveal();
  s.token_file = c.token_file;
  s.token_file_refresh = o.token_file_refresh;
  s.username = c.username;
  s.password = c.password.reveal();
  if (c.exec) {
    s.has_exec = true;
    s.exec.api_version = c.exec->api_version;
    s.exec.command = c.exec->command;
    s.exec.args = c.exec->args;
    for (const auto& e : c.exec->env) s.exec.env.emplace_back(e.name, e.value);
    s.exec.provide_cluster_info = c.exec->provide_cluster_info;
    s.exec.install_hint = c.exec->install_hint;
    s.exec.timeout = o.exec_timeout;
  }
  s.impersonate_user = c.impersonate.user;
  s.impersonate_uid = c.impersonate.uid;
  s.impersonate_groups = c.impersonate.groups;
  s.impersonate_extra = c.impersonate.extra;
  s.proxy_url = c.proxy_url;
  s.disable_compression = c.disable_compression;
  s.user_agent = c.user_agent;
  s.qps = c.qps;
  s.burst = c.burst;
  s.timeout = o.timeout;
  s.connect_timeout = o.connect_timeout;
  s.read_timeout = o.read_timeout;
  s.tcp_keepalive = o.tcp_keepalive;
  s.max_idle_connections = o.max_idle_connections;
  s.max_response_body = o.max_response_body;
  s.max_retries = o.max_retries;
  s.json_only = o.json_only;
  s.log = std::move(o.log);
  s.on_warning = std::move(o.on_warning);
  s.metrics = std::move(o.metrics);
  return s;
}

}  // namespace kube::detail

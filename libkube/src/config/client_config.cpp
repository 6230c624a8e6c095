// Building a client_config: kubeconfig + overrides (clientcmd's
// DirectClientConfig), in-cluster (rest.InClusterConfig) and the default
// chain (DeferredLoadingClientConfig).

#include <kube/config/client_config.hpp>
#include <kube/detail/config_files.hpp>
#include <kube/exception.hpp>
#include <kube/version.hpp>

#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>

namespace kube {

using detail::throw_config_error;

std::string client_config::default_user_agent() {
  return "kube-cpp/" + std::string(sdk_version()) + " (linux) kubernetes/" + std::string(kubernetes_version());
}

namespace {

// The kind of failure the default chain may fall back from: the kubeconfig
// selects nothing (clientcmd's IsEmptyConfig).
struct empty_config : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string files_note(const kubeconfig& kc) {
  std::string s = "files: " + kc.describe_files();
  if (!kc.missing_files.empty()) {
    s += "; missing: ";
    for (std::size_t i = 0; i < kc.missing_files.size(); ++i) {
      s += (i ? ", " : "") + kc.missing_files[i];
    }
  }
  return s;
}

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// rest.DefaultServerURL: a host without a scheme gets https when any TLS
// setting is present, http otherwise.
std::string normalize_server(const std::string& server, bool tls, const std::string& where) {
  std::string url = server;
  if (url.find("://") == std::string::npos) {
    url = (tls ? "https://" : "http://") + url;
  }
  auto parsed = boost::urls::parse_uri(url);
  if (!parsed) {
    throw_config_error(client_errc::invalid_config, where + ": server \"" + server + "\" is not a valid URL");
  }
  if (parsed->scheme() != "https" && parsed->scheme() != "http") {
    throw_config_error(client_errc::invalid_config,
                       where + ": server \"" + server + "\": scheme must be https or http");
  }
  if (parsed->host().empty()) {
    throw_config_error(client_errc::invalid_config, where + ": server \"" + server + "\" has no host");
  }
  // client-go drops a query or fragment from the host URL.
  boost::urls::url u(*parsed);
  u.remove_query();
  u.remove_fragment();
  std::string out(u.buffer());
  while (out.size() > 1 && out.back() == '/' && u.encoded_path().size() <= 1) {
    out.pop_back();  // "https://h:6443/" and "https://h:6443" are the same server
  }
  return out;
}

void check_proxy_url(const std::string& proxy, const std::string& where) {
  // The URL may carry credentials, so it is never echoed.
  auto parsed = boost::urls::parse_uri(proxy);
  if (!parsed) {
    throw_config_error(client_errc::invalid_config, where + ": not a valid URL");
  }
  const auto scheme = parsed->scheme();
  if (scheme != "http" && scheme != "https" && scheme != "socks5") {
    throw_config_error(client_errc::invalid_config,
                       where + ": unsupported scheme \"" + std::string(scheme) + "\", must be http, https, or socks5");
  }
}

void check_exec(const kubeconfig::exec_config& ex, const std::string& where, bool has_auth_provider) {
  if (has_auth_provider) {
    throw_config_error(client_errc::invalid_config, where + ": auth-provider cannot be combined with exec");
  }
  if (ex.command.empty()) {
    throw_config_error(client_errc::invalid_config, where + ".exec.command: must be set to use an exec plugin");
  }
  if (ex.api_version.empty()) {
    throw_config_error(client_errc::invalid_config, where + ".exec.apiVersion: must be set to use an exec plugin");
  }
  for (std::size_t i = 0; i < ex.env.size(); ++i) {
    if (ex.env[i].name.empty()) {
      throw_config_error(client_errc::invalid_config, where + ".exec.env[" + std::to_string(i) + "].name: must be set");
    }
  }
  if (ex.interactive_mode.empty()) {
    throw_config_error(client_errc::invalid_config,
                       where + ".exec.interactiveMode: must be set (Never, IfAvailable or Always) for " +
                           ex.api_version);
  }
  if (ex.interactive_mode != "Never" && ex.interactive_mode != "IfAvailable" && ex.interactive_mode != "Always") {
    throw_config_error(client_errc::invalid_config,
                       where + ".exec.interactiveMode: invalid value \"" + ex.interactive_mode + "\"");
  }
}

client_config resolve(const kubeconfig& kc, const client_config_overrides& ov) {
  client_config cfg;

  // --- context (getContextName / getContext) ---
  const std::string context_name = !ov.context.empty() ? ov.context : kc.current_context;
  kubeconfig::context ctx;
  if (!context_name.empty()) {
    auto it = kc.contexts.find(context_name);
    if (it == kc.contexts.end()) {
      throw_config_error(client_errc::invalid_config,
                         "context \"" + context_name + "\" not found in kubeconfig (" + files_note(kc) + ")");
    }
    ctx = it->second;
  }
  const std::string ctx_where =
      ctx.location_of_origin.empty() ? std::string{} : ctx.location_of_origin + ": contexts[name=" + context_name + "]";

  // --- cluster ---
  const std::string cluster_name = !ov.cluster.empty() ? ov.cluster : ctx.cluster;
  kubeconfig::cluster cl;
  if (auto it = kc.clusters.find(cluster_name); it != kc.clusters.end()) {
    cl = it->second;
  } else if (!ov.cluster.empty()) {
    throw_config_error(client_errc::invalid_config,
                       "cluster \"" + cluster_name + "\" not found in kubeconfig (" + files_note(kc) + ")");
  } else if (ov.server.empty()) {
    // Nothing selects a server: clientcmd calls this an empty config, which
    // lets the default chain fall back to in-cluster.
    if (context_name.empty()) {
      throw empty_config("no context is selected: current-context is not set and no context was given (" +
                         files_note(kc) + ")");
    }
    throw empty_config(ctx_where + ".context.cluster: cluster \"" + cluster_name + "\" not found in kubeconfig (" +
                       files_note(kc) + ")");
  }
  const std::string cl_where = cl.location_of_origin.empty()
                                   ? std::string("overrides")
                                   : cl.location_of_origin + ": clusters[name=" + cluster_name + "].cluster";
  if (!ov.server.empty()) {
    cl.server = ov.server;
    cl.tls_server_name = ov.tls_server_name;  // --server alone clears tls-server-name
  } else if (!ov.tls_server_name.empty()) {
    cl.tls_server_name = ov.tls_server_name;
  }
  if (ov.insecure_skip_tls_verify || !ov.certificate_authority.empty()) {
    cl.insecure_skip_tls_verify = ov.insecure_skip_tls_verify;
    cl.certificate_authority = ov.certificate_authority;
    cl.certificate_authority_data.clear();
  }

  // --- user ---
  const std::string user_name = !ov.user.empty() ? ov.user : ctx.user;
  kubeconfig::auth_info user;
  if (auto it = kc.users.find(user_name); it != kc.users.end()) {
    user = it->second;
  } else if (!ov.user.empty()) {
    throw_config_error(client_errc::invalid_config,
                       "user \"" + user_name + "\" not found in kubeconfig (" + files_note(kc) + ")");
  } else if (!user_name.empty()) {
    cfg.warnings.push_back(ctx_where + ".context.user: user \"" + user_name +
                           "\" not found in kubeconfig; connecting without credentials, as kubectl does");
  }
  const std::string user_where = user.location_of_origin.empty()
                                     ? std::string("overrides")
                                     : user.location_of_origin + ": users[name=" + user_name + "].user";
  if (!ov.token.empty()) user.token = ov.token;
  if (!ov.impersonate.empty()) user.as = ov.impersonate;
  if (!ov.impersonate_uid.empty()) user.as_uid = ov.impersonate_uid;
  if (!ov.impersonate_groups.empty()) user.as_groups = ov.impersonate_groups;

  // --- validation (clientcmd's ConfirmUsable), first error wins ---
  if (cl.server.empty()) {
    throw_config_error(client_errc::invalid_config, cl_where + ".server: no server defined");
  }
  if (!cl.proxy_url.empty()) {
    check_proxy_url(cl.proxy_url, cl_where + ".proxy-url");
  }
  if (!cl.certificate_authority.empty() && !cl.certificate_authority_data.empty()) {
    throw_config_error(client_errc::invalid_config,
                       cl_where + ": certificate-authority and certificate-authority-data are both set");
  }
  if (cl.insecure_skip_tls_verify && (!cl.certificate_authority.empty() || !cl.certificate_authority_data.empty())) {
    // As client-go refuses it: a CA that is never checked is a configuration mistake.
    throw_config_error(client_errc::invalid_config,
                       cl_where + ": insecure-skip-tls-verify is set together with a certificate authority; "
                                  "a CA cannot be used with verification off (remove one of them)");
  }
  const bool has_cert = !user.client_certificate.empty() || !user.client_certificate_data.empty();
  if (has_cert) {
    if (!user.client_certificate.empty() && !user.client_certificate_data.empty()) {
      throw_config_error(client_errc::invalid_config,
                         user_where + ": client-certificate and client-certificate-data are both set");
    }
    if (!user.client_key.empty() && !user.client_key_data.empty()) {
      throw_config_error(client_errc::invalid_config, user_where + ": client-key and client-key-data are both set");
    }
    if (user.client_key.empty() && user.client_key_data.empty()) {
      throw_config_error(client_errc::invalid_config,
                         user_where + ": client-key or client-key-data must be set to use client-certificate");
    }
  }
  if (user.exec) {
    check_exec(*user.exec, user_where, user.auth_provider.has_value());
  } else if (user.auth_provider) {
    throw_config_error(client_errc::invalid_config,
                       user_where + ".auth-provider: auth provider \"" + user.auth_provider->name +
                           "\" is not supported (client-go removed its in-tree providers; use an exec plugin)");
  }
  if (!user.token.empty() && (!user.username.empty() || !user.password.empty())) {
    throw_config_error(client_errc::invalid_config,
                       user_where +
                           ": more than one authentication method found (token, basic auth); only one is allowed");
  }
  if ((!user.as_uid.empty() || !user.as_groups.empty() || !user.as_user_extra.empty()) && user.as.empty()) {
    throw_config_error(client_errc::invalid_config,
                       user_where + ": as-uid, as-groups or as-user-extra require as (the user to impersonate)");
  }

  // --- TLS material, read eagerly so errors name the field ---
  if (!cl.certificate_authority_data.empty()) {
    cfg.ca_pem = cl.certificate_authority_data;
  } else if (!cl.certificate_authority.empty()) {
    const std::string field = !ov.certificate_authority.empty() ? std::string("--certificate-authority")
                                                                : cl_where + ".certificate-authority";
    cfg.ca_pem = detail::read_config_file(cl.certificate_authority, field);
    cfg.ca_file = cl.certificate_authority;
  }
  cfg.insecure_skip_tls_verify = cl.insecure_skip_tls_verify;
  cfg.tls_server_name = cl.tls_server_name;
  if (has_cert) {
    if (!user.client_certificate_data.empty()) {
      cfg.client_cert_pem = user.client_certificate_data;
    } else {
      cfg.client_cert_pem = detail::read_config_file(user.client_certificate, user_where + ".client-certificate");
      cfg.client_cert_file = user.client_certificate;
    }
    if (!user.client_key_data.empty()) {
      cfg.client_key_pem = user.client_key_data;
    } else {
      cfg.client_key_pem = secret_string(detail::read_config_file(user.client_key, user_where + ".client-key"));
      cfg.client_key_file = user.client_key;
    }
  }

  // --- credentials ---
  if (!user.token.empty()) {
    cfg.bearer_token = user.token;
    cfg.token_file = user.token_file;  // kept for refresh, as client-go does
  } else if (!user.token_file.empty()) {
    cfg.bearer_token = secret_string(detail::read_config_file(user.token_file, user_where + ".tokenFile"));
    cfg.token_file = user.token_file;
  }
  if (!user.username.empty() || !user.password.empty()) {
    cfg.username = user.username;
    cfg.password = user.password;
  }
  if (user.exec) {
    cfg.exec = user.exec;
    if (auto it = cl.extensions.find("client.authentication.k8s.io/exec"); it != cl.extensions.end()) {
      cfg.exec_cluster_config = it->second;
    }
  }
  if (!user.as.empty()) {
    cfg.impersonate.user = user.as;
    cfg.impersonate.uid = user.as_uid;
    cfg.impersonate.groups = user.as_groups;
    cfg.impersonate.extra = user.as_user_extra;
  }

  const bool tls = !cfg.ca_pem.empty() || has_cert || cfg.insecure_skip_tls_verify;
  cfg.server = normalize_server(cl.server, tls, cl_where + ".server");
  cfg.proxy_url = cl.proxy_url;
  cfg.disable_compression = cl.disable_compression;
  cfg.namespace_name = !ov.namespace_name.empty()    ? ov.namespace_name
                       : !ctx.namespace_name.empty() ? ctx.namespace_name
                                                     : std::string("default");
  cfg.context_name = context_name;
  cfg.cluster_name = cluster_name;
  cfg.user_name = user_name;
  return cfg;
}

std::string service_file(const std::string& dir, const char* name) { return detail::join_path(dir, name); }

}  // namespace

client_config client_config::from_kubeconfig(const kubeconfig& kc, const client_config_overrides& overrides) {
  try {
    return resolve(kc, overrides);
  } catch (const empty_config& e) {
    throw_config_error(client_errc::invalid_config, e.what());
  }
}

client_config client_config::from_kubeconfig(const kubeconfig& kc, const client_config_overrides& overrides,
                                             error_code& ec, diagnostics& diag) {
  ec.clear();
  diag.clear();
  try {
    return from_kubeconfig(kc, overrides);
  } catch (const kube::error& e) {
    ec = e.code();
    diag = e.diag();
  }
  return {};
}

bool client_config::in_cluster_possible(const in_cluster_params& params) {
  const auto host = params.service_host ? params.service_host : detail::get_env("KUBERNETES_SERVICE_HOST");
  const auto port = params.service_port ? params.service_port : detail::get_env("KUBERNETES_SERVICE_PORT");
  return host && !host->empty() && port && !port->empty() &&
         detail::regular_file_exists(service_file(params.service_account_dir, "token"));
}

client_config client_config::in_cluster(const in_cluster_params& params) {
  const auto host = params.service_host ? params.service_host : detail::get_env("KUBERNETES_SERVICE_HOST");
  const auto port = params.service_port ? params.service_port : detail::get_env("KUBERNETES_SERVICE_PORT");
  if (!host || host->empty() || !port || port->empty()) {
    throw_config_error(client_errc::invalid_config,
                       "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set "
                       "(not running in a pod?)");
  }
  client_config cfg;
  cfg.in_cluster_source = true;
  const bool ipv6 = host->find(':') != std::string::npos;  // net.JoinHostPort brackets IPv6 literals
  cfg.server = "https://" + (ipv6 ? "[" + *host + "]" : *host) + ":" + *port;

  const std::string token_path = service_file(params.service_account_dir, "token");
  cfg.bearer_token = secret_string(detail::read_config_file(token_path, "in-cluster config: service account token"));
  cfg.token_file = token_path;

  // client-go logs an unreadable ca.crt and goes on with the system roots;
  // so do we (as a warning), verification stays on.
  const std::string ca_path = service_file(params.service_account_dir, "ca.crt");
  try {
    cfg.ca_pem = detail::read_config_file(ca_path, "in-cluster config: service account CA");
    cfg.ca_file = ca_path;
  } catch (const kube::error& e) {
    cfg.warnings.push_back(std::string(e.diag().client_message()) + "; using the system's trusted roots");
  }

  const auto pod_ns = params.pod_namespace ? params.pod_namespace : detail::get_env("POD_NAMESPACE");
  if (pod_ns && !pod_ns->empty()) {
    cfg.namespace_name = *pod_ns;
  } else if (auto ns = detail::read_config_file_if_exists(service_file(params.service_account_dir, "namespace"),
                                                          "in-cluster config: service account namespace")) {
    const std::string t = trim(*ns);
    if (!t.empty()) cfg.namespace_name = t;
  }
  return cfg;
}

client_config client_config::load_default(const load_default_params& params) {
  const kubeconfig kc = kubeconfig::load(params.kubeconfig);
  std::string kubeconfig_reason;
  try {
    return resolve(kc, params.overrides);
  } catch (const empty_config& e) {
    kubeconfig_reason = e.what();
  }
  if (!in_cluster_possible(params.in_cluster)) {
    std::string why;
    const auto host =
        params.in_cluster.service_host ? params.in_cluster.service_host : detail::get_env("KUBERNETES_SERVICE_HOST");
    if (!host || host->empty()) {
      why = "KUBERNETES_SERVICE_HOST is not set";
    } else {
      why = "KUBERNETES_SERVICE_PORT is not set or " + service_file(params.in_cluster.service_account_dir, "token") +
            " does not exist";
    }
    throw_config_error(client_errc::invalid_config,
                       "no configuration found: kubeconfig: " + kubeconfig_reason + "; in-cluster: " + why);
  }
  client_config cfg = in_cluster(params.in_cluster);
  // clientcmd's in-cluster config honours these overrides.
  const auto& ov = params.overrides;
  if (!ov.server.empty()) cfg.server = normalize_server(ov.server, true, "--server");
  if (!ov.token.empty()) {
    cfg.bearer_token = ov.token;
    cfg.token_file.clear();
  }
  if (!ov.certificate_authority.empty()) {
    cfg.ca_pem = detail::read_config_file(ov.certificate_authority, "--certificate-authority");
    cfg.ca_file = ov.certificate_authority;
  }
  if (!ov.namespace_name.empty()) cfg.namespace_name = ov.namespace_name;
  return cfg;
}

client_config client_config::load_default(const load_default_params& params, error_code& ec, diagnostics& diag) {
  ec.clear();
  diag.clear();
  try {
    return load_default(params);
  } catch (const kube::error& e) {
    ec = e.code();
    diag = e.diag();
  }
  return {};
}

}  // namespace kube

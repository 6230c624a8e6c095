// kube::client_config: context resolution, kubectl-style overrides,
// in-cluster config with a fake service-account directory, the default chain,
// and error messages that name file and field and carry no secret.

#include "temp_dir.hpp"

#include <kube/config/client_config.hpp>
#include <kube/exception.hpp>
#include <kube/rest/client.hpp>

#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include <unistd.h>

using kube::client_config;
using kube::client_config_overrides;
using kube::kubeconfig;

namespace {

constexpr const char* secret_token = "tok-SECRET-1f2e3d";
constexpr const char* secret_password = "pw-SECRET-9a8b7c";

kubeconfig load(const std::vector<std::string>& list) {
  kube::kubeconfig_load_params p;
  p.precedence = list;
  return kubeconfig::load(p);
}

std::string resolve_error(const kubeconfig& kc, const client_config_overrides& ov, kube::error_code expected) {
  try {
    (void)client_config::from_kubeconfig(kc, ov);
  } catch (const kube::error& e) {
    CHECK(e.code() == expected);
    const std::string msg = e.what();
    CHECK(msg.find(secret_token) == std::string::npos);
    CHECK(msg.find(secret_password) == std::string::npos);
    return e.diag().client_message();
  }
  FAIL("from_kubeconfig did not throw");
  return {};
}

const std::string two_contexts = std::string(R"(
clusters:
- name: dev
  cluster: {server: "https://dev.example:6443", tls-server-name: dev-internal, certificate-authority: ca.crt}
- name: prod
  cluster: {server: "https://prod.example:6443", insecure-skip-tls-verify: true, proxy-url: "http://proxy:3128"}
users:
- name: dev
  user: {token: )") + secret_token +
                                 R"(}
- name: prod
  user:
    tokenFile: token
    as: jane
    as-groups: [ops]
contexts:
- name: dev
  context: {cluster: dev, user: dev, namespace: team-a}
- name: prod
  context: {cluster: prod, user: prod}
current-context: dev
)";

}  // namespace

TEST_CASE("the current context selects cluster, user and namespace", "[client_config]") {
  kube_test::temp_dir t;
  t.write("ca.crt", "CA-PEM");
  const auto kc = load({t.write("config", two_contexts)});
  const auto cfg = client_config::from_kubeconfig(kc);
  CHECK(cfg.server == "https://dev.example:6443");
  CHECK(cfg.tls_server_name == "dev-internal");
  CHECK(cfg.ca_pem == "CA-PEM");  // read eagerly from the resolved path
  CHECK(cfg.ca_file == (t.path() / "ca.crt").string());
  CHECK(cfg.bearer_token.reveal() == secret_token);
  CHECK(cfg.token_file.empty());
  CHECK(cfg.namespace_name == "team-a");
  CHECK(cfg.context_name == "dev");
  CHECK(cfg.qps == 5);
  CHECK(cfg.burst == 10);
  CHECK(cfg.user_agent.rfind("kube-cpp/", 0) == 0);
}

TEST_CASE("overrides (context, namespace, server, user) win over the kubeconfig", "[client_config]") {
  kube_test::temp_dir t;
  t.write("ca.crt", "CA-PEM");
  t.write("token", "file-token\n");
  const auto kc = load({t.write("config", two_contexts)});

  client_config_overrides ov;
  ov.context = "prod";
  auto cfg = client_config::from_kubeconfig(kc, ov);
  CHECK(cfg.server == "https://prod.example:6443");
  CHECK(cfg.insecure_skip_tls_verify);
  CHECK(cfg.proxy_url == "http://proxy:3128");
  CHECK(cfg.namespace_name == "default");  // the context has none
  CHECK(cfg.token_file == (t.path() / "token").string());
  CHECK(cfg.bearer_token.reveal() == "file-token\n");  // read now; the transport re-reads the file
  CHECK(cfg.impersonate.user == "jane");
  CHECK(cfg.impersonate.groups == std::vector<std::string>{"ops"});

  ov = {};
  ov.namespace_name = "other";
  ov.server = "https://override:443";
  ov.user = "prod";
  cfg = client_config::from_kubeconfig(kc, ov);
  CHECK(cfg.namespace_name == "other");
  CHECK(cfg.server == "https://override:443");
  CHECK(cfg.tls_server_name.empty());  // --server alone clears tls-server-name
  CHECK(cfg.ca_pem == "CA-PEM");       // the CA stays
  CHECK(cfg.user_name == "prod");
  CHECK(cfg.impersonate.user == "jane");

  ov = {};
  ov.insecure_skip_tls_verify = true;
  cfg = client_config::from_kubeconfig(kc, ov);
  CHECK(cfg.insecure_skip_tls_verify);
  CHECK(cfg.ca_pem.empty());  // --insecure-skip-tls-verify replaces the CA settings
}

TEST_CASE("an unknown context names itself and the files", "[client_config]") {
  kube_test::temp_dir t;
  const auto a = t.write("a", "current-context: nope\n");
  const auto b = t.write("b", "clusters: []\n");
  const auto kc = load({a, b});
  CHECK(resolve_error(kc, {}, kube::client_errc::invalid_config) ==
        "context \"nope\" not found in kubeconfig (files: " + a + ", " + b + ")");
  client_config_overrides ov;
  ov.context = "prod";
  CHECK(resolve_error(kc, ov, kube::client_errc::invalid_config).find("context \"prod\" not found") !=
        std::string::npos);
  ov = {};
  ov.cluster = "ghost";  // an overridden cluster must exist, even with --server
  ov.server = "https://x";
  const auto kc2 = kubeconfig::parse("contexts: [{name: c, context: {cluster: c}}]\ncurrent-context: c\n", "inline");
  CHECK(resolve_error(kc2, ov, kube::client_errc::invalid_config).find("cluster \"ghost\" not found") !=
        std::string::npos);
}

TEST_CASE("a missing client certificate file names kubeconfig, field and path", "[client_config]") {
  kube_test::temp_dir t;
  const auto f = t.write("config", std::string(R"(
clusters: [{name: c, cluster: {server: "https://c"}}]
users: [{name: u, user: {client-certificate: certs/u.crt, client-key: certs/u.key}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
)"));
  const auto msg = resolve_error(load({f}), {}, kube::client_errc::file_error);
  CHECK(msg.find(f + ": users[name=u].user.client-certificate: " + (t.path() / "certs/u.crt").string() +
                 ": No such file or directory") != std::string::npos);

  t.write("certs/u.crt", "CERT");
  const auto key_msg = resolve_error(load({f}), {}, kube::client_errc::file_error);
  CHECK(key_msg.find("users[name=u].user.client-key: " + (t.path() / "certs/u.key").string()) != std::string::npos);

  t.write("certs/u.key", "KEY");
  const auto cfg = client_config::from_kubeconfig(load({f}));
  CHECK(cfg.client_cert_pem == "CERT");
  CHECK(cfg.client_key_pem.reveal() == "KEY");
  CHECK(cfg.server == "https://c");
}

TEST_CASE("invalid user settings are refused without echoing credentials", "[client_config]") {
  kube_test::temp_dir t;
  const auto f = t.write("config", std::string(R"(
clusters: [{name: c, cluster: {server: "https://c"}}]
users:
- {name: both, user: {token: )") + secret_token +
                                       ", username: admin, password: " + secret_password + R"(}}
- {name: nokey, user: {client-certificate-data: Q0VSVA==}}
- {name: exec-v1, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: plugin}}}
- {name: provider, user: {auth-provider: {name: oidc, config: {id-token: )" +
                                       secret_token + R"(}}}}
- {name: groups-only, user: {as-groups: [a]}}
contexts: [{name: c, context: {cluster: c, user: both}}]
current-context: c
)");
  const auto kc = load({f});
  client_config_overrides ov;
  CHECK(resolve_error(kc, ov, kube::client_errc::invalid_config)
            .find(f + ": users[name=both].user: more than one authentication method") != std::string::npos);
  ov.user = "nokey";
  CHECK(resolve_error(kc, ov, kube::client_errc::invalid_config).find("client-key or client-key-data must be set") !=
        std::string::npos);
  ov.user = "exec-v1";
  CHECK(resolve_error(kc, ov, kube::client_errc::invalid_config)
            .find("users[name=exec-v1].user.exec.interactiveMode: must be set") != std::string::npos);
  ov.user = "provider";
  CHECK(resolve_error(kc, ov, kube::client_errc::invalid_config).find("auth provider \"oidc\" is not supported") !=
        std::string::npos);
  ov.user = "groups-only";
  CHECK(resolve_error(kc, ov, kube::client_errc::invalid_config).find("require as") != std::string::npos);
}

TEST_CASE("a cluster without a server or with a bad proxy-url is refused", "[client_config]") {
  kube_test::temp_dir t;
  const auto f = t.write("config", R"(
clusters:
- {name: noserver, cluster: {tls-server-name: x}}
- {name: badproxy, cluster: {server: "https://c", proxy-url: "ftp://user:pw@proxy"}}
contexts:
- {name: a, context: {cluster: noserver}}
- {name: b, context: {cluster: badproxy}}
)");
  const auto kc = load({f});
  client_config_overrides ov;
  ov.context = "a";
  CHECK(resolve_error(kc, ov, kube::client_errc::invalid_config)
            .find(f + ": clusters[name=noserver].cluster.server: no server defined") != std::string::npos);
  ov.context = "b";
  const auto msg = resolve_error(kc, ov, kube::client_errc::invalid_config);
  CHECK(msg.find("clusters[name=badproxy].cluster.proxy-url: unsupported scheme \"ftp\"") != std::string::npos);
  CHECK(msg.find("user:pw") == std::string::npos);  // proxy credentials are not echoed
}

TEST_CASE("a certificate authority together with insecure-skip-tls-verify is refused", "[client_config]") {
  kube_test::temp_dir t;
  const auto f = t.write("config", R"(
clusters:
- {name: both, cluster: {server: "https://c", insecure-skip-tls-verify: true, certificate-authority-data: Q0E=}}
contexts:
- {name: a, context: {cluster: both}}
current-context: a
)");
  const auto kc = load({f});
  const auto msg = resolve_error(kc, {}, kube::client_errc::invalid_config);
  CHECK(msg.find(f + ": clusters[name=both].cluster: insecure-skip-tls-verify is set together with a certificate "
                     "authority") != std::string::npos);

  // --insecure-skip-tls-verify replaces the CA settings: accepted, as by kubectl.
  client_config_overrides ov;
  ov.insecure_skip_tls_verify = true;
  const auto cfg = client_config::from_kubeconfig(kc, ov);
  CHECK(cfg.insecure_skip_tls_verify);
  CHECK(cfg.ca_pem.empty());

  // A configuration built in code is refused by the client itself.
  auto built = cfg;
  built.ca_pem = "-----BEGIN CERTIFICATE-----";
  boost::asio::io_context io;
  try {
    kube::client c(io.get_executor(), built);
    FAIL("the client accepted a CA with insecure_skip_tls_verify");
  } catch (const kube::error& e) {
    CHECK(e.code() == kube::client_errc::invalid_config);
    CHECK(std::string(e.what()).find("insecure_skip_tls_verify is set together with a certificate authority") !=
          std::string::npos);
  }
}

TEST_CASE("exec users keep the plugin and the cluster's exec extension", "[client_config]") {
  const auto kc = kubeconfig::parse(R"(
clusters:
- name: c
  cluster:
    server: c.example:6443
    extensions:
    - {name: client.authentication.k8s.io/exec, extension: {audience: api}}
users:
- {name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/p, interactiveMode: Never, provideClusterInfo: true}}}
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
)",
                                    "inline");
  const auto cfg = client_config::from_kubeconfig(kc);
  REQUIRE(cfg.exec.has_value());
  CHECK(cfg.exec->command == "/bin/p");
  CHECK(cfg.exec->provide_cluster_info);
  CHECK(cfg.exec_cluster_config.at("audience") == "api");
  CHECK(cfg.server == "http://c.example:6443");  // no scheme and no TLS settings: http, as client-go
}

TEST_CASE("in-cluster config reads the service account directory", "[client_config][in_cluster]") {
  kube_test::temp_dir t;
  t.write("sa/token", secret_token);
  t.write("sa/ca.crt", "SA-CA");
  t.write("sa/namespace", "  apps\n");
  kube::in_cluster_params p;
  p.service_account_dir = (t.path() / "sa").string();
  p.service_host = "10.96.0.1";
  p.service_port = "443";
  p.pod_namespace = "";
  CHECK(client_config::in_cluster_possible(p));
  auto cfg = client_config::in_cluster(p);
  CHECK(cfg.server == "https://10.96.0.1:443");
  CHECK(cfg.bearer_token.reveal() == secret_token);
  CHECK(cfg.token_file == (t.path() / "sa/token").string());
  CHECK(cfg.ca_pem == "SA-CA");
  CHECK(cfg.namespace_name == "apps");
  CHECK(cfg.in_cluster_source);

  p.service_host = "fd00::1";
  p.pod_namespace = "from-env";
  cfg = client_config::in_cluster(p);
  CHECK(cfg.server == "https://[fd00::1]:443");
  CHECK(cfg.namespace_name == "from-env");

  std::filesystem::remove(t.path() / "sa/ca.crt");
  cfg = client_config::in_cluster(p);
  CHECK(cfg.ca_pem.empty());
  REQUIRE(cfg.warnings.size() == 1);
  CHECK(cfg.warnings[0].find("ca.crt") != std::string::npos);

  p.service_host = "";
  CHECK_FALSE(client_config::in_cluster_possible(p));
  CHECK_THROWS_WITH(client_config::in_cluster(p), Catch::Contains("KUBERNETES_SERVICE_HOST"));
}

TEST_CASE("the default chain uses the kubeconfig when it selects a context", "[client_config][default_chain]") {
  kube_test::temp_dir t;
  kube::load_default_params p;
  p.kubeconfig.precedence =
      std::vector<std::string>{t.write("config", "clusters: [{name: c, cluster: {server: \"https://kc\"}}]\n"
                                                 "contexts: [{name: c, context: {cluster: c}}]\ncurrent-context: c\n")};
  t.write("sa/token", "sa-token");
  p.in_cluster.service_account_dir = (t.path() / "sa").string();
  p.in_cluster.service_host = "10.0.0.1";
  p.in_cluster.service_port = "6443";
  CHECK(client_config::load_default(p).server == "https://kc");
}

TEST_CASE("the default chain falls back to in-cluster when no kubeconfig selects anything",
          "[client_config][default_chain]") {
  kube_test::temp_dir t;
  kube::load_default_params p;
  p.kubeconfig.precedence = std::vector<std::string>{(t.path() / "missing").string()};
  t.write("sa/token", "sa-token");
  p.in_cluster.service_account_dir = (t.path() / "sa").string();
  p.in_cluster.service_host = "10.0.0.1";
  p.in_cluster.service_port = "6443";
  p.in_cluster.pod_namespace = "";
  p.overrides.namespace_name = "ns-override";
  const auto cfg = client_config::load_default(p);
  CHECK(cfg.in_cluster_source);
  CHECK(cfg.server == "https://10.0.0.1:6443");
  CHECK(cfg.namespace_name == "ns-override");
}

TEST_CASE("the default chain reports what it tried when nothing works", "[client_config][default_chain]") {
  kube_test::temp_dir t;
  kube::load_default_params p;
  const auto missing = (t.path() / "missing").string();
  p.kubeconfig.precedence = std::vector<std::string>{missing};
  p.in_cluster.service_host = "";
  kube::error_code ec;
  kube::diagnostics diag;
  (void)client_config::load_default(p, ec, diag);
  CHECK(ec == kube::client_errc::invalid_config);
  const auto& msg = diag.client_message();
  CHECK(msg.find("no configuration found") != std::string::npos);
  CHECK(msg.find("missing: " + missing) != std::string::npos);
  CHECK(msg.find("in-cluster: KUBERNETES_SERVICE_HOST is not set") != std::string::npos);
}

TEST_CASE("the default chain does not hide errors of an existing kubeconfig", "[client_config][default_chain]") {
  kube_test::temp_dir t;
  kube::load_default_params p;
  p.kubeconfig.precedence = std::vector<std::string>{t.write("config", "current-context: gone\n")};
  t.write("sa/token", "sa-token");
  p.in_cluster.service_account_dir = (t.path() / "sa").string();
  p.in_cluster.service_host = "10.0.0.1";
  p.in_cluster.service_port = "6443";
  CHECK_THROWS_WITH(client_config::load_default(p), Catch::Contains("context \"gone\" not found"));
}

TEST_CASE("credential fields print redacted", "[client_config]") {
  client_config cfg;
  cfg.bearer_token = kube::secret_string(secret_token);
  cfg.password = kube::secret_string(secret_password);
  std::ostringstream os;
  os << cfg.bearer_token << ' ' << cfg.password << ' ' << cfg.client_key_pem;
  CHECK(os.str() == "<redacted> <redacted> ");
}

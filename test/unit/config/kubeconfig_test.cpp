// kube::kubeconfig: loading rules and the errors for bad kubeconfigs.

#include "temp_dir.hpp"

#include <kube/exception.hpp>
#include <kube/config/kubeconfig.hpp>

#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include <unistd.h>

using kube::kubeconfig;
using kube::kubeconfig_load_params;

namespace {

// Loads and returns the thrown error's message (fails the test when nothing is thrown).
std::string load_error(const kubeconfig_load_params& params, kube::error_code expected) {
  try {
    (void)kubeconfig::load(params);
  } catch (const kube::error& e) {
    CHECK(e.code() == expected);
    return e.what();
  }
  FAIL("kubeconfig::load did not throw");
  return {};
}

kubeconfig_load_params files(std::vector<std::string> list) {
  kubeconfig_load_params p;
  p.precedence = std::move(list);
  return p;
}

}  // namespace

TEST_CASE("malformed YAML is reported with the file, line and column", "[kubeconfig]") {
  kube_test::temp_dir t;
  const auto f = t.write("bad.yaml", "clusters:\n- name: a\n  cluster: {server: \"https://a\"\nusers: []\n");
  const std::string msg = load_error(files({f}), kube::client_errc::invalid_config);
  CHECK(msg.find(f + ": malformed YAML") != std::string::npos);
  CHECK(msg.find("(line 4, column") != std::string::npos);
}

TEST_CASE("bad base64 names the file and field path and not the value", "[kubeconfig]") {
  kube_test::temp_dir t;
  const auto f = t.write("config", "users:\n- name: dev\n  user:\n    client-key-data: c2VjcmV0LWtleQ\n");
  const std::string msg = load_error(files({f}), kube::client_errc::invalid_config);
  CHECK(msg.find(f + ": users[name=dev].user.client-key-data: invalid base64 at byte 12") != std::string::npos);
  CHECK(msg.find("line 4") != std::string::npos);
  CHECK(msg.find("c2VjcmV0LWtleQ") == std::string::npos);
}

TEST_CASE("a YAML 1.1 boolean in a string field is an error naming the field", "[kubeconfig]") {
  kube_test::temp_dir t;
  const auto f = t.write("config", "contexts:\n- name: c\n  context: {cluster: a, user: a, namespace: no}\n");
  const std::string msg = load_error(files({f}), kube::client_errc::invalid_config);
  CHECK(msg.find(f + ": contexts[name=c].context.namespace: expected a string, got a boolean") != std::string::npos);
}

TEST_CASE("a token given as a number is an error that does not echo it", "[kubeconfig]") {
  kube_test::temp_dir t;
  const auto f = t.write("config", "users:\n- name: u\n  user: {token: 987654321}\n");
  const std::string msg = load_error(files({f}), kube::client_errc::invalid_config);
  CHECK(msg.find("users[name=u].user.token: expected a string, got a number") != std::string::npos);
  CHECK(msg.find("987654321") == std::string::npos);
}

TEST_CASE("a name defined twice in one file is an error", "[kubeconfig]") {
  kube_test::temp_dir t;
  const auto f =
      t.write("config", "clusters:\n- name: x\n  cluster: {server: s1}\n- name: x\n  cluster: {server: s2}\n");
  const std::string msg = load_error(files({f}), kube::client_errc::invalid_config);
  CHECK(msg.find(f + ": clusters[name=x]: duplicate name \"x\"") != std::string::npos);
}

TEST_CASE("an unsupported apiVersion or kind is an error", "[kubeconfig]") {
  kube_test::temp_dir t;
  CHECK(load_error(files({t.write("a", "apiVersion: v2\n")}), kube::client_errc::invalid_config)
            .find("apiVersion: unsupported version \"v2\"") != std::string::npos);
  CHECK(load_error(files({t.write("b", "kind: Pod\n")}), kube::client_errc::invalid_config)
            .find("kind: unsupported kind \"Pod\"") != std::string::npos);
}

TEST_CASE("the first file to define a name wins the whole entry", "[kubeconfig]") {
  kube_test::temp_dir t;
  const auto a = t.write("a", "clusters:\n- name: c\n  cluster: {server: https://a}\n");
  const auto b =
      t.write("b", "current-context: from-b\nclusters:\n- name: c\n  cluster: {server: https://b, "
                   "insecure-skip-tls-verify: true, proxy-url: http://p}\n- name: d\n  cluster: {server: https://d}\n");
  const auto kc = kubeconfig::load(files({a, b}));
  REQUIRE(kc.clusters.size() == 2);
  CHECK(kc.clusters.at("c").server == "https://a");
  CHECK_FALSE(kc.clusters.at("c").insecure_skip_tls_verify);  // not merged in from b
  CHECK(kc.clusters.at("c").proxy_url.empty());
  CHECK(kc.clusters.at("c").location_of_origin == a);
  CHECK(kc.clusters.at("d").location_of_origin == b);
  CHECK(kc.current_context == "from-b");  // a had none
  CHECK(kc.files == std::vector<std::string>{a, b});
}

TEST_CASE("missing files in the list are skipped and reported - empty entries ignored", "[kubeconfig]") {
  kube_test::temp_dir t;
  const auto a = t.write("a", "current-context: x\n");
  const auto missing = (t.path() / "nope").string();
  const auto kc = kubeconfig::load(files({"", missing, a, ""}));
  CHECK(kc.current_context == "x");
  CHECK(kc.files == std::vector<std::string>{a});
  CHECK(kc.missing_files == std::vector<std::string>{missing});
}

TEST_CASE("KUBECONFIG is split on ':' with duplicates dropped - HOME is the fallback", "[kubeconfig]") {
  ::setenv("KUBECONFIG", "/x/a::/x/b:/x/a", 1);
  CHECK(kubeconfig::default_precedence() == std::vector<std::string>{"/x/a", "", "/x/b"});
  ::setenv("KUBECONFIG", "", 1);
  ::setenv("HOME", "/home/someone", 1);
  CHECK(kubeconfig::default_precedence() == std::vector<std::string>{"/home/someone/.kube/config"});
  ::unsetenv("KUBECONFIG");
}

TEST_CASE("an explicit path must exist and is the only file read", "[kubeconfig]") {
  kube_test::temp_dir t;
  kubeconfig_load_params p;
  p.explicit_path = (t.path() / "missing.yaml").string();
  p.precedence = std::vector<std::string>{t.write("other", "current-context: other\n")};
  const std::string msg = load_error(p, kube::client_errc::file_error);
  CHECK(msg.find(p.explicit_path + ": No such file or directory") != std::string::npos);

  p.explicit_path = t.write("explicit", "current-context: explicit\n");
  CHECK(kubeconfig::load(p).current_context == "explicit");
}

TEST_CASE("relative paths resolve against the defining file's directory", "[kubeconfig]") {
  kube_test::temp_dir t;
  const auto f =
      t.write("conf/sub/config",
              "clusters:\n- name: c\n  cluster: {server: https://c, certificate-authority: ../ca.crt}\n"
              "users:\n- name: u\n  user:\n    client-certificate: certs/u.crt\n    client-key: /abs/u.key\n"
              "    tokenFile: ./tok\n    exec: {apiVersion: client.authentication.k8s.io/v1, command: bin/plugin}\n"
              "- name: path-plugin\n  user:\n    exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}\n");
  const auto base = t.path().string();
  const auto kc = kubeconfig::load(files({f}));
  CHECK(kc.clusters.at("c").certificate_authority == base + "/conf/ca.crt");
  const auto& u = kc.users.at("u");
  CHECK(u.client_certificate == base + "/conf/sub/certs/u.crt");
  CHECK(u.client_key == "/abs/u.key");
  CHECK(u.token_file == base + "/conf/sub/tok");
  CHECK(u.exec->command == base + "/conf/sub/bin/plugin");
  CHECK(kc.users.at("path-plugin").exec->command == "aws");  // looked up in PATH, not resolved

  kubeconfig_load_params raw = files({f});
  raw.resolve_paths = false;
  CHECK(kubeconfig::load(raw).clusters.at("c").certificate_authority == "../ca.crt");
}

TEST_CASE("data fields are decoded and written back as base64", "[kubeconfig]") {
  const auto kc = kubeconfig::parse("clusters:\n- name: c\n  cluster:\n    server: https://c\n    "
                                    "certificate-authority-data: |\n      aGVs\n      bG8=\n"
                                    "users:\n- name: u\n  user: {client-key-data: a2V5, token: tok}\n",
                                    "inline");
  CHECK(kc.clusters.at("c").certificate_authority_data == "hello");
  CHECK(kc.users.at("u").client_key_data.reveal() == "key");
  const auto j = kc.to_json();
  CHECK(j.at("clusters").at(0).at("cluster").at("certificate-authority-data") == "aGVsbG8=");
  CHECK(j.at("users").at(0).at("user").at("client-key-data") == "a2V5");
}

TEST_CASE("exec v1beta1 defaults interactiveMode to IfAvailable, v1 does not", "[kubeconfig]") {
  const auto kc = kubeconfig::parse(
      "users:\n- name: b\n  user: {exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: x}}\n"
      "- name: v1\n  user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: x}}\n",
      "inline");
  CHECK(kc.users.at("b").exec->interactive_mode == "IfAvailable");
  CHECK(kc.users.at("v1").exec->interactive_mode.empty());
}

TEST_CASE("the non-throwing load reports the error code and message", "[kubeconfig]") {
  kube_test::temp_dir t;
  kube::error_code ec;
  kube::diagnostics diag;
  (void)kubeconfig::load(files({t.write("c", "clusters: {a: 1}\n")}), ec, diag);
  CHECK(ec == kube::client_errc::invalid_config);
  CHECK(diag.client_message().find("clusters: expected a list, got a map") != std::string::npos);
}

TEST_CASE("secret_string prints redacted", "[kubeconfig]") {
  std::ostringstream os;
  os << kube::secret_string("hunter2") << "|" << kube::secret_string();
  CHECK(os.str() == "<redacted>|");
}

TEST_CASE("a kubeconfig whose aliases expand without bound is refused before it is walked", "[kubeconfig][yaml]") {
  // "Billion laughs": six levels of ten aliases are a million strings in a
  // few hundred bytes, reached through an extension (which becomes JSON).
  std::string yaml = "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i <= 6; ++i) {
    const std::string prev = "*l" + std::to_string(i - 1);
    yaml += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) yaml += (j ? ", " : "") + prev;
    yaml += "]\n";
  }
  yaml += "preferences:\n  extensions:\n  - name: bomb\n    extension: {laughs: *l6}\n";
  kube_test::temp_dir t;
  const auto f = t.write("config", yaml);
  const std::string msg = load_error(files({f}), kube::client_errc::invalid_config);
  CHECK(msg.find(f + ": the YAML expands through aliases") != std::string::npos);
  CHECK(msg.find("alias bomb") != std::string::npos);
}

TEST_CASE("an extension holding .inf or .nan is refused by name, as client-go's JSON conversion refuses it",
          "[kubeconfig][yaml]") {
  // Found by fuzzing: the config was read, but printed as JSON it held
  // `Infinity`, which is not JSON, and did not read back.
  for (const std::string v : {".inf", "-.Inf", ".NaN"}) {
    kube_test::temp_dir t;
    const auto f =
        t.write("config", "preferences:\n  extensions:\n  - name: odd\n    extension: {list: [1, " + v + "]}\n");
    const std::string msg = load_error(files({f}), kube::client_errc::invalid_config);
    INFO(msg);
    CHECK(msg.find(f + ": ") != std::string::npos);
    CHECK(msg.find(".extension") != std::string::npos);
    CHECK(msg.find("holds .inf or .nan") != std::string::npos);
  }
}

TEST_CASE("a kubeconfig that shares a node through an alias still loads", "[kubeconfig][yaml]") {
  kube_test::temp_dir t;
  const auto f = t.write("config", "clusters:\n- name: a\n  cluster: &c {server: \"https://a.example:6443\"}\n"
                                   "- name: b\n  cluster: *c\n");
  const auto kc = kubeconfig::load(files({f}));
  REQUIRE(kc.clusters.count("b") == 1);
  CHECK(kc.clusters.at("b").server == "https://a.example:6443");
}

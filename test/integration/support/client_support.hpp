#pragma once

// Test support for kube::client integration tests: settings for each
// identity of the test cluster, a one-shot request runner, kubectl.

#include "cluster_env.hpp"

#include <kube/rest/client.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <random>
#include <string>

namespace kube_test {
namespace asio = boost::asio;
using kube::detail::transport_params;

// Every line the SDK logs during a test, to check that no secret leaks.
struct captured_log {
  std::mutex m;
  std::string text;
};
inline captured_log& log_capture() {
  static captured_log c;
  return c;
}
/// How much has been logged so far: a mark for logged_since.
inline std::size_t log_mark() {
  std::lock_guard lk(log_capture().m);
  return log_capture().text.size();
}
/// The lines logged since `mark` (at trace level, one per answer:
/// "<request>: HTTP <status>, <content type>, ...").
inline std::string logged_since(std::size_t mark) {
  std::lock_guard lk(log_capture().m);
  return log_capture().text.substr(std::min(mark, log_capture().text.size()));
}

inline transport_params base_settings() {
  auto env = kube_test::cluster_env();
  transport_params s;
  s.server = env.at("KUBE_TEST_SERVER");
  s.ca_pem = kube_test::read_file(env.at("KUBE_TEST_CA"));
  s.ca_file = env.at("KUBE_TEST_CA");
  s.qps = 0;  // these tests are not about throttling
  s.log.level = kube::log_level::trace;
  s.log.sink = [](kube::log_level, std::string_view line) {
    std::lock_guard lk(log_capture().m);
    log_capture().text.append(line).push_back('\n');
  };
  return s;
}

inline transport_params admin_cert_settings() {
  auto s = base_settings();
  auto env = kube_test::cluster_env();
  s.client_cert_pem = kube_test::read_file(env.at("KUBE_TEST_ADMIN_CERT"));
  s.client_key_pem = kube_test::read_file(env.at("KUBE_TEST_ADMIN_KEY"));
  return s;
}

inline transport_params token_settings(const std::string& who) {
  auto s = base_settings();
  s.token = kube_test::cluster_token(who);
  return s;
}

// Runs one request to completion on a fresh io_context (no exceptions).
inline std::pair<kube::error_code, kube::response> run(transport_params s, kube::request r) {
  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), std::move(s));
  kube::error_code ec;
  kube::response res;
  c.async_request(std::move(r), [&](kube::error_code e, kube::response x) {
    ec = e;
    res = std::move(x);
  });
  io.run();
  return {ec, std::move(res)};
}

inline std::string unique_name(const std::string& prefix) {
  static std::mt19937_64 rng{std::random_device{}()};
  return prefix + "-" + std::to_string(rng() % 1000000000);
}

inline kube::request get_version() { return kube::request{}.raw_path("/version"); }

inline void create_namespace(const std::string& ns) {
  auto [ec, res] = run(admin_cert_settings(),
                       kube::request{}
                           .method(kube::http_method::post)
                           .resource("namespaces")
                           .body(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + ns + R"("}})"));
  REQUIRE_FALSE(ec);
  REQUIRE(res.status == 201);
}

inline int sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()); }
// kubectl as the admin: the one built with the apiserver (same version).
inline std::string kubectl() {
  const auto& env = kube_test::cluster_env();
  return env.at("KUBE_TEST_KUBECTL") + " --kubeconfig " + env.at("KUBE_TEST_KUBECONFIG_ADMIN") + " ";
}
inline std::string event_name(const kube::watch_event& ev) {
  const auto* md = ev.object.if_contains("metadata");
  return md && md->is_object() && md->as_object().contains("name") ? std::string(md->at("name").as_string()) : "";
}

/// Runs `body(client)` (a coroutine) on a fresh io_context with an admin
/// client (certificate auth) to completion; rethrows what it throws.
template <class F>
void with_admin_client(F body) {
  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), admin_cert_settings());
  std::exception_ptr failure;
  bool done = false;
  asio::co_spawn(io, body(c), [&](std::exception_ptr e) {
    failure = e;
    done = true;
  });
  io.run();
  REQUIRE(done);
  if (failure) std::rethrow_exception(failure);
}

/// Runs a shell command and returns its standard output; REQUIREs exit 0.
inline std::string sh_out(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = ::pclose(p);
  INFO(cmd << "\n" << out);
  REQUIRE(rc == 0);
  return out;
}

}  // namespace kube_test

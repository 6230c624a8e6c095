// kube::client against the real test cluster: TLS and each authentication
// mode, errors with the server's Status, cancellation, completion tokens,
// and no credential in any log line or error text.
// Size: about 690 lines: one case per authentication mode and failure, all on
// the same cluster fixture.
#include "support/client_support.hpp"

#include <kube/rest/client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

namespace asio = boost::asio;
using kube::detail::transport_params;

using namespace kube_test;

TEST_CASE("client reads /version over verified TLS with a client certificate", "[client]") {
  auto [ec, res] = run(admin_cert_settings(), get_version());
  REQUIRE_FALSE(ec);
  CHECK(res.status == 200);
  const auto doc = boost::json::parse(res.body).as_object();
  CHECK(doc.at("gitVersion").as_string().starts_with("v1."));
}

TEST_CASE("client authenticates with a bearer token and basic resource paths work", "[client][auth]") {
  auto [ec, res] = run(token_settings("admin"), kube::request{}.resource("namespaces").name("kube-system"));
  REQUIRE_FALSE(ec);
  CHECK(boost::json::parse(res.body).at("metadata").at("name") == "kube-system");
}

TEST_CASE("the unprivileged user is refused with 403 and the server's message", "[client][auth]") {
  auto [ec, res] = run(token_settings("alice"), kube::request{}.namespace_("default").resource("secrets"));
  CHECK(ec == kube::api_errc::forbidden);
  CHECK(res.status == 403);
  REQUIRE(res.diag.server_status() != nullptr);
  CHECK(res.diag.server_message().find("User \"alice\" cannot list resource \"secrets\"") != std::string::npos);
  CHECK(res.diag.client_message() == "GET v1 secrets default: HTTP 403");
}

TEST_CASE("a missing object is not_found and a duplicate create is already_exists", "[client][errors]") {
  const auto ns = unique_name("client-errors");
  create_namespace(ns);
  auto [ec, res] = run(admin_cert_settings(), kube::request{}.namespace_(ns).resource("configmaps").name("absent"));
  CHECK(ec == kube::api_errc::not_found);
  CHECK(res.diag.server_message() == "configmaps \"absent\" not found");

  const std::string cm = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup"},"data":{"a":"b"}})";
  auto create = kube::request{}.method(kube::http_method::post).namespace_(ns).resource("configmaps").body(cm);
  auto [ec1, res1] = run(admin_cert_settings(), create);
  REQUIRE_FALSE(ec1);
  CHECK(res1.status == 201);
  auto [ec2, res2] = run(admin_cert_settings(), create);
  CHECK(ec2 == kube::api_errc::already_exists);
  CHECK(res2.status == 409);
}

TEST_CASE("a large list comes gzip-compressed and decodes to the same items, and disable_compression turns it off",
          "[client][compression]") {
  // The apiserver compresses responses above 128 KiB for clients that ask
  // (APIResponseCompression); 160 configmaps of 1 KiB each make one.
  const auto ns = unique_name("client-gzip");
  create_namespace(ns);
  const std::string filler(1000, 'x');
  with_admin_client([&](kube::client& c) -> asio::awaitable<void> {
    for (int i = 0; i < 160; ++i) {
      auto r = co_await c.async_request(kube::request{}
                                            .method(kube::http_method::post)
                                            .namespace_(ns)
                                            .resource("configmaps")
                                            .body(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-)" +
                                                  std::to_string(i) + R"("},"data":{"filler":")" + filler + R"("}})"),
                                        kube::use_awaitable);
      REQUIRE(r.status == 201);
    }
  });
  auto names = [](const std::string& body) {
    std::vector<std::string> out;
    const auto doc = boost::json::parse(body);
    for (const auto& item : doc.at("items").as_array()) out.emplace_back(item.at("metadata").at("name").as_string());
    std::sort(out.begin(), out.end());
    return out;
  };
  const auto list = kube::request{}.namespace_(ns).resource("configmaps");
  auto [ec, zipped] = run(admin_cert_settings(), list);
  REQUIRE_FALSE(ec);
  CHECK(zipped.content_encoding == "gzip");
  auto plain_settings = admin_cert_settings();
  plain_settings.disable_compression = true;
  auto [ec2, plain] = run(plain_settings, list);
  REQUIRE_FALSE(ec2);
  CHECK(plain.content_encoding.empty());
  CHECK(plain.body.size() > 160'000);
  CHECK(names(zipped.body).size() == 160);
  CHECK(names(zipped.body) == names(plain.body));
  // kubectl, an independent client, sees the same 160 objects.
  CHECK(sh_out(kubectl() + "get configmaps -n " + ns + " --no-headers -o name | grep -c '^configmap/cm-'") == "160\n");
  // A small answer is not compressed even when asked.
  auto [ec3, one] = run(admin_cert_settings(), kube::request{}.namespace_(ns).resource("configmaps").name("cm-1"));
  REQUIRE_FALSE(ec3);
  CHECK(one.content_encoding.empty());
  sh(kubectl() + "delete namespace " + ns + " --wait=false");
}

TEST_CASE("a CA that did not sign the server fails the handshake with a TLS error", "[client][tls]") {
  auto s = admin_cert_settings();
  auto env = kube_test::cluster_env();
  s.ca_file = env.at("KUBE_TEST_WRONG_CA");
  s.ca_pem = kube_test::read_file(s.ca_file);
  auto [ec, res] = run(s, get_version());
  CHECK(ec == kube::client_errc::tls_error);
  // One sentence: the server, the issuer it showed, the CA file that did not trust it.
  CHECK_THAT(res.diag.client_message(), Catch::Contains("the certificate of the server 127.0.0.1:") &&
                                            Catch::Contains(") is not signed by the certificate authority " +
                                                            s.ca_file + " - is that the CA of this cluster?"));
}

TEST_CASE("tls-server-name that the certificate does not carry is rejected", "[client][tls]") {
  auto s = admin_cert_settings();
  s.tls_server_name = "not-the-apiserver.example";
  auto [ec, res] = run(s, get_version());
  CHECK(ec == kube::client_errc::tls_error);
  CHECK_THAT(res.diag.client_message(),
             Catch::Contains("kubernetes.default.svc") && Catch::Contains(", not for not-the-apiserver.example - "));
  // ...and one it does carry is accepted although we dial 127.0.0.1.
  s.tls_server_name = "kubernetes.default.svc";
  auto [ec2, res2] = run(s, get_version());
  CHECK_FALSE(ec2);
}

TEST_CASE("a malformed client key is reported naming the field, not its content", "[client][tls]") {
  auto s = admin_cert_settings();
  s.client_key_pem = "-----BEGIN EC PRIVATE KEY-----\nnot-a-key-SECRETMATERIAL\n-----END EC PRIVATE KEY-----\n";
  s.client_key_file = "/tmp/bad.key";
  try {
    asio::io_context io;
    auto c = kube::detail::client_access::make(io.get_executor(), s);
    FAIL("constructing a client with a bad key must throw");
  } catch (const kube::error& e) {
    CHECK(e.code() == kube::client_errc::tls_error);
    const std::string what = e.what();
    CHECK(what.find("client-key /tmp/bad.key") != std::string::npos);
    CHECK(what.find("SECRETMATERIAL") == std::string::npos);
  }
}

TEST_CASE("co_await with kube::use_awaitable throws kube::error carrying the Status", "[client][tokens]") {
  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), admin_cert_settings());
  bool caught = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto ok = co_await c.async_request(get_version());
        CHECK(ok.status == 200);
        try {
          co_await c.async_request(kube::request{}.namespace_("default").resource("configmaps").name("nope-nope"));
        } catch (const kube::error& e) {
          caught = true;
          CHECK(e.code() == kube::api_errc::not_found);
          CHECK(e.diag().server_message() == "configmaps \"nope-nope\" not found");
        }
      },
      asio::detached);
  io.run();
  CHECK(caught);
}

TEST_CASE("asio::deferred, use_future and as_tuple(use_awaitable) tokens work", "[client][tokens]") {
  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), admin_cert_settings());
  unsigned deferred_status = 0;
  c.async_request(get_version(), asio::deferred)([&](kube::error_code ec, kube::response r) {
    CHECK_FALSE(ec);
    deferred_status = r.status;
  });
  kube::error_code tuple_ec;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto [ec, r] =
            co_await c.async_request(kube::request{}.namespace_("default").resource("configmaps").name("x-absent"),
                                     asio::as_tuple(asio::use_awaitable));
        tuple_ec = ec;
        CHECK(r.status == 404);
      },
      asio::detached);
  io.run();
  CHECK(deferred_status == 200);
  CHECK(tuple_ec == kube::api_errc::not_found);

  // use_future: the io_context runs on another thread.
  asio::io_context io2;
  auto guard = asio::make_work_guard(io2);
  std::thread t([&] { io2.run(); });
  auto c2 = kube::detail::client_access::make(io2.get_executor(), admin_cert_settings());
  auto fut = c2.async_request(get_version(), asio::use_future);
  CHECK(fut.get().status == 200);
  guard.reset();
  t.join();
}

TEST_CASE("a request is cancelled through its cancellation slot", "[client][cancel]") {
  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), admin_cert_settings());
  asio::cancellation_signal sig;
  kube::error_code ec;
  bool done = false;
  // A watch held open by the server for 60 s, read as a unary request: only
  // cancellation can end it early.
  c.async_request(
      kube::request{}.namespace_("default").resource("configmaps").param("watch", "true").param("timeoutSeconds", "60"),
      asio::bind_cancellation_slot(sig.slot(), [&](kube::error_code e, kube::response) {
        ec = e;
        done = true;
      }));
  asio::steady_timer timer(io, std::chrono::milliseconds(300));
  timer.async_wait([&](auto) { sig.emit(asio::cancellation_type::terminal); });
  const auto start = std::chrono::steady_clock::now();
  io.run();
  CHECK(done);
  CHECK(ec == asio::error::operation_aborted);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
}

TEST_CASE("keep-alive connections are reused for sequential requests", "[client][pool]") {
  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), admin_cert_settings());
  int ok = 0;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 20; ++i) {
          auto r = co_await c.async_request(get_version());
          ok += r.status == 200;
        }
      },
      asio::detached);
  io.run();
  CHECK(ok == 20);
  CHECK(c.connections_opened() == 1);
}

TEST_CASE("the token bucket throttles unary requests to qps after the burst", "[client][limiter]") {
  auto s = admin_cert_settings();
  s.qps = 5;
  s.burst = 10;
  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), s);
  int ok = 0;
  const auto start = std::chrono::steady_clock::now();
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 20; ++i) ok += (co_await c.async_request(get_version())).status == 200;
      },
      asio::detached);
  io.run();
  CHECK(ok == 20);
  // 10 at once, then 10 more at 5/s: at least 2 s minus rounding. Only the
  // lower bound is checked (the limiter may never be faster than this).
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(1900));
}

TEST_CASE("a watch streams the changes kubectl makes, then ends with eof", "[client][watch]") {
  const auto ns = unique_name("client-watch");
  create_namespace(ns);
  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), admin_cert_settings());
  std::vector<std::pair<kube::watch_event_type, std::string>> seen;
  kube::error_code end;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto w = co_await c.async_watch(kube::request{}
                                            .namespace_(ns)
                                            .resource("configmaps")
                                            .param("watch", "true")
                                            .param("allowWatchBookmarks", "true")
                                            .param("timeoutSeconds", "4"));
        // kubectl is an independent client; the io thread blocks meanwhile,
        // the events wait in the socket.
        REQUIRE(sh(kubectl() + "-n " + ns + " create configmap w1 --from-literal=a=1") == 0);
        REQUIRE(sh(kubectl() + "-n " + ns + " patch configmap w1 -p '{\"data\":{\"a\":\"2\"}}'") == 0);
        REQUIRE(sh(kubectl() + "-n " + ns + " delete configmap w1") == 0);
        for (;;) {
          auto [ec, ev] = co_await w.async_next(asio::as_tuple(asio::use_awaitable));
          if (ec) {
            end = ec;
            break;
          }
          if (ev.type != kube::watch_event_type::bookmark) seen.emplace_back(ev.type, event_name(ev));
        }
      },
      asio::detached);
  io.run();
  using t = kube::watch_event_type;
  const std::vector<std::pair<t, std::string>> want{{t::added, "w1"}, {t::modified, "w1"}, {t::deleted, "w1"}};
  CHECK(seen == want);
  CHECK(end == asio::error::eof);
}

TEST_CASE("cancelling async_next ends the watch with operation_aborted", "[client][watch][cancel]") {
  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), admin_cert_settings());
  asio::cancellation_signal sig;
  kube::error_code ec;
  bool open = true;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto w = co_await c.async_watch(kube::request{}
                                            .namespace_("kube-system")
                                            .resource("configmaps")
                                            .param("watch", "true")
                                            .param("resourceVersion", "0")
                                            .param("timeoutSeconds", "60"));
        // Drain the initial ADDED events, then wait with nothing coming.
        asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::milliseconds(500));
        timer.async_wait([&](auto) { sig.emit(asio::cancellation_type::terminal); });
        for (;;) {
          auto [e, ev] =
              co_await w.async_next(asio::bind_cancellation_slot(sig.slot(), asio::as_tuple(asio::use_awaitable)));
          if (e) {
            ec = e;
            break;
          }
        }
        open = w.is_open();
      },
      asio::detached);
  const auto start = std::chrono::steady_clock::now();
  io.run();
  CHECK(ec == asio::error::operation_aborted);
  CHECK_FALSE(open);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
}

TEST_CASE("a token file is re-read after a 401 so a rotated token is used", "[client][auth]") {
  const auto path = std::filesystem::temp_directory_path() / unique_name("kube-token");
  { std::ofstream(path) << "not-a-valid-token\n"; }
  auto s = base_settings();
  s.token_file = path.string();

  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), s);
  kube::error_code first, second;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto [e1, r1] = co_await c.async_request(get_version(), asio::as_tuple(asio::use_awaitable));
        first = e1;
        // Rotate the file on disk while the client lives.
        { std::ofstream(path) << kube_test::cluster_token("admin") << "\n"; }
        auto [e2, r2] =
            co_await c.async_request(kube::request{}.resource("namespaces"), asio::as_tuple(asio::use_awaitable));
        second = e2;
      },
      asio::detached);
  io.run();
  std::filesystem::remove(path);
  CHECK(first == kube::api_errc::unauthorized);
  CHECK_FALSE(second);
}

TEST_CASE("an exec plugin's token is cached and the plugin re-run after a 401", "[client][auth][exec]") {
  const auto dir = std::filesystem::temp_directory_path() / unique_name("kube-exec");
  std::filesystem::create_directories(dir);
  const auto script = dir / "plugin.sh";
  const auto count = dir / "count";
  const auto token = dir / "token";
  { std::ofstream(token) << "stale-token"; }
  {
    std::ofstream(script)
        << "#!/bin/sh\n"
        << "echo run >> " << count << "\n"
        << "case \"$KUBERNETES_EXEC_INFO\" in *ExecCredential*) ;; *) echo 'no exec info' >&2; exit 3;; esac\n"
        << "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
        << "\"status\":{\"token\":\"%s\"}}' \"$(cat " << token << ")\"\n";
  }
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  auto s = base_settings();
  s.has_exec = true;
  s.exec.api_version = "client.authentication.k8s.io/v1";
  s.exec.command = script.string();

  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), s);
  std::vector<kube::error_code> results;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto [e1, r1] = co_await c.async_request(get_version(), asio::as_tuple(asio::use_awaitable));
        results.push_back(e1);  // stale token: 401 after one re-run (2 runs)
        { std::ofstream(token) << kube_test::cluster_token("admin"); }
        for (int i = 0; i < 3; ++i) {
          auto [e, r] =
              co_await c.async_request(kube::request{}.resource("namespaces"), asio::as_tuple(asio::use_awaitable));
          results.push_back(e);
        }
      },
      asio::detached);
  io.run();
  const auto runs = kube_test::read_file(count.string());
  std::filesystem::remove_all(dir);
  REQUIRE(results.size() == 4);
  CHECK(results[0] == kube::api_errc::unauthorized);
  // After the 401 of request 1 the cache was dropped: request 2 runs the
  // plugin (valid token), requests 3 and 4 use the cached credential.
  CHECK_FALSE(results[1]);
  CHECK_FALSE(results[2]);
  CHECK_FALSE(results[3]);
  CHECK(std::count(runs.begin(), runs.end(), '\n') == 3);
}

TEST_CASE("a failing exec plugin reports its exit status and the last line of its stderr", "[client][auth][exec]") {
  auto s = base_settings();
  s.has_exec = true;
  s.exec.api_version = "client.authentication.k8s.io/v1beta1";
  s.exec.command = "/bin/sh";
  s.exec.args = {"-c", "echo 'login required: run corp-login' >&2; exit 7"};
  auto [ec, res] = run(s, get_version());
  CHECK(ec == kube::client_errc::exec_plugin_failed);
  // Its stderr goes on to this process's stderr, as client-go's does; the
  // error ends with its last line, where plugins say why (docs/guides/errors.md).
  CHECK_THAT(res.diag.client_message(),
             Catch::EndsWith("exited with status 7; its stderr ended with: login required: run corp-login"));
}

TEST_CASE("an exec plugin that hangs is killed after its timeout", "[client][auth][exec]") {
  auto s = base_settings();
  s.has_exec = true;
  s.exec.api_version = "client.authentication.k8s.io/v1";
  s.exec.command = "/bin/sleep";
  s.exec.args = {"30"};
  s.exec.timeout = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  auto [ec, res] = run(s, get_version());
  CHECK(ec == kube::client_errc::exec_plugin_failed);
  CHECK(res.diag.client_message().find("timed out") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
}

TEST_CASE("impersonation headers act as the impersonated user", "[client][auth]") {
  auto s = admin_cert_settings();
  s.impersonate_user = "alice";
  auto [ec, res] = run(s, kube::request{}.namespace_("default").resource("secrets"));
  CHECK(ec == kube::api_errc::forbidden);
  CHECK(res.diag.server_message().find("User \"alice\"") != std::string::npos);
}

TEST_CASE("no token or key appears in any log line or error message", "[client][secrets]") {
  // Run the failure paths once more with trace logging, then grep.
  const auto admin = kube_test::cluster_token("admin");
  const auto alice = kube_test::cluster_token("alice");
  std::string errors;
  auto s = token_settings("alice");
  auto [ec, res] = run(s, kube::request{}.namespace_("default").resource("secrets"));
  errors += res.diag.client_message() + res.diag.server_message() + ec.message();
  auto s2 = base_settings();
  s2.token = admin + "x";  // invalid, 401
  auto [ec2, res2] = run(s2, get_version());
  CHECK(ec2 == kube::api_errc::unauthorized);
  errors += res2.diag.client_message() + res2.diag.server_message() + ec2.message();
  // A rotating token file that is wrong: the 401 refresh path logs.
  const auto path = std::filesystem::temp_directory_path() / unique_name("kube-token");
  { std::ofstream(path) << admin << "-wrong\n"; }
  auto s3 = base_settings();
  s3.token_file = path.string();
  auto [ec3, res3] = run(s3, get_version());
  std::filesystem::remove(path);
  CHECK(ec3 == kube::api_errc::unauthorized);
  errors += res3.diag.client_message() + res3.diag.server_message() + ec3.message();
  const auto key = kube_test::read_file(kube_test::cluster_env().at("KUBE_TEST_ADMIN_KEY"));
  std::string logs;
  {
    std::lock_guard lk(log_capture().m);
    logs = log_capture().text;
  }
  CHECK(logs.find("401, refreshing credentials") != std::string::npos);  // the logger did see this flow
  for (const auto* hay : {&errors, &logs}) {
    CHECK(hay->find(admin) == std::string::npos);
    CHECK(hay->find(alice) == std::string::npos);
    CHECK(hay->find("PRIVATE KEY") == std::string::npos);
    CHECK(hay->find(key.substr(40, 40)) == std::string::npos);
  }
}

TEST_CASE("a client built from each generated kubeconfig talks to the cluster as that identity", "[client][config]") {
  const auto dir = env_or_throw("KUBE_TEST_CLUSTER_DIR") + "/kubeconfig/";
  auto client_for = [&](const std::string& name) {
    return kube::client_config::from_kubeconfig(kube::kubeconfig::load_file(dir + name + ".yaml"));
  };
  for (const char* admin : {"admin-cert", "admin-token"}) {
    asio::io_context io;
    kube::client c(io.get_executor(), client_for(admin));
    kube::error_code ec;
    c.async_request(kube::request{}.namespace_("default").resource("secrets"),
                    [&](kube::error_code e, kube::response) { ec = e; });
    io.run();
    INFO(admin);
    CHECK_FALSE(ec);
  }
  asio::io_context io;
  kube::client c(io.get_executor(), client_for("user-token"));
  kube::error_code ns_ec, secrets_ec;
  c.async_request(kube::request{}.resource("namespaces"), [&](kube::error_code e, kube::response) { ns_ec = e; });
  c.async_request(kube::request{}.namespace_("default").resource("secrets"),
                  [&](kube::error_code e, kube::response) { secrets_ec = e; });
  io.run();
  CHECK_FALSE(ns_ec);
  CHECK(secrets_ec == kube::api_errc::forbidden);
}

namespace {
namespace beast = boost::beast;
namespace http = beast::http;

// A minimal HTTP CONNECT proxy on 127.0.0.1 that counts the tunnels it opened.
struct connect_proxy {
  explicit connect_proxy(asio::any_io_executor ex)
      : acceptor(ex, {asio::ip::make_address("127.0.0.1"), 0}) {}
  asio::ip::tcp::acceptor acceptor;
  int tunnels = 0;
  std::string last_target;

  unsigned short port() const { return acceptor.local_endpoint().port(); }

  asio::awaitable<void> run() {
    for (;;) {
      auto [ec, sock] = co_await acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
      if (ec) co_return;
      asio::co_spawn(acceptor.get_executor(), tunnel(std::move(sock)), asio::detached);
    }
  }

  static asio::awaitable<void> pump(asio::ip::tcp::socket& from, asio::ip::tcp::socket& to) {
    std::array<char, 16384> buf;
    for (;;) {
      auto [ec, n] = co_await from.async_read_some(asio::buffer(buf), asio::as_tuple(asio::use_awaitable));
      if (ec) break;
      auto [wec, wn] = co_await asio::async_write(to, asio::buffer(buf.data(), n), asio::as_tuple(asio::use_awaitable));
      if (wec) break;
    }
    boost::system::error_code ignored;
    to.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
  }

  asio::awaitable<void> tunnel(asio::ip::tcp::socket client) {
    beast::flat_buffer buf;
    http::request<http::empty_body> req;
    auto [rec, rn] = co_await http::async_read(client, buf, req, asio::as_tuple(asio::use_awaitable));
    if (rec || req.method() != http::verb::connect) co_return;
    last_target = std::string(req.target());
    const auto colon = last_target.rfind(':');
    asio::ip::tcp::resolver resolver(client.get_executor());
    auto [res_ec, results] = co_await resolver.async_resolve(
        last_target.substr(0, colon), last_target.substr(colon + 1), asio::as_tuple(asio::use_awaitable));
    if (res_ec) co_return;
    asio::ip::tcp::socket upstream(client.get_executor());
    auto [cec, ep] = co_await asio::async_connect(upstream, results, asio::as_tuple(asio::use_awaitable));
    if (cec) co_return;
    ++tunnels;
    const std::string ok = "HTTP/1.1 200 Connection established\r\n\r\n";
    co_await asio::async_write(client, asio::buffer(ok), asio::as_tuple(asio::use_awaitable));
    using namespace asio::experimental::awaitable_operators;
    co_await (pump(client, upstream) && pump(upstream, client));
  }
};
}  // namespace

TEST_CASE("proxy-url sends requests through an HTTP CONNECT tunnel, TLS end to end", "[client][proxy]") {
  asio::io_context io;
  connect_proxy proxy(io.get_executor());
  asio::co_spawn(io, proxy.run(), asio::detached);
  auto s = admin_cert_settings();
  s.proxy_url = "http://127.0.0.1:" + std::to_string(proxy.port());
  auto c = kube::detail::client_access::make(io.get_executor(), s);
  std::vector<unsigned> statuses;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 3; ++i) statuses.push_back((co_await c.async_request(get_version())).status);
        io.stop();  // the pooled connection keeps the tunnel open; nothing else to wait for
      },
      asio::detached);
  io.run_for(std::chrono::seconds(60));
  CHECK(statuses == std::vector<unsigned>{200, 200, 200});
  CHECK(proxy.tunnels == 1);  // one keep-alive connection through one tunnel
  const auto server = cluster_env().at("KUBE_TEST_SERVER");
  CHECK(server.ends_with(proxy.last_target));
}

TEST_CASE("a request that outlives client_params.timeout fails with client_errc::timeout", "[client][timeout]") {
  auto s = admin_cert_settings();
  s.timeout = std::chrono::milliseconds(400);
  // A watch read as a unary request: the server keeps it open for 60 s.
  auto [ec, res] = run(s, kube::request{}
                              .namespace_("default")
                              .resource("configmaps")
                              .param("watch", "true")
                              .param("timeoutSeconds", "60"));
  CHECK(ec == kube::client_errc::timeout);
  CHECK(res.diag.client_message().find("did not answer within 400 ms") != std::string::npos);
  // The next request on the same settings is unaffected.
  auto [ec2, res2] = run(s, get_version());
  CHECK_FALSE(ec2);
}

TEST_CASE("an exec credential past its expirationTimestamp is fetched again", "[client][auth][exec]") {
  const auto dir = std::filesystem::temp_directory_path() / unique_name("kube-exec-exp");
  std::filesystem::create_directories(dir);
  const auto script = dir / "plugin.sh";
  const auto count = dir / "count";
  {
    std::ofstream(script)
        << "#!/bin/sh\n"
        << "echo run >> " << count << "\n"
        << "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\","
        << "\"status\":{\"token\":\"" << cluster_token("admin")
        << "\",\"expirationTimestamp\":\"2001-01-01T00:00:00Z\"}}'\n";
  }
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  auto s = base_settings();
  s.has_exec = true;
  s.exec.api_version = "client.authentication.k8s.io/v1beta1";
  s.exec.command = script.string();
  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), s);
  int ok = 0;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (int i = 0; i < 3; ++i) ok += (co_await c.async_request(get_version())).status == 200;
      },
      asio::detached);
  io.run();
  const auto runs = read_file(count.string());
  std::filesystem::remove_all(dir);
  CHECK(ok == 3);
  CHECK(std::count(runs.begin(), runs.end(), '\n') == 3);  // expired each time: one run per request
}

TEST_CASE("close() while async_next is pending ends it with operation_aborted", "[client][watch][cancel]") {
  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), admin_cert_settings());
  kube::error_code ec, after;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto w = co_await c.async_watch(kube::request{}
                                            .namespace_("default")
                                            .resource("configmaps")
                                            .param("watch", "true")
                                            .param("timeoutSeconds", "60"));
        asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::milliseconds(300));
        timer.async_wait([w](auto) mutable { w.close(); });  // nothing arrives in "default" meanwhile
        auto [e, ev] = co_await w.async_next(asio::as_tuple(asio::use_awaitable));
        ec = e;
        auto [e2, ev2] = co_await w.async_next(asio::as_tuple(asio::use_awaitable));
        after = e2;
      },
      asio::detached);
  io.run();
  CHECK(ec == asio::error::operation_aborted);
  CHECK(after == asio::error::operation_aborted);  // a failed stream keeps reporting its failure
}

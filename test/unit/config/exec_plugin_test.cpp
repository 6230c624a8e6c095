// Exec credential plugins, run for real (/bin/sh scripts): the kubeconfig's
// env entries win over inherited variables, the plugin inherits no
// descriptor of ours, its exit is awaited without blocking the I/O thread,
// a failure names the last line of its stderr, and requests that need a credential at the same time run it once.
#include "config/auth.hpp"
#include "temp_dir.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <string>
#include <memory>
#include <utility>
#include <vector>

#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

// An exec config that runs `script` with /bin/sh; the script prints the
// credential with `cred TOKEN`.
kube::detail::exec_params shell_plugin(const std::string& script) {
  kube::detail::exec_params e;
  e.api_version = "client.authentication.k8s.io/v1";
  e.command = "/bin/sh";
  e.args = {"-c", "cred() { printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
                  "\"status\":{\"token\":\"%s\"}}' \"$1\"; }\n" +
                      script};
  e.timeout = 10s;
  return e;
}

struct run_result {
  kube::error_code ec;
  kube::detail::exec_credential cred;
  kube::diagnostics diag;
};

run_result run(const kube::detail::exec_params& e) {
  asio::io_context io;
  run_result r;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        r.ec = co_await kube::detail::run_exec_plugin(e, "https://127.0.0.1:6443", r.cred, r.diag);
      },
      asio::detached);
  io.run();
  return r;
}

}  // namespace

TEST_CASE("the kubeconfig's env entries replace inherited variables of the same name", "[exec]") {
  kube::detail::exec_params e;
  e.env = {{"REGION", "eu-1"}, {"EXTRA", "x"}};
  std::vector<std::string> inherited{"HOME=/home/u", "REGION=us-2", "KUBERNETES_EXEC_INFO=stale", "PATH=/bin"};
  std::vector<char*> environ_like;
  for (auto& s : inherited) environ_like.push_back(s.data());
  environ_like.push_back(nullptr);
  const auto env = kube::detail::exec_plugin_environment(e, environ_like.data(), "{}");
  CHECK(env ==
        std::vector<std::string>{"HOME=/home/u", "PATH=/bin", "REGION=eu-1", "EXTRA=x", "KUBERNETES_EXEC_INFO={}"});

  // And through a real plugin.
  ::setenv("KUBE_TEST_EXEC_VAR", "inherited", 1);
  auto plugin = shell_plugin("cred \"$KUBE_TEST_EXEC_VAR\"");
  plugin.env = {{"KUBE_TEST_EXEC_VAR", "from-kubeconfig"}};
  const auto r = run(plugin);
  ::unsetenv("KUBE_TEST_EXEC_VAR");
  REQUIRE_FALSE(r.ec);
  CHECK(r.cred.token == "from-kubeconfig");
}

TEST_CASE("a failing plugin's error ends with the last line it wrote on stderr", "[exec]") {
  // More than the 8 KiB kept of stderr comes before the line that says why.
  const auto r = run(shell_plugin("i=0; while [ $i -lt 1200 ]; do echo \"progress line $i\" >&2; i=$((i+1)); done; "
                                  "printf 'error: the login expired, run my-login\\n\\n' >&2; exit 5"));
  CHECK(r.ec == kube::client_errc::exec_plugin_failed);
  CHECK_THAT(r.diag.client_message(),
             Catch::EndsWith("exited with status 5; its stderr ended with: error: the login expired, run my-login"));
  const auto silent = run(shell_plugin("exit 6"));
  CHECK_THAT(silent.diag.client_message(), Catch::EndsWith("exited with status 6 (it wrote nothing on stderr)"));
}

TEST_CASE("a plugin whose child keeps its stderr open is not waited for", "[exec]") {
  const auto start = std::chrono::steady_clock::now();
  const auto r = run(shell_plugin("sleep 5 >&2 & cred t"));
  REQUIRE_FALSE(r.ec);
  CHECK(r.cred.token == "t");
  CHECK(std::chrono::steady_clock::now() - start < 3s);
}

TEST_CASE("the plugin inherits no descriptor beyond stdin, stdout and stderr", "[exec]") {
  // A socket opened without close-on-exec, as any library of the program might.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd > 2);
  const auto r =
      run(shell_plugin("if [ -e /proc/self/fd/" + std::to_string(fd) + " ]; then cred leaked; else cred clean; fi"));
  ::close(fd);
  REQUIRE_FALSE(r.ec);
  CHECK(r.cred.token == "clean");
}

TEST_CASE("a plugin that closes its stdout and lingers does not block the I/O thread", "[exec]") {
  asio::io_context io;
  run_result r;
  bool done = false;
  auto longest_gap = std::chrono::steady_clock::duration::zero();
  const auto start = std::chrono::steady_clock::now();
  auto finished_after = start - start;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        r.ec = co_await kube::detail::run_exec_plugin(shell_plugin("cred t; exec 1>&-; sleep 1"), "", r.cred, r.diag);
        finished_after = std::chrono::steady_clock::now() - start;
        done = true;
      },
      asio::detached);
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        asio::steady_timer t(io);
        auto last = std::chrono::steady_clock::now();
        while (!done) {
          t.expires_after(20ms);
          co_await t.async_wait(asio::use_awaitable);
          const auto now = std::chrono::steady_clock::now();
          longest_gap = std::max(longest_gap, now - last);
          last = now;
        }
      },
      asio::detached);
  io.run();
  REQUIRE_FALSE(r.ec);
  CHECK(r.cred.token == "t");
  CHECK(finished_after >= 900ms);  // the exit is awaited...
  CHECK(longest_gap < 400ms);      // ...while the thread keeps running other work
}

TEST_CASE("requests that need a credential at once run the plugin once and share its token", "[exec]") {
  kube_test::temp_dir t;
  const auto runs = (t.path() / "runs").string();
  kube::detail::transport_params s;
  s.server = "https://127.0.0.1:6443";
  s.has_exec = true;
  s.exec = shell_plugin("echo run >> '" + runs + "'; sleep 0.3; cred shared-token");
  asio::io_context io;
  auto auth = kube::detail::make_authenticator(s, io.get_executor());
  REQUIRE(auth);
  std::vector<std::string> headers;
  std::vector<kube::error_code> errors;
  for (int i = 0; i < 5; ++i) {
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          std::string h;
          kube::diagnostics diag;
          errors.push_back(co_await auth->authorization(h, diag));
          headers.push_back(h);
        },
        asio::detached);
  }
  io.run();
  REQUIRE(headers.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK_FALSE(errors[i]);
    CHECK(headers[i] == "Bearer shared-token");
  }
  std::ifstream in(runs);
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  CHECK(lines == 1);

  // A failing run gives every waiter its error, and the next request runs it again.
  s.exec = shell_plugin("echo run >> '" + runs + "'; sleep 0.3; exit 4");
  auto failing = kube::detail::make_authenticator(s, io.get_executor());
  errors.clear();
  for (int i = 0; i < 3; ++i) {
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          std::string h;
          kube::diagnostics diag;
          errors.push_back(co_await failing->authorization(h, diag));
          CHECK(diag.client_message().find("exited with status 4") != std::string::npos);
        },
        asio::detached);
  }
  io.restart();
  io.run();
  REQUIRE(errors.size() == 3);
  for (const auto& ec : errors) CHECK(ec == kube::client_errc::exec_plugin_failed);
  std::ifstream again(runs);
  lines = 0;
  for (std::string line; std::getline(again, line);) ++lines;
  CHECK(lines == 2);
}

namespace {
// Records the exec plugin calls the authenticator reports.
struct exec_calls final : kube::metrics::client_metrics {
  std::vector<std::pair<int, kube::metrics::exec_plugin_status>> calls;
  void on_exec_plugin_call(int exit_code, kube::metrics::exec_plugin_status status) override {
    calls.emplace_back(exit_code, status);
  }
};

// One authorization through an exec authenticator that reports to `m`.
kube::error_code authorize_once(const kube::detail::exec_params& e, const std::shared_ptr<exec_calls>& m) {
  kube::detail::transport_params s;
  s.server = "https://127.0.0.1:6443";
  s.has_exec = true;
  s.exec = e;
  asio::io_context io;
  auto auth = kube::detail::make_authenticator(s, io.get_executor(), m);
  kube::error_code ec;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        std::string h;
        kube::diagnostics diag;
        ec = co_await auth->authorization(h, diag);
      },
      asio::detached);
  io.run();
  return ec;
}
}  // namespace

TEST_CASE("every plugin run is reported with its exit code and client-go's call status", "[exec][metrics]") {
  using kube::metrics::exec_plugin_status;
  auto m = std::make_shared<exec_calls>();
  CHECK_FALSE(authorize_once(shell_plugin("cred t"), m));
  CHECK(authorize_once(shell_plugin("exit 3"), m) == kube::client_errc::exec_plugin_failed);
  CHECK(authorize_once(shell_plugin("echo not-json"), m) == kube::client_errc::exec_plugin_failed);
  auto missing = shell_plugin("");
  missing.command = "/nonexistent/kube-test-plugin";
  CHECK(authorize_once(missing, m) == kube::client_errc::exec_plugin_failed);
  REQUIRE(m->calls.size() == 4);
  CHECK(m->calls[0] == std::pair{0, exec_plugin_status::no_error});
  CHECK(m->calls[1] == std::pair{3, exec_plugin_status::plugin_execution_error});
  // As client-go counts it: the run succeeded; its output is another matter.
  CHECK(m->calls[2] == std::pair{0, exec_plugin_status::no_error});
  CHECK(m->calls[3] == std::pair{-1, exec_plugin_status::plugin_not_found_error});
}

TEST_CASE("a request cancelled while the plugin runs leaves the run going: the next request gets its token, the child "
          "is reaped",
          "[exec]") {
  kube_test::temp_dir t;
  const auto pid_file = (t.path() / "pid").string();
  kube::detail::transport_params s;
  s.server = "https://127.0.0.1:6443";
  s.has_exec = true;
  s.exec = shell_plugin("echo $$ > '" + pid_file + "'; sleep 2; cred late-token");  // $$: the child itself
  asio::io_context io;
  auto auth = kube::detail::make_authenticator(s, io.get_executor());
  REQUIRE(auth);
  bool first_timed_out = false;
  bool done = false;
  kube::error_code second_ec;
  std::string second;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        using namespace asio::experimental::awaitable_operators;
        std::string h;
        kube::diagnostics diag;
        asio::steady_timer deadline(co_await asio::this_coro::executor, 100ms);
        // The request's own timeout wins: the request is cancelled mid-run.
        const auto first =
            co_await (auth->authorization(h, diag) || deadline.async_wait(asio::as_tuple(asio::use_awaitable)));
        first_timed_out = first.index() == 1;
        kube::diagnostics diag2;
        second_ec = co_await auth->authorization(second, diag2);
        done = true;
      },
      asio::detached);
  io.run_for(10s);
  REQUIRE(done);  // before the fix the second request waited for ever
  CHECK(first_timed_out);
  CHECK_FALSE(second_ec);
  CHECK(second == "Bearer late-token");
  std::ifstream in(pid_file);
  pid_t pid = 0;
  in >> pid;
  REQUIRE(pid > 0);
  CHECK(kill(pid, 0) != 0);  // reaped: not even a zombie is left
}

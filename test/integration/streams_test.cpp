// The kubelet's streams through the apiserver, against the test cluster's
// KWOK nodes (test/cluster/cmd/kcluster/workloads.go): exec runs the command
// on this machine, logs and attach read the CRI log files kcluster wrote,
// as kubectl sees them.
#include "support/client_support.hpp"
#include "support/pods.hpp"

#include <kube/streams/pod_streams.hpp>
#include <kube/k8s/core/v1/pod.hpp>
#include <kube/typed/api.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

using namespace kube_test;
using k8s::core::v1::Pod;

namespace {

constexpr auto tuple = asio::as_tuple(asio::use_awaitable);

// The whole log of `pod` with `p`, read as bytes (async_read_some under
// asio::async_read) until its end.
asio::awaitable<std::string> read_log(kube::api<Pod>& pods, const std::string& pod, const kube::log_params& p) {
  auto log = co_await kube::async_logs(pods, pod, p);
  std::string out;
  const auto ec = co_await read_to_end(log, out);
  CHECK(ec == asio::error::eof);
  co_return out;
}

// Everything a stream gives until its end (eof).
asio::awaitable<std::string> read_all(kube::remote_process::reader r) {
  std::string out;
  const auto ec = co_await read_to_end(r, out);
  CHECK(ec == asio::error::eof);
  co_return out;
}

}  // namespace

TEST_CASE("logs read as bytes, with tail, timestamps and since_time, are kubectl's", "[streams][logs]") {
  const auto ns = unique_name("logs");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<Pod> pods(c, ns);
    co_await running_pod(pods, "p1");
    const auto logs = kubectl() + "-n " + ns + " logs p1 ";

    const kube::log_params whole;
    const auto all = co_await read_log(pods, "p1", whole);
    CHECK(all == sh_out(logs));
    CHECK_THAT(all, Catch::Contains("first line from the fake container\n"));

    kube::log_params p;
    p.tail_lines = 1;
    const auto tail = co_await read_log(pods, "p1", p);
    CHECK(tail == sh_out(logs + "--tail=1"));
    CHECK(tail != all);

    p = {};
    p.timestamps = true;
    const auto stamped = co_await read_log(pods, "p1", p);
    CHECK(stamped == sh_out(logs + "--timestamps"));
    CHECK(stamped != all);

    // A time between the log's first and last lines (KWOK's file:
    // 2026-01-01T00:00:00Z to 00:00:02Z).
    p = {};
    p.since_time = "2026-01-01T00:00:01Z";
    const auto since = co_await read_log(pods, "p1", p);
    CHECK(since == sh_out(logs + "--since-time=2026-01-01T00:00:01Z"));
    CHECK_FALSE(since.empty());
    CHECK(since != all);

    // Both limits: refused here, as kubectl and the server refuse them.
    p.since_seconds = 60;
    kube::diagnostics diag;
    auto [ec, refused] = co_await kube::async_logs(pods, "p1", p, kube::with_diagnostics(diag, tuple));
    CHECK(ec == kube::client_errc::invalid_config);
    CHECK_FALSE(refused.is_open());
    CHECK_THAT(diag.client_message(), Catch::Contains("since_seconds and since_time"));

    // follow: the lines there are, then the stream stays open until closed.
    p = {};
    p.follow = true;
    auto log = co_await kube::async_logs(pods, "p1", p);
    std::string got;
    for (int i = 0; i < 3; ++i) {
      const auto line = co_await log.async_read_line();  // (g++ 12: bound first)
      got += line + "\n";
    }
    CHECK(got == all);
    bool read_done = false;
    kube::error_code read_ec;
    std::array<char, 64> buf{};
    log.async_read_some(asio::buffer(buf), [&](kube::error_code e, std::size_t) {
      read_ec = e;
      read_done = true;
    });
    asio::steady_timer t(co_await asio::this_coro::executor);
    t.expires_after(std::chrono::seconds(1));
    co_await t.async_wait(asio::use_awaitable);
    CHECK_FALSE(read_done);
    CHECK(log.is_open());
    log.close();
    const bool closed = co_await eventually([&] { return read_done; });
    CHECK(closed);
    CHECK(read_ec == asio::error::operation_aborted);
  });
  sh(kubectl() + "delete namespace " + ns + " --wait=false");
}

TEST_CASE("exec, attach and logs through the apiserver to the fake kubelet", "[streams]") {
  const auto ns = unique_name("streams");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<Pod> pods(c, ns);
    co_await running_pod(pods, "p1");

    {
      // (g++ 12: a braced list of strings inside a co_await expression does
      // not compile in a coroutine; hence the named commands)
      const std::vector<std::string> cmd{"sh", "-c", "echo out; echo err >&2; exit 0"};
      auto p = co_await kube::async_exec(pods, "p1", cmd);
      CHECK(p.protocol() == "v5.channel.k8s.io");
      {
        const auto got_out = co_await read_all(p.out());  // (g++ 12: not inside CHECK)
        CHECK(got_out == "out\n");
      }
      {
        const auto got_err = co_await read_all(p.err());  // (g++ 12: not inside CHECK)
        CHECK(got_err == "err\n");
      }
      const auto exit = co_await p.async_wait();
      CHECK(exit.code == 0);
    }

    // KWOK passes a non-zero exit on as an InternalError whose message
    // names it, not as NonZeroExitCode with the code (docs/guides/streams.md).
    {
      const std::vector<std::string> cmd{"sh", "-c", "echo out; echo err >&2; exit 3"};
      auto p = co_await kube::async_exec(pods, "p1", cmd);
      {
        const auto got_out = co_await read_all(p.out());  // (g++ 12: not inside CHECK)
        CHECK(got_out == "out\n");
      }
      {
        const auto got_err = co_await read_all(p.err());  // (g++ 12: not inside CHECK)
        CHECK(got_err == "err\n");
      }
      kube::diagnostics diag;
      auto [ec, exit] = co_await p.async_wait(kube::with_diagnostics(diag, tuple));
      (void)exit;
      CHECK(ec == kube::api_errc::internal_error);
      CHECK_THAT(diag.server_message(), Catch::Contains("exit status 3"));
    }

    // stdin reaches the command; KWOK does not pass its end on, so the
    // command reads a known number of bytes.
    {
      kube::remote_command_params sp;
      sp.with_stdin = true;
      const std::vector<std::string> cmd{"head", "-c", "12"};
      auto p = co_await kube::async_exec(pods, "p1", cmd, sp);
      // One write_some takes it all (up to 32 KiB); with kube::use_awaitable
      // a failure says what the error channel said.
      const auto wrote = co_await p.in().async_write_some(asio::buffer(std::string_view("hello world\n")));
      CHECK(wrote == 12);
      co_await p.async_close_stdin();
      {
        const auto got_out = co_await read_all(p.out());  // (g++ 12: not inside CHECK)
        CHECK(got_out == "hello world\n");
      }
      CHECK((co_await p.async_wait()).code == 0);
    }

    // Refusals come from async_exec with the server's Status.
    {
      kube::diagnostics diag;
      const std::vector<std::string> cmd{"true"};
      auto [ec, p] = co_await kube::async_exec(pods, "no-such-pod", cmd, kube::with_diagnostics(diag, tuple));
      (void)p;
      CHECK(ec == kube::api_errc::not_found);
      CHECK_THAT(diag.server_message(), Catch::Contains("no-such-pod"));
      kube::remote_command_params sp;
      sp.container = "nope";
      std::tie(ec, p) = co_await kube::async_exec(pods, "p1", cmd, sp, kube::with_diagnostics(diag, tuple));
      CHECK(ec == kube::api_errc::bad_request);
      CHECK_THAT(diag.server_message(), Catch::Contains("nope"));
    }

    // Logs: the same lines kubectl gets.
    {
      const auto want = sh_out(kubectl() + "-n " + ns + " logs p1");
      auto log = co_await kube::async_logs(pods, "p1");
      std::string got;
      for (;;) {
        auto [ec, line] = co_await log.async_read_line(tuple);
        if (ec) break;
        got += line + "\n";
      }
      CHECK(got == want);
      CHECK_THAT(got, Catch::Contains("first line from the fake container"));
    }

    // Attach follows the container's output (KWOK: attach.log from its end,
    // from whenever it opens it: a line is appended every 300 ms until one
    // arrives, so a slow start under load loses none of the test's time).
    {
      auto p = co_await kube::async_attach(pods, "p1");
      auto ex = co_await asio::this_coro::executor;
      auto arrived = std::make_shared<bool>(false);
      asio::co_spawn(
          ex,
          [arrived, path = cluster_env().at("KUBE_TEST_KWOK_DIR") + "/attach.log"]() -> asio::awaitable<void> {
            asio::steady_timer t(co_await asio::this_coro::executor);
            for (int i = 0; i < 100 && !*arrived; ++i) {
              t.expires_after(std::chrono::milliseconds(300));
              co_await t.async_wait(asio::use_awaitable);
              if (*arrived) break;
              std::ofstream f(path, std::ios::app);
              f << "2026-01-01T00:00:09.000000000Z stdout F attached line\n";
            }
          },
          asio::detached);
      std::string out;
      auto [ec, n] = co_await asio::async_read_until(p.out(), asio::dynamic_buffer(out), '\n', tuple);
      *arrived = true;
      CHECK_FALSE(ec);
      CHECK(out.substr(0, n) == "attached line\n");
      p.close();
      auto [wec, exit] = co_await p.async_wait(tuple);
      (void)exit;
      (void)wec;
    }
  });
  sh(kubectl() + "delete namespace " + ns + " --wait=false");
}

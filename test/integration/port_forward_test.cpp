// pods/portforward through the apiserver to the test cluster's fake
// kubelet (KWOK), which connects every pod port to a TCP server of kcluster
// that greets and then echoes (KUBE_TEST_PORT_FORWARD_TARGET), except
// KUBE_TEST_REFUSED_POD_PORT, whose target refuses the connection.
#include "support/client_support.hpp"
#include "support/pods.hpp"

#include <kube/streams/pod_streams.hpp>
#include <kube/streams/port_forward.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <functional>
#include <string>
#include <vector>

using namespace kube_test;
using k8s::core::v1::Pod;
using tcp = asio::ip::tcp;

namespace {

constexpr auto tuple = asio::as_tuple(asio::use_awaitable);
const std::string greeting = "kcluster port-forward target\n";

std::uint16_t refused_port() {
  return static_cast<std::uint16_t>(std::stoi(cluster_env().at("KUBE_TEST_REFUSED_POD_PORT")));
}

// Reads one line (with its '\n') from `s`.
template <class Stream>
asio::awaitable<std::string> read_line(Stream& s, std::string& buf) {
  auto [ec, n] = co_await asio::async_read_until(s, asio::dynamic_buffer(buf), '\n', tuple);
  INFO(ec.message());
  REQUIRE_FALSE(ec);
  auto line = buf.substr(0, n);
  buf.erase(0, n);
  co_return line;
}

// Sends `text` and reads as many bytes back (the target echoes).
template <class Stream>
asio::awaitable<std::string> echo(Stream& s, std::string& buf, const std::string& text) {
  co_await asio::async_write(s, asio::buffer(text), asio::use_awaitable);
  if (buf.size() < text.size()) {
    auto [ec, n] = co_await asio::async_read(s, asio::dynamic_buffer(buf),
                                             asio::transfer_exactly(text.size() - buf.size()), tuple);
    (void)n;
    INFO(ec.message());
    REQUIRE_FALSE(ec);
  }
  auto back = buf.substr(0, text.size());
  buf.erase(0, text.size());
  co_return back;
}

}  // namespace

TEST_CASE("forwarded streams reach a port of the pod, each on its own connection", "[streams][port-forward]") {
  const auto ns = unique_name("port-forward");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<Pod> pods(c, ns);
    co_await running_pod(pods, "p1");

    auto one = co_await kube::async_port_forward(pods, "p1", 8080);
    auto two = co_await kube::async_port_forward(pods, "p1", 8080);
    std::string b1, b2;
    const auto g1 = co_await read_line(one, b1);
    const auto g2 = co_await read_line(two, b2);
    CHECK(g1 == greeting);
    CHECK(g2 == greeting);

    // Bytes both ways, more than one WebSocket message and one TLS record.
    // All is written before anything is read: the echo waits in the
    // stream's buffer, which takes 1 MiB before it stops reading.
    std::string big;
    for (int i = 0; big.size() < 300 * 1024; ++i) big += "line " + std::to_string(i) + " of the echo\n";
    const auto back = co_await echo(one, b1, big);
    CHECK(back == big);
    const auto two_back = co_await echo(two, b2, "only on the second connection\n");
    CHECK(two_back == "only on the second connection\n");
    CHECK(b1.empty());

    // Closing one ends its reads (eof) and leaves the other working.
    one.close();
    std::string rest;
    const auto ended = co_await read_to_end(one, rest);
    CHECK(ended == asio::error::eof);
    const auto still = co_await echo(two, b2, "still here\n");
    CHECK(still == "still here\n");
  });
}

TEST_CASE("port-forward errors name what was wrong", "[streams][port-forward]") {
  const auto ns = unique_name("port-forward-errors");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<Pod> pods(c, ns);
    kube::diagnostics diag;

    auto [missing_ec, missing] =
        co_await kube::async_port_forward(pods, "no-such-pod", 8080, kube::with_diagnostics(diag, tuple));
    CHECK(missing_ec == kube::api_errc::not_found);
    CHECK_THAT(diag.server_message(), Catch::Contains("pods \"no-such-pod\" not found"));

    auto [zero_ec, zero] = co_await kube::async_port_forward(pods, "p1", 0, kube::with_diagnostics(diag, tuple));
    CHECK(zero_ec == kube::client_errc::invalid_config);
    CHECK_THAT(diag.client_message(), Catch::Contains("port above 0"));

    // A pod no scheduler places: the apiserver has no kubelet to ask.
    Pod pending;
    pending.metadata.name = "pending";
    pending.spec.emplace().scheduler_name = "nobody";
    pending.spec->containers.emplace_back().name = "main";
    pending.spec->containers.back().image = "example.invalid/main:1";
    co_await pods.async_create(pending);
    auto [pending_ec, none] =
        co_await kube::async_port_forward(pods, "pending", 8080, kube::with_diagnostics(diag, tuple));
    CHECK(pending_ec == kube::api_errc::bad_request);
    CHECK_THAT(diag.server_message(), Catch::Contains("pending"));

    // The kubelet cannot connect to the port: the stream opens, its first
    // read gives the kubelet's error.
    co_await running_pod(pods, "p1");
    auto refused = co_await kube::async_port_forward(pods, "p1", refused_port());
    std::array<char, 256> buf{};
    auto [read_ec, read_n] = co_await refused.async_read_some(asio::buffer(buf), kube::with_diagnostics(diag, tuple));
    CHECK(read_n == 0);
    CHECK(read_ec == kube::client_errc::connection_failed);
    CHECK_THAT(diag.client_message(), Catch::Contains("127.0.0.1:1: connect: connection refused"));
  });
}

TEST_CASE("port_forwarder listens locally like kubectl port-forward", "[streams][port-forward]") {
  const auto ns = unique_name("port-forwarder");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<Pod> pods(c, ns);
    co_await running_pod(pods, "p1");
    auto ex = co_await asio::this_coro::executor;

    kube::port_forwarder fwd(c, ns, "p1", 8080);
    REQUIRE(fwd.local_port() != 0);
    asio::cancellation_signal stop;
    bool run_done = false;
    kube::error_code run_ec;
    fwd.async_run(asio::bind_cancellation_slot(stop.slot(), [&](kube::error_code e) {
      run_ec = e;
      run_done = true;
    }));
    auto [again_ec] = co_await fwd.async_run(tuple);
    CHECK(again_ec == kube::client_errc::already_running);

    const tcp::endpoint local(asio::ip::make_address("127.0.0.1"), fwd.local_port());
    tcp::socket a(ex), b(ex);
    co_await a.async_connect(local, asio::use_awaitable);
    co_await b.async_connect(local, asio::use_awaitable);
    std::string ba, bb;
    const auto ga = co_await read_line(a, ba);
    const auto gb = co_await read_line(b, bb);
    CHECK(ga == greeting);
    CHECK(gb == greeting);
    const auto ea = co_await echo(a, ba, "through a\n");
    const auto eb = co_await echo(b, bb, "through b\n");
    CHECK(ea == "through a\n");
    CHECK(eb == "through b\n");
    CHECK(fwd.stats().accepted == 2);
    CHECK(fwd.stats().open == 2);

    // A local close ends its forwarded connection only.
    a.close();
    const bool one_left = co_await eventually([&] { return fwd.stats().open == 1; });
    CHECK(one_left);
    const auto eb2 = co_await echo(b, bb, "b still\n");
    CHECK(eb2 == "b still\n");

    // The port is taken now: a second forwarder on it says which address.
    kube::port_forward_params same;
    same.local_port = fwd.local_port();
    try {
      kube::port_forwarder taken(c, ns, "p1", 8080, same);
      FAIL("a second forwarder listened on a port in use");
    } catch (const kube::error& e) {
      CHECK(e.code() == asio::error::address_in_use);
      CHECK_THAT(std::string(e.what()), Catch::Contains("127.0.0.1:" + std::to_string(fwd.local_port())));
    }

    // Cancelling async_run closes what it forwards.
    stop.emit(asio::cancellation_type::terminal);
    std::string rest;
    const auto b_end = co_await read_to_end(b, rest);
    CHECK((b_end == asio::error::eof || b_end == asio::error::connection_reset));
    const bool stopped = co_await eventually([&] { return run_done; });
    CHECK(stopped);
    CHECK(run_ec == asio::error::operation_aborted);
    CHECK(fwd.stats().failed == 0);
  });
}

TEST_CASE("port_forwarder closes a connection it cannot forward, logs why and goes on", "[streams][port-forward]") {
  const auto ns = unique_name("port-forwarder-fail");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<Pod> pods(c, ns);
    auto ex = co_await asio::this_coro::executor;
    const auto mark = log_mark();

    kube::port_forwarder fwd(c, ns, "later", 8080);
    asio::cancellation_signal stop;
    bool run_done = false;
    fwd.async_run(asio::bind_cancellation_slot(stop.slot(), [&](kube::error_code) { run_done = true; }));
    const tcp::endpoint local(asio::ip::make_address("127.0.0.1"), fwd.local_port());

    // No such pod yet: the local connection is closed, the reason logged.
    tcp::socket s(ex);
    co_await s.async_connect(local, asio::use_awaitable);
    std::string got;
    const auto end1 = co_await read_to_end(s, got);
    CHECK((end1 == asio::error::eof || end1 == asio::error::connection_reset));
    CHECK(got.empty());
    CHECK(fwd.stats().failed == 1);
    CHECK_THAT(logged_since(mark), Catch::Contains("pods \"later\" not found"));

    // The pod comes: the next connection reaches it.
    co_await running_pod(pods, "later");
    tcp::socket s2(ex);
    co_await s2.async_connect(local, asio::use_awaitable);
    std::string b;
    const auto g = co_await read_line(s2, b);
    CHECK(g == greeting);
    CHECK(fwd.stats().accepted == 2);

    // A port the kubelet cannot reach: closed, logged with its error.
    kube::port_forwarder refused(c, ns, "later", refused_port());
    asio::cancellation_signal stop_refused;
    refused.async_run(asio::bind_cancellation_slot(stop_refused.slot(), [](kube::error_code) {}));
    tcp::socket s3(ex);
    co_await s3.async_connect(tcp::endpoint(local.address(), refused.local_port()), asio::use_awaitable);
    got.clear();
    const auto end3 = co_await read_to_end(s3, got);
    CHECK((end3 == asio::error::eof || end3 == asio::error::connection_reset));
    CHECK(got.empty());
    const bool counted = co_await eventually([&] { return refused.stats().failed == 1; });
    CHECK(counted);
    CHECK_THAT(logged_since(mark), Catch::Contains("127.0.0.1:1: connect: connection refused"));

    stop_refused.emit(asio::cancellation_type::terminal);
    stop.emit(asio::cancellation_type::terminal);
    const bool stopped = co_await eventually([&] { return run_done; });
    CHECK(stopped);
  });
}

TEST_CASE("exec and port-forward refused by RBAC carry the server's Status", "[streams][port-forward]") {
  const auto ns = unique_name("streams-rbac");
  create_namespace(ns);
  with_admin_client([ns](kube::client c) -> asio::awaitable<void> {
    kube::api<Pod> pods(c, ns);
    co_await running_pod(pods, "p1");
  });
  // alice has only what RBAC gives every authenticated user.
  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), token_settings("alice"));
  bool done = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        kube::api<Pod> pods(c, ns);
        kube::diagnostics diag;
        const std::vector<std::string> cmd{"true"};
        const kube::remote_command_params params;
        auto [ec, p] = co_await kube::async_exec(pods, "p1", cmd, params, kube::with_diagnostics(diag, tuple));
        (void)p;
        CHECK(ec == kube::api_errc::forbidden);
        CHECK_THAT(diag.server_message(), Catch::Contains("pods/exec"));
        auto [fec, f] = co_await kube::async_port_forward(pods, "p1", 8080, kube::with_diagnostics(diag, tuple));
        (void)f;
        CHECK(fec == kube::api_errc::forbidden);
        CHECK_THAT(diag.server_message(), Catch::Contains("pods/portforward"));
        done = true;
      },
      [](std::exception_ptr e) {
        if (e) std::rethrow_exception(e);
      });
  io.run();
  CHECK(done);
}

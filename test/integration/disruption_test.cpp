// kube::client across cluster disruptions made by the launcher: an apiserver
// restart (pooled keep-alive connections die) and etcd compaction (old
// resourceVersions expire). These tests run alone (RUN_SERIAL).
#include "support/client_support.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

using namespace kube_test;

namespace {
void kcluster(const std::string& command) {
  const auto env = cluster_env();
  REQUIRE(sh(env.at("KUBE_TEST_KCLUSTER") + " " + command + " --dir " + env.at("KUBE_TEST_CLUSTER_DIR")) == 0);
}
}  // namespace

TEST_CASE("pooled connections that died with an apiserver restart are replaced transparently", "[client][restart]") {
  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), admin_cert_settings());
  std::vector<unsigned> statuses;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        statuses.push_back((co_await c.async_request(get_version())).status);
        kcluster("restart-apiserver");  // blocks this thread until the new apiserver is ready
        statuses.push_back((co_await c.async_request(get_version())).status);
      },
      asio::detached);
  io.run();
  CHECK(statuses == std::vector<unsigned>{200, 200});
  CHECK(c.connections_opened() == 2);
}

TEST_CASE("a watch from a compacted resourceVersion is refused as expired", "[client][watch]") {
  const auto ns = unique_name("client-expired");
  create_namespace(ns);
  auto [ec0, created] = run(admin_cert_settings(), kube::request{}
                                                       .method(kube::http_method::post)
                                                       .namespace_(ns)
                                                       .resource("configmaps")
                                                       .body(R"({"metadata":{"name":"old"},"data":{"v":"0"}})"));
  REQUIRE_FALSE(ec0);
  const std::string old_rv{boost::json::parse(created.body).at("metadata").at("resourceVersion").as_string()};
  for (int i = 1; i <= 5; ++i)
    REQUIRE(sh(kubectl() + "-n " + ns + " patch configmap old -p '{\"data\":{\"v\":\"" + std::to_string(i) + "\"}}'") ==
            0);
  // Compact etcd past old_rv and restart the apiserver so that its watch
  // cache no longer holds the history either.
  kcluster("compact");
  kcluster("restart-apiserver");

  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), admin_cert_settings());
  kube::error_code open_ec, mapped;
  std::string message;
  bool got_error_event = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        auto [oec, w] = co_await c.async_watch(kube::request{}
                                                   .namespace_(ns)
                                                   .resource("configmaps")
                                                   .param("watch", "true")
                                                   .param("resourceVersion", old_rv)
                                                   .param("timeoutSeconds", "5"),
                                               asio::as_tuple(asio::use_awaitable));
        open_ec = oec;
        if (oec) co_return;
        for (;;) {
          auto [ec, ev] = co_await w.async_next(asio::as_tuple(asio::use_awaitable));
          if (ec) break;
          if (ev.type == kube::watch_event_type::error) {
            got_error_event = true;
            kube::diagnostics d;
            mapped = kube::watch_event_error(ev, d);
            message = d.server_message();
            break;
          }
        }
      },
      asio::detached);
  io.run();
  // The apiserver answers either with HTTP 410 at once or with an ERROR
  // event in the stream: both must surface as "expired".
  INFO("open: " << open_ec.message() << "; event: " << mapped.message() << " " << message);
  if (open_ec) {
    CHECK(kube::is_resource_expired(open_ec));
  } else {
    CHECK(got_error_event);
    CHECK(kube::is_resource_expired(mapped));
    CHECK(message.find("too old resource version") != std::string::npos);
  }
}

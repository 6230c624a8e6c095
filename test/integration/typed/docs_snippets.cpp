// The snippets of docs/guides/typed.md (typed client part), compiled and run
// against the real cluster. Each is between "// [name]" and "// [name end]";
// the guide quotes them verbatim.
#include "support/client_support.hpp"

#include <kube/streams/pod_streams.hpp>
#include <kube/tools/retry.hpp>
#include <kube/typed/api.hpp>
#include <kube/k8s/core/v1/config_map.hpp>
#include <kube/k8s/core/v1/pod.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

namespace {
namespace asio = boost::asio;
using k8s::core::v1::ConfigMap;
using k8s::core::v1::Pod;

asio::awaitable<void> crud(kube::client c, std::string ns, std::ostream& out) {
  // [crud]
  kube::api<ConfigMap> cms(c, ns);  // namespaced; kube::api<ConfigMap>(c) lists all namespaces

  ConfigMap cm;  // apiVersion/kind are filled in from resource_traits
  cm.metadata.name = "settings";
  cm.data = kube::string_map<std::string>{{"mode", "fast"}};
  auto created = co_await cms.async_create(cm);
  out << "created " << created.name() << " uid " << created.uid() << "\n";

  auto got = co_await cms.async_get("settings");
  (*got.data)["mode"] = "safe";
  auto replaced = co_await cms.async_replace(got);  // conditional on got's resourceVersion

  auto [ec, missing] = co_await cms.async_get("nope", asio::as_tuple(asio::use_awaitable));
  if (ec == kube::api_errc::not_found) out << "nope: not found\n";
  // [crud end]
  (void)replaced;
}

asio::awaitable<void> lists(kube::client c, std::string ns, std::ostream& out) {
  kube::api<ConfigMap> cms(c, ns);
  // [list]
  kube::list_params params;
  params.label_selector = "app=web";
  params.limit = 100;                              // page size
  auto page = co_await cms.async_list(params);     // ConfigMapList: one page
  if (page.metadata && page.metadata->continue_) { /* params.continue_token = *page.metadata->continue_; ... */
  }
  auto all = co_await cms.async_list_all(params);  // every page, decoded as they arrive
  out << all.items.size() << " configmaps at resourceVersion " << all.metadata->resource_version.value_or("?") << "\n";
  // [list end]
}

asio::awaitable<void> watching(kube::client c, std::string ns, std::ostream& out) {
  kube::api<ConfigMap> cms(c, ns);
  auto list = co_await cms.async_list();
  std::string rv = *list.metadata->resource_version;
  ConfigMap later;
  later.metadata.name = "later";
  co_await cms.async_create(later);
  // [watch]
  kube::watch_params wp;
  wp.resource_version = rv;  // from a list
  wp.timeout_seconds = 300;
  auto w = co_await cms.async_watch(wp);  // typed_watch_stream<ConfigMap>
  for (;;) {
    auto [ec, ev] = co_await w.async_next(asio::as_tuple(asio::use_awaitable));
    if (ec == asio::error::eof) break;         // server ended the watch: re-watch from rv
    if (kube::is_resource_expired(ec)) break;  // ERROR 410: relist
    if (ec) break;                             // decode_error, connection...
    rv = ev.resource_version;                  // set for every event, bookmarks too
    if (ev.type == kube::watch_event_type::bookmark) continue;
    out << kube::to_string(ev.type) << " " << ev.object.name() << "\n";
    break;  // (the test stops at the first event)
  }
  // [watch end]
  w.close();
}

asio::awaitable<void> patching(kube::client c, std::string ns, std::ostream& out) {
  kube::api<ConfigMap> cms(c, ns);
  // [patch]
  co_await cms.async_patch("settings", kube::patch_type::merge, R"({"data":{"extra":"1"}})");
  co_await cms.async_patch("settings", kube::patch_type::json, R"([{"op":"remove","path":"/data/extra"}])");

  ConfigMap intent;  // server-side apply: only the fields this manager owns
  intent.metadata.name = "settings";
  intent.data = kube::string_map<std::string>{{"owner", "me"}};
  kube::patch_params apply;
  apply.field_manager = "my-controller";
  apply.force = false;  // true: take over fields other managers own
  auto applied = co_await cms.async_apply(intent, apply);
  // [patch end]
  out << "applied " << applied.data->size() << " keys\n";
}

asio::awaitable<void> conflicts(kube::client c, std::string ns, std::ostream& out) {
  kube::api<ConfigMap> cms(c, ns);
  // [retry]
  co_await kube::retry_on_conflict([&]() -> asio::awaitable<void> {
    auto cm = co_await cms.async_get("settings");  // read again on every attempt
    (*cm.data)["count"] = "1";
    co_await cms.async_replace(cm);  // api_errc::conflict -> retried (5 attempts, ~10 ms)
  });
  // [retry end]
  // [delete]
  auto cm = co_await cms.async_get("settings");
  kube::delete_params del;
  del.precondition_uid = std::string(cm.uid());  // only this incarnation of "settings"
  del.propagation_policy = "Background";
  auto result = co_await cms.async_delete("settings", del);
  if (result.object) out << "deleted, last state rv " << result.object->resource_version() << "\n";
  if (result.status) out << "deleted: " << result.status->status << "\n";
  // [delete end]
}

asio::awaitable<void> pod_logs(kube::client c, std::string ns, std::ostream& out) {
  // [logs]
  kube::api<Pod> pods(c, ns);
  kube::log_params lp;
  lp.container = "app";
  lp.follow = true;
  lp.tail_lines = 100;
  auto [ec, logs] = co_await kube::async_logs(pods, "web-0", lp, asio::as_tuple(asio::use_awaitable));
  if (ec) {
    out << "no logs: " << ec.message() << "\n";  // e.g. bad_request: the pod has no node yet
    co_return;
  }
  for (;;) {
    auto [rec, line] = co_await logs.async_read_line(asio::as_tuple(asio::use_awaitable));
    if (rec) break;  // eof when the container's log ends
    out << line << "\n";
  }
  // [logs end]
}

}  // namespace

TEST_CASE("docs/guides/typed.md snippets run", "[typed][docs]") {
  using namespace kube_test;
  const auto ns = unique_name("typed-docs");
  create_namespace(ns);
  asio::io_context io;
  auto c = kube::detail::client_access::make(io.get_executor(), admin_cert_settings());
  std::ostringstream out;
  std::exception_ptr failure;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        co_await crud(c, ns, out);
        co_await lists(c, ns, out);
        co_await watching(c, ns, out);
        co_await patching(c, ns, out);
        co_await conflicts(c, ns, out);
        co_await pod_logs(c, ns, out);
      },
      [&](std::exception_ptr e) { failure = e; });
  io.run();
  if (failure) std::rethrow_exception(failure);
  const auto text = out.str();
  INFO(text);
  CHECK(text.find("created settings uid ") != std::string::npos);
  CHECK(text.find("nope: not found") != std::string::npos);
  CHECK(text.find("2 configmaps") == std::string::npos);  // none labelled app=web
  CHECK(text.find("0 configmaps at resourceVersion ") != std::string::npos);
  CHECK(text.find("ADDED later") != std::string::npos);
  CHECK(text.find("applied 2 keys") != std::string::npos);
  CHECK(text.find("deleted") != std::string::npos);
  CHECK(text.find("no logs: ") != std::string::npos);  // web-0 does not exist here
}

// The guide quotes every snippet above verbatim (dedented).
TEST_CASE("docs/guides/typed.md quotes the compiled snippets verbatim", "[typed][docs]") {
  const auto source = kube_test::read_file(KUBE_SOURCE_DIR "/test/integration/typed/docs_snippets.cpp");
  const auto guide = kube_test::read_file(KUBE_SOURCE_DIR "/docs/guides/typed.md");
  int found = 0;
  std::istringstream all(source);
  std::string line, name, text;
  bool in = false;
  while (std::getline(all, line)) {
    // Markers are lines "  // [word]" and "  // [word end]", word in [a-z].
    const bool marker = line.rfind("  // [", 0) == 0 && line.back() == ']';
    if (marker && !in && line.find(' ', 6) == std::string::npos) {
      name = line.substr(6, line.size() - 7);
      text.clear();
      in = true;
      continue;
    }
    if (in && line == "  // [" + name + " end]") {
      while (!text.empty() && text.back() == '\n') text.pop_back();
      INFO("snippet " << name);
      CHECK(guide.find("```cpp\n" + text + "\n```") != std::string::npos);
      ++found;
      in = false;
      continue;
    }
    if (in) text += (line.size() >= 2 ? line.substr(2) : std::string()) + "\n";
  }
  CHECK(found == 7);
}

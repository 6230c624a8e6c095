#pragma once

// lister_watcher over the dynamic client: kube::unstructured objects of one
// resource (group/version/resource), in one namespace or all.

#include <kube/informer/lister_watcher.hpp>

#include <kube/dynamic/dynamic_api.hpp>
#include <kube/dynamic/unstructured.hpp>
#include <kube/watch/watch_event.hpp>
#include <kube/watch/watch_stream.hpp>

#include <boost/asio/error.hpp>
#include <boost/json/object.hpp>
#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace kube::informer {

/// Options of dynamic_lister_watcher.
struct dynamic_lister_watcher_params {
  /// The kind every object must have (e.g. "ConfigMap"); empty: not
  /// checked. Watch objects of another kind become error events
  /// (client_errc::decode_error); list items, which the server sends
  /// without apiVersion/kind, get this kind and the resource's apiVersion.
  std::string expected_kind = {};
  std::string label_selector = {};  ///< sent with every list and watch
  std::string field_selector = {};  ///< sent with every list and watch
};

namespace detail {

inline std::string api_version_of(const group_version_resource& gvr) {
  return gvr.group.empty() ? gvr.version : gvr.group + "/" + gvr.version;
}

/// Checks an object of a watch event; empty on success.
inline error_code check_object(const unstructured& u, const std::string& expected_kind, const std::string& what,
                               diagnostics& diag) {
  if (!expected_kind.empty()) {
    const auto kind = u.kind();
    if (kind != expected_kind) {
      diag.set_client_message(what + ": expected an object of kind " + expected_kind + ", got kind \"" + kind + "\"");
      return client_errc::decode_error;
    }
  }
  if (u.name().empty()) {
    diag.set_client_message(what + ": the object has no metadata.name");
    return client_errc::decode_error;
  }
  return {};
}

class dynamic_event_stream final : public event_stream<unstructured> {
public:
  dynamic_event_stream(watch_stream s, std::string expected_kind, std::string what)
      : s_(std::move(s)),
        kind_(std::move(expected_kind)),
        what_(std::move(what)) {}
  ~dynamic_event_stream() override { s_.close(); }

  boost::asio::awaitable<std::optional<event<unstructured>>> next() override {
    if (done_) {
      co_return std::nullopt;
    }
    event<unstructured> out;
    auto op = s_.async_next(outcome_token(out.diag));
    auto [ec, ev] = co_await std::move(op);
    if (ec) {
      done_ = true;
      co_return read_failure<unstructured>(ec, out.diag);
    }
    out.type = ev.type;
    switch (ev.type) {
    case watch_event_type::error:
      done_ = true;
      out.ec = watch_event_error(ev, out.diag);
      co_return out;
    case watch_event_type::bookmark: {
      unstructured u(std::move(ev.object));
      out.resource_version = u.resource_version();
      const auto ann = u.annotations();
      auto it = ann.find(std::string(initial_events_end_annotation));
      out.initial_events_end = it != ann.end() && it->second == "true";
      co_return out;
    }
    case watch_event_type::added:
    case watch_event_type::modified:
    case watch_event_type::deleted: {
      // Copied out of the event's arena into the default resource: the arena
      // (a monotonic_resource) is not thread-safe, and cached objects are
      // read and copied from any thread.
      auto u = std::make_shared<unstructured>(boost::json::object(std::move(ev.object), boost::json::storage_ptr()));
      if (auto bad = check_object(*u, kind_, what_ + " " + std::string(to_string(ev.type)) + " event", out.diag)) {
        done_ = true;
        out.type = event_type::error;
        out.ec = bad;
        co_return out;
      }
      out.resource_version = u->resource_version();
      out.object = std::move(u);
      co_return out;
    }
    }
    co_return std::nullopt;  // unreachable: every event type is handled above
  }

  void close() override {
    done_ = true;
    s_.close();
  }

private:
  watch_stream s_;
  std::string kind_;
  std::string what_;
  std::atomic<bool> done_{false};  // close() may come from another thread
};

}  // namespace detail

/// list/watch through a kube::dynamic_api (its namespace, or all namespaces
/// when it has none). Errors keep the client's codes and diagnostics.
class dynamic_lister_watcher final : public lister_watcher<unstructured> {
public:
  explicit dynamic_lister_watcher(dynamic_api api, dynamic_lister_watcher_params options = {})
      : api_(std::move(api)),
        opts_(std::move(options)) {}

  boost::asio::awaitable<list_outcome<unstructured>> list(const list_params& params) override {
    return detail::list_or_watch<list_outcome<unstructured>>(
        params, opts_, [this](const list_params& p, auto token) { return api_.async_list(p, std::move(token)); },
        [this](unstructured_list& page, list_outcome<unstructured>& out) { take_page(page, out); });
  }

  boost::asio::awaitable<watch_outcome<unstructured>> watch(const watch_params& params) override {
    return detail::list_or_watch<watch_outcome<unstructured>>(
        params, opts_, [this](const watch_params& p, auto token) { return api_.async_watch(p, std::move(token)); },
        [this](watch_stream& s, watch_outcome<unstructured>& out) {
          out.stream = std::make_unique<detail::dynamic_event_stream>(std::move(s), opts_.expected_kind,
                                                                      "watch " + api_.resource().resource);
        });
  }

  [[nodiscard]] const dynamic_api& api() const noexcept { return api_; }

private:
  // List items come without apiVersion/kind: they get the expected ones.
  void take_page(unstructured_list& page, list_outcome<unstructured>& out) const {
    out.result.items.reserve(page.items.size());
    const auto api_version = detail::api_version_of(api_.resource());
    for (auto& item : page.items) {
      if (!opts_.expected_kind.empty() && item.kind().empty()) {
        item.set_api_version(api_version).set_kind(opts_.expected_kind);
      }
      if (auto ec = detail::check_object(item, opts_.expected_kind, "list " + api_.resource().resource, out.diag)) {
        out.ec = ec;
        out.result = {};
        return;
      }
      out.result.items.push_back(std::make_shared<const unstructured>(std::move(item)));
    }
    out.result.resource_version = std::move(page.resource_version);
    out.result.continue_token = std::move(page.continue_token);
  }

  dynamic_api api_;
  dynamic_lister_watcher_params opts_;
};

}  // namespace kube::informer

#pragma once

// lister_watcher over the typed client: objects of a generated (or CRD)
// type T, decoded once from the wire straight into T.

#include <kube/typed/api.hpp>
#include <kube/informer/lister_watcher.hpp>

#include <boost/asio/error.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace kube::informer {

/// Options of typed_lister_watcher.
struct typed_lister_watcher_params {
  std::string label_selector = {};  ///< sent with every list and watch
  std::string field_selector = {};  ///< sent with every list and watch
  /// Drop metadata.managedFields from every object before it is shared
  /// (no copy: done while the freshly decoded object is still private).
  bool strip_managed_fields = false;
};

namespace detail {

/// What a refused object is called in its error: `what` ("watch pods"),
/// then, for a watch event, its type ("watch pods MODIFIED event"). The text
/// is built only when an object is refused, so accepting one allocates nothing.
struct object_origin {
  std::string_view what;
  std::string_view event_type;  // empty for a list item

  [[nodiscard]] std::string describe() const {
    std::string s(what);
    if (!event_type.empty()) {
      s += ' ';
      s += event_type;
      s += " event";
    }
    return s;
  }
};

/// A watch object's `kind` must be T's (list items carry none).
template <class T>
error_code check_typed_object(const T& obj, const object_origin& from, diagnostics& diag) {
  if (obj.kind && !obj.kind->empty() && *obj.kind != resource_traits<T>::kind) {
    diag.set_client_message(from.describe() + ": expected an object of kind " + std::string(resource_traits<T>::kind) +
                            ", got kind \"" + *obj.kind + "\"");
    return client_errc::decode_error;
  }
  if (obj.name().empty()) {
    diag.set_client_message(from.describe() + ": the object has no metadata.name");
    return client_errc::decode_error;
  }
  return {};
}

/// What a lister_watcher does with each decoded object before sharing it:
/// `check` may refuse it (an error event / failed list), `prepare` changes
/// the still private object (`option`: e.g. strip managedFields).
template <class T>
struct object_policy {
  error_code (*check)(const T& obj, const object_origin& from, diagnostics& diag) = nullptr;
  void (*prepare)(T& obj, bool option) = nullptr;
  bool option = false;
};

/// Moves a list page (api<T>::async_list_shared: each item already in its
/// own shared_ptr, so nothing is moved or copied) into `out`: items checked,
/// prepared and shared, plus the page's resourceVersion and continue token.
/// False (and `out` holds the error) when an item is refused.
template <class T>
bool share_page(shared_list<T>& page, list_outcome<T>& out, const std::string& what, const object_policy<T>& policy) {
  out.result.items.reserve(page.items.size());
  for (auto& item : page.items) {
    if (auto ec = policy.check(*item, {what, {}}, out.diag)) {
      out.ec = ec;
      out.result = {};
      return false;
    }
    policy.prepare(*item, policy.option);
    out.result.items.push_back(std::move(item));
  }
  out.result.resource_version = std::move(page.resource_version);
  out.result.continue_token = std::move(page.continue_token);
  return true;
}

/// The events of a typed watch stream, each object checked and prepared by
/// the policy before it is shared.
template <class T>
class typed_event_stream final : public event_stream<T> {
public:
  typed_event_stream(typed_watch_stream<T> s, std::string what, object_policy<T> policy)
      : s_(std::move(s)),
        what_(std::move(what)),
        policy_(policy) {}
  ~typed_event_stream() override { s_.close(); }

  boost::asio::awaitable<std::optional<event<T>>> next() override {
    if (done_) {
      co_return std::nullopt;
    }
    event<T> out;
    auto op = s_.async_next_shared(outcome_token(out.diag));
    auto [ec, ev] = co_await std::move(op);
    if (ec) {
      done_ = true;
      co_return read_failure<T>(ec, out.diag);
    }
    out.type = ev.type;
    out.resource_version = std::move(ev.resource_version);
    switch (ev.type) {
    case watch_event_type::bookmark:
      out.initial_events_end = ev.initial_events_end;
      co_return out;
    case watch_event_type::added:
    case watch_event_type::modified:
    case watch_event_type::deleted:
      if (auto bad = policy_.check(*ev.object, {what_, to_string(ev.type)}, out.diag)) {
        done_ = true;
        out.type = event_type::error;
        out.ec = bad;
        co_return out;
      }
      policy_.prepare(*ev.object, policy_.option);
      out.object = std::move(ev.object);  // the shared_ptr itself: the object is not moved again
      co_return out;
    case watch_event_type::error:  // typed streams report ERROR events as errors (above)
      break;
    }
    done_ = true;
    out.type = event_type::error;
    out.ec = client_errc::watch_stream_error;
    out.diag.set_client_message(what_ + ": unexpected event type");
    co_return out;
  }

  void close() override {
    done_ = true;
    s_.close();
  }

private:
  typed_watch_stream<T> s_;
  std::string what_;
  object_policy<T> policy_;
  std::atomic<bool> done_{false};  // close() may come from another thread
};

}  // namespace detail

/// list/watch through a kube::api<T> (its namespace, or all namespaces /
/// cluster-wide when it has none). Errors keep the client's codes and
/// diagnostics; a watch object of another kind, or one that does not fit T,
/// is an error event (the Reflector reports it to the watch-error hook and
/// relists).
template <class T>
  requires resource<T>
class typed_lister_watcher final : public lister_watcher<T> {
public:
  explicit typed_lister_watcher(api<T> a, typed_lister_watcher_params options = {})
      : api_(std::move(a)),
        opts_(std::move(options)) {}

  boost::asio::awaitable<list_outcome<T>> list(const list_params& params) override {
    return detail::list_or_watch<list_outcome<T>>(
        params, opts_, [this](const list_params& p, auto token) { return api_.async_list_shared(p, std::move(token)); },
        [this](shared_list<T>& page, list_outcome<T>& out) {
          detail::share_page(page, out, "list " + std::string(resource_traits<T>::plural), policy());
        });
  }

  boost::asio::awaitable<watch_outcome<T>> watch(const watch_params& params) override {
    return detail::list_or_watch<watch_outcome<T>>(
        params, opts_, [this](const watch_params& p, auto token) { return api_.async_watch(p, std::move(token)); },
        [this](typed_watch_stream<T>& s, watch_outcome<T>& out) {
          out.stream = std::make_unique<detail::typed_event_stream<T>>(
              std::move(s), "watch " + std::string(resource_traits<T>::plural), policy());
        });
  }

  [[nodiscard]] const api<T>& get_api() const noexcept { return api_; }

private:
  [[nodiscard]] detail::object_policy<T> policy() const {
    return {&detail::check_typed_object<T>,
            [](T& obj, bool strip) {
              if (strip) obj.metadata.managed_fields.reset();
            },
            opts_.strip_managed_fields};
  }

  api<T> api_;
  typed_lister_watcher_params opts_;
};

}  // namespace kube::informer

#pragma once

// lister_watcher over the metadata-only client: the metadata
// (k8s::meta::v1::PartialObjectMetadata) of one resource's objects, in one
// namespace or all. Needs kube::api (the generated meta/v1 types).

#include <kube/informer/lister_watcher.hpp>

#include <kube/exception.hpp>
#include <kube/metadata_api.hpp>

#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace kube::informer {

/// Options of metadata_lister_watcher.
struct metadata_lister_watcher_options {
  std::string label_selector = {};  ///< sent with every list and watch
  std::string field_selector = {};  ///< sent with every list and watch
  /// Drop metadata.managedFields from every object before it is shared
  /// (no copy: done while the freshly decoded object is still private).
  bool strip_managed_fields = false;
};

namespace detail {

/// Makes a freshly decoded object metadata-only (see keep_metadata_only:
/// a server that ignored the `as=` parameter sent the whole object) and
/// drops managedFields if asked. `whole` says the answer was not
/// PartialObjectMetadata(List).
inline void prepare_metadata(partial_object_metadata& obj, bool whole, bool strip_managed) {
  if (whole) {
    keep_metadata_only(obj);
  }
  if (strip_managed) {
    obj.metadata.managed_fields.reset();
  }
}

class metadata_event_stream final : public event_stream<partial_object_metadata> {
public:
  metadata_event_stream(typed_watch_stream<partial_object_metadata> s, std::string what, bool strip)
      : s_(std::move(s)), what_(std::move(what)), strip_(strip) {}
  ~metadata_event_stream() override { s_.close(); }

  boost::asio::awaitable<std::optional<event<partial_object_metadata>>> next() override {
    if (done_) {
      co_return std::nullopt;
    }
    event<partial_object_metadata> out;
    typed_watch_event<partial_object_metadata> ev;
    try {
      ev = co_await s_.async_next(kube::use_awaitable);
    } catch (const kube::error& e) {
      done_ = true;
      co_return read_failure<partial_object_metadata>(e);
    }
    out.resource_version = std::move(ev.resource_version);
    switch (ev.type) {
    case watch_event_type::bookmark:
      out.type = event_type::bookmark;
      out.initial_events_end = ev.initial_events_end;
      co_return out;
    case watch_event_type::added:
    case watch_event_type::modified:
    case watch_event_type::deleted: {
      out.type = ev.type == watch_event_type::added      ? event_type::added
                 : ev.type == watch_event_type::modified ? event_type::modified
                                                         : event_type::deleted;
      if (ev.object.name().empty()) {
        done_ = true;
        out.type = event_type::error;
        out.ec = client_errc::decode_error;
        out.diag.set_client_message(what_ + " " + std::string(to_string(ev.type)) +
                                    " event: the object has no metadata.name");
        co_return out;
      }
      prepare_metadata(ev.object, !is_partial_object_metadata(ev.object), strip_);
      out.object = std::make_shared<const partial_object_metadata>(std::move(ev.object));
      co_return out;
    }
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
  typed_watch_stream<partial_object_metadata> s_;
  std::string what_;
  bool strip_ = false;
  bool done_ = false;
};

} // namespace detail

/// list/watch through a kube::metadata_api (its namespace, or all
/// namespaces / cluster-wide when it has none): informers whose cache holds
/// only metadata. Errors keep the client's codes and diagnostics; an object
/// without metadata.name is an error event (the Reflector reports it to the
/// watch-error hook and relists). Objects a server sent whole (it ignored
/// the PartialObjectMetadata request) are cut down to their metadata before
/// they are shared.
class metadata_lister_watcher final : public lister_watcher<partial_object_metadata> {
public:
  explicit metadata_lister_watcher(metadata_api api, metadata_lister_watcher_options options = {})
      : api_(std::move(api)), opts_(std::move(options)) {}

  boost::asio::awaitable<list_outcome<partial_object_metadata>> list(const list_params& params) override {
    list_outcome<partial_object_metadata> out;
    list_params p = params;
    detail::default_selectors(p.label_selector, p.field_selector, opts_.label_selector, opts_.field_selector);
    auto op = api_.async_list(p, kube::use_awaitable);
    auto listed = co_await detail::capture_error(std::move(op), out);
    if (!listed) {
      co_return out;
    }
    auto& page = *listed;
    const bool whole = !(page.kind && *page.kind == "PartialObjectMetadataList");
    out.result.items.reserve(page.items.size());
    for (auto& item : page.items) {
      if (item.name().empty()) {
        out.ec = client_errc::decode_error;
        out.diag.set_client_message("list " + api_.resource().resource + ": an item has no metadata.name");
        out.result = {};
        co_return out;
      }
      detail::prepare_metadata(item, whole, opts_.strip_managed_fields);
      out.result.items.push_back(std::make_shared<const partial_object_metadata>(std::move(item)));
    }
    if (page.metadata) {
      if (page.metadata->resource_version) out.result.resource_version = std::move(*page.metadata->resource_version);
      if (page.metadata->continue_) out.result.continue_token = std::move(*page.metadata->continue_);
    }
    co_return out;
  }

  boost::asio::awaitable<watch_outcome<partial_object_metadata>> watch(const watch_params& params) override {
    watch_outcome<partial_object_metadata> out;
    watch_params p = params;
    detail::default_selectors(p.label_selector, p.field_selector, opts_.label_selector, opts_.field_selector);
    auto op = api_.async_watch(p, kube::use_awaitable);
    auto s = co_await detail::capture_error(std::move(op), out);
    if (!s) {
      co_return out;
    }
    out.stream = std::make_unique<detail::metadata_event_stream>(std::move(*s), "watch " + api_.resource().resource,
                                                                 opts_.strip_managed_fields);
    co_return out;
  }

  /// The client underneath.
  [[nodiscard]] const metadata_api& api() const noexcept { return api_; }

private:
  metadata_api api_;
  metadata_lister_watcher_options opts_;
};

} // namespace kube::informer

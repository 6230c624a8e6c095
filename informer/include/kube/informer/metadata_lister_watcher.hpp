#pragma once

// lister_watcher over the metadata-only client: the metadata
// (k8s::meta::v1::PartialObjectMetadata) of one resource's objects, in one
// namespace or all. Needs kube::k8s (the generated meta/v1 types).

#include <kube/informer/lister_watcher.hpp>
#include <kube/informer/typed_lister_watcher.hpp>

#include <kube/dynamic/metadata_api.hpp>

#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace kube::informer {

/// Options of metadata_lister_watcher.
struct metadata_lister_watcher_params {
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

/// Metadata objects need a name (their kind is PartialObjectMetadata, or the
/// resource's own when a server sent whole objects).
inline error_code check_metadata_object(const partial_object_metadata& obj, const object_origin& from,
                                        diagnostics& diag) {
  if (!obj.name().empty()) return {};
  diag.set_client_message(from.describe() + ": the object has no metadata.name");
  return client_errc::decode_error;
}

inline object_policy<partial_object_metadata> metadata_policy(bool strip_managed) {
  return {
      &check_metadata_object,
      [](partial_object_metadata& obj, bool strip) { prepare_metadata(obj, !is_partial_object_metadata(obj), strip); },
      strip_managed};
}

}  // namespace detail

/// list/watch through a kube::metadata_api (its namespace, or all
/// namespaces / cluster-wide when it has none): informers whose cache holds
/// only metadata. Errors keep the client's codes and diagnostics; an object
/// without metadata.name is an error event (the Reflector reports it to the
/// watch-error hook and relists). Objects a server sent whole (it ignored
/// the PartialObjectMetadata request) are cut down to their metadata before
/// they are shared.
class metadata_lister_watcher final : public lister_watcher<partial_object_metadata> {
public:
  explicit metadata_lister_watcher(metadata_api api, metadata_lister_watcher_params options = {})
      : api_(std::move(api)),
        opts_(std::move(options)) {}

  boost::asio::awaitable<list_outcome<partial_object_metadata>> list(const list_params& params) override {
    using outcome = list_outcome<partial_object_metadata>;
    return detail::list_or_watch<outcome>(
        params, opts_, [this](const list_params& p, auto token) { return api_.async_list_shared(p, std::move(token)); },
        [this](shared_list<partial_object_metadata>& page, outcome& out) {
          detail::share_page(page, out, "list " + api_.resource().resource,
                             detail::metadata_policy(opts_.strip_managed_fields));
        });
  }

  boost::asio::awaitable<watch_outcome<partial_object_metadata>> watch(const watch_params& params) override {
    using outcome = watch_outcome<partial_object_metadata>;
    return detail::list_or_watch<outcome>(
        params, opts_, [this](const watch_params& p, auto token) { return api_.async_watch(p, std::move(token)); },
        [this](typed_watch_stream<partial_object_metadata>& s, outcome& out) {
          out.stream = std::make_unique<detail::typed_event_stream<partial_object_metadata>>(
              std::move(s), "watch " + api_.resource().resource, detail::metadata_policy(opts_.strip_managed_fields));
        });
  }

  /// The client underneath.
  [[nodiscard]] const metadata_api& api() const noexcept { return api_; }

private:
  metadata_api api_;
  metadata_lister_watcher_params opts_;
};

}  // namespace kube::informer

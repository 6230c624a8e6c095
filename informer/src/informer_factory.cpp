// The factory's dynamic and metadata informers, compiled once here: as
// inline members of the header they made every TU that includes
// informer_factory.hpp instantiate the informer machinery for
// kube::unstructured and PartialObjectMetadata (2.5 of 14 CPU s of a small
// controller's TU), used or not.
#include <kube/informer/informer_factory.hpp>
#include <kube/informer/dynamic_lister_watcher.hpp>
#include <kube/informer/metadata_lister_watcher.hpp>

namespace kube::informer {

std::shared_ptr<shared_index_informer<unstructured>> informer_factory::for_resource(const group_version_resource& gvr,
                                                                                    const std::string& expected_kind) {
  const auto key = "dynamic:" + gvr.str();
  return informer<unstructured>(key, [&]() {
    auto o = params_for<unstructured>(gvr);
    if (opts_.strip_managed_fields) {
      o.transform = strip_managed_fields();
    }
    auto lw = std::make_shared<dynamic_lister_watcher>(
        dynamic_api(client_, gvr, opts_.namespace_name),
        dynamic_lister_watcher_params{expected_kind, opts_.label_selector, {}});
    return std::pair{std::shared_ptr<lister_watcher<unstructured>>(std::move(lw)), std::move(o)};
  });
}

std::shared_ptr<shared_index_informer<partial_object_metadata>>
informer_factory::for_metadata(const group_version_resource& gvr) {
  const auto key = "metadata:" + gvr.str();
  return informer<partial_object_metadata>(key, [&]() {
    auto o = params_for<partial_object_metadata>(gvr);
    metadata_lister_watcher_params lo;
    lo.label_selector = opts_.label_selector;
    lo.strip_managed_fields = opts_.strip_managed_fields;
    auto lw =
        std::make_shared<metadata_lister_watcher>(metadata_api(client_, gvr, opts_.namespace_name), std::move(lo));
    return std::pair{std::shared_ptr<lister_watcher<partial_object_metadata>>(std::move(lw)), std::move(o)};
  });
}

}  // namespace kube::informer

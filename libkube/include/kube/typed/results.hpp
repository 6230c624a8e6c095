#pragma once

// The values typed operations complete with besides the objects themselves:
// a Status (api_status), a delete's answer (delete_result), and a list
// decoded into shared pointers (shared_list). Used by kube::api<T>
// (kube/typed/api.hpp) and the dynamic and metadata clients.

#include <kube/codec/codec.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kube {

/// A metav1.Status as the server returns it for some deletes and for
/// evictions ("status": "Success"/"Failure", reason, message, code).
struct api_status {
  std::string status;  ///< "Success" or "Failure"
  std::string reason;  ///< e.g. "NotFound"; empty on success
  std::string message;
  int code = 0;              ///< HTTP code the server put in the Status
  std::string details_name;  ///< details.name, when present
  std::string details_uid;   ///< details.uid, when present
};
/// Codec of api_status (ADL, like generated types). Unknown members are ignored.
void decode(const boost::json::value& in, api_status& out, const json_path& at);
void encode(const api_status& in, boost::json::value& out);

/// The answer to a DELETE: the server returns the object (still present with
/// a deletionTimestamp while finalizers or graceful deletion run, or its
/// final state) or a Status. Exactly one of the two is set on success.
template <class O>
struct delete_result {
  std::optional<O> object;
  std::optional<api_status> status;
};

/// One list answer with each item decoded straight into its own
/// std::shared_ptr, as an informer caches them (api<T>::async_list_shared).
/// No std::vector<T> of the whole list is ever built: a 10,000-pod list
/// would need 6 MB for it, which, freed after the items were moved out,
/// stays as a hole in the heap below the cached objects.
template <class T>
struct shared_list {
  std::vector<std::shared_ptr<T>> items;
  std::string resource_version;                      ///< metadata.resourceVersion
  std::string continue_token;                        ///< metadata.continue; empty on the last page
  std::optional<std::int64_t> remaining_item_count;  ///< metadata.remainingItemCount
};

}  // namespace kube

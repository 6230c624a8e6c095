#pragma once

#include <kube/rest/client.hpp>
#include <kube/detail/default_options.hpp>
#include <kube/discovery/group_version_resource.hpp>
#include <kube/rest/list_params.hpp>
#include <kube/dynamic/unstructured.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

namespace kube {

namespace detail {
struct dynamic_target {
  client c;
  group_version_resource gvr;
  std::string namespace_name;
};
using dyn = std::shared_ptr<const dynamic_target>;
void dynamic_get(dyn t, std::string name, std::string subresource, completion<unstructured> h);
void dynamic_list(dyn t, list_params p, bool all_pages, completion<unstructured_list> h);
void dynamic_watch(dyn t, watch_params p, completion<watch_stream> h);
void dynamic_create(dyn t, unstructured obj, write_params p, completion<unstructured> h);
void dynamic_replace(dyn t, unstructured obj, std::string subresource, write_params p, completion<unstructured> h);
void dynamic_patch(dyn t, std::string name, patch_type type, std::string body, std::string subresource, patch_params p,
                   completion<unstructured> h);
void dynamic_delete(dyn t, std::string name, delete_params p, completion<unstructured> h);
void dynamic_delete_collection(dyn t, list_params lp, delete_params dp, completion<unstructured> h);
}  // namespace detail

/// The dynamic client for one resource (group/version/resource), in one
/// namespace or cluster-wide: get, list (one page or all pages), watch,
/// create, replace (and /status), patch (JSON, merge, strategic merge,
/// server-side apply), delete, delete_collection — on kube::unstructured.
///
/// Every async_xxx is an Asio initiating function with completion signature
/// void(error_code, T); see kube::client for tokens, cancellation and
/// executors (cancellation is per operation, terminal only, completing with
/// operation_aborted; async_list_all stops at the page in flight).
///
/// Errors: kube.api codes with the server's Status as diagnostics;
/// client_errc::decode_error when an answer is not the JSON object expected;
/// client_errc::invalid_config, before any request, for an empty name in
/// replace/patch/delete or an apply without patch_params::field_manager.
/// Messages of these two name the operation, resource, namespace and object
/// (`get configmaps in namespace demo "x"`); others are kube::client's.
///
/// Parameters: names and bodies are std::string_view, option structs are
/// taken by const reference and default to a static object — so a call like
/// `co_await api.async_get("x")` creates no temporary std::string. This
/// matters with g++ 12, which miscompiles class temporaries holding strings
/// that are passed directly as arguments inside a co_await expression (the
/// string's storage is freed at a wrong address). With g++ 12, name option
/// structs before co_await instead of writing `co_await f(list_params{...})`.
///
/// An empty namespace means cluster-scoped resources, or all namespaces for
/// list/watch of namespaced ones. Thread safety: like kube::client (copies
/// are cheap and share the client).
class dynamic_api : public detail::default_options<dynamic_api> {
  using options = detail::default_options<dynamic_api>;

public:
  dynamic_api(client c, group_version_resource gvr, std::string namespace_name = {})
      : t_(std::make_shared<const detail::dynamic_target>(
            detail::dynamic_target{std::move(c), std::move(gvr), std::move(namespace_name)})) {}

  [[nodiscard]] const group_version_resource& resource() const noexcept { return t_->gvr; }
  [[nodiscard]] const std::string& namespace_name() const noexcept { return t_->namespace_name; }

  // Token-only overloads: `async_list(token)`, `async_create(obj, token)` ...
  using options::async_list, options::async_list_all, options::async_watch, options::async_create,
      options::async_replace, options::async_replace_status, options::async_patch, options::async_delete;

  template <class Token = use_awaitable_t>
  auto async_get(std::string_view name, Token&& token = {}) {
    return detail::initiate<unstructured>(
        [t = t_, name = std::string(name)](detail::completion<unstructured> h) mutable {
          detail::dynamic_get(std::move(t), std::move(name), {}, std::move(h));
        },
        std::forward<Token>(token));
  }

  /// One page: items, resourceVersion and the continue token.
  template <class Token = use_awaitable_t>
  auto async_list(const list_params& params = defaults<list_params>, Token&& token = {}) {
    return detail::initiate<unstructured_list>(
        [t = t_, p = params](detail::completion<unstructured_list> h) mutable {
          detail::dynamic_list(std::move(t), std::move(p), false, std::move(h));
        },
        std::forward<Token>(token));
  }

  /// Every page, following continue tokens (page size params.limit, default
  /// 500). If a continue token expires mid-way (410), falls back to one full
  /// list, as client-go's pager does. The result's resource_version is the
  /// first page's (all pages are one consistent snapshot).
  template <class Token = use_awaitable_t>
  auto async_list_all(const list_params& params = defaults<list_params>, Token&& token = {}) {
    return detail::initiate<unstructured_list>(
        [t = t_, p = params](detail::completion<unstructured_list> h) mutable {
          detail::dynamic_list(std::move(t), std::move(p), true, std::move(h));
        },
        std::forward<Token>(token));
  }

  template <class Token = use_awaitable_t>
  auto async_watch(const watch_params& params = defaults<watch_params>, Token&& token = {}) {
    return detail::initiate<watch_stream>(
        [t = t_, p = params](detail::completion<watch_stream> h) mutable {
          detail::dynamic_watch(std::move(t), std::move(p), std::move(h));
        },
        std::forward<Token>(token));
  }

  template <class Token = use_awaitable_t>
  auto async_create(const unstructured& obj, const write_params& params = defaults<write_params>, Token&& token = {}) {
    return detail::initiate<unstructured>(
        [t = t_, o = obj, p = params](detail::completion<unstructured> h) mutable {
          detail::dynamic_create(std::move(t), std::move(o), std::move(p), std::move(h));
        },
        std::forward<Token>(token));
  }

  /// PUT: the object's metadata.name names the target; metadata.resourceVersion
  /// makes it conditional (conflict when someone else wrote first).
  template <class Token = use_awaitable_t>
  auto async_replace(const unstructured& obj, const write_params& params = defaults<write_params>, Token&& token = {}) {
    return detail::initiate<unstructured>(
        [t = t_, o = obj, p = params](detail::completion<unstructured> h) mutable {
          detail::dynamic_replace(std::move(t), std::move(o), {}, std::move(p), std::move(h));
        },
        std::forward<Token>(token));
  }

  template <class Token = use_awaitable_t>
  auto async_replace_status(const unstructured& obj, const write_params& params = defaults<write_params>,
                            Token&& token = {}) {
    return detail::initiate<unstructured>(
        [t = t_, o = obj, p = params](detail::completion<unstructured> h) mutable {
          detail::dynamic_replace(std::move(t), std::move(o), "status", std::move(p), std::move(h));
        },
        std::forward<Token>(token));
  }

  /// PATCH with a body in the given format (for apply: the object as JSON).
  template <class Token = use_awaitable_t>
  auto async_patch(std::string_view name, patch_type type, std::string_view body,
                   const patch_params& params = defaults<patch_params>, Token&& token = {}) {
    return detail::initiate<unstructured>(
        [t = t_, n = std::string(name), type, b = std::string(body),
         p = params](detail::completion<unstructured> h) mutable {
          detail::dynamic_patch(std::move(t), std::move(n), type, std::move(b), {}, std::move(p), std::move(h));
        },
        std::forward<Token>(token));
  }

  /// DELETE; completes with the object as the server returned it (still
  /// present with a deletionTimestamp while finalizers run), or a Status.
  template <class Token = use_awaitable_t>
  auto async_delete(std::string_view name, const delete_params& params = defaults<delete_params>, Token&& token = {}) {
    return detail::initiate<unstructured>(
        [t = t_, n = std::string(name), p = params](detail::completion<unstructured> h) mutable {
          detail::dynamic_delete(std::move(t), std::move(n), std::move(p), std::move(h));
        },
        std::forward<Token>(token));
  }

  template <class Token = use_awaitable_t>
  auto async_delete_collection(const list_params& selector = defaults<list_params>,
                               const delete_params& params = defaults<delete_params>, Token&& token = {}) {
    return detail::initiate<unstructured>(
        [t = t_, s = selector, p = params](detail::completion<unstructured> h) mutable {
          detail::dynamic_delete_collection(std::move(t), std::move(s), std::move(p), std::move(h));
        },
        std::forward<Token>(token));
  }

private:
  std::shared_ptr<const detail::dynamic_target> t_;
};

}  // namespace kube

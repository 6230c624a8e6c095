#pragma once

// Internal: the operations kube::api<T> and kube::metadata_api share, written
// once over the compiled typed operations (src/typed/api.cpp). Included by
// <kube/typed/api.hpp> and <kube/dynamic/metadata_api.hpp>.

#include <kube/detail/initiate.hpp>
#include <kube/detail/typed_core.hpp>
#include <kube/rest/list_params.hpp>
#include <kube/typed/results.hpp>
#include <kube/typed/typed_watch.hpp>
#include <kube/watch/watch_stream.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace kube::detail {

/// Get, list (one page, every page, shared items), watch, patch and delete
/// of a client whose objects are T and whose pages are List. The client
/// (kube::api<T>, kube::metadata_api) derives from it and from
/// default_options, and brings the names of both in with `using`. Tokens,
/// errors and thread safety are as documented on kube::api<T>.
template <class T, class List>
class typed_operations {
public:
  /// Empty: cluster-scoped objects, or all namespaces for list and watch.
  [[nodiscard]] const std::string& namespace_name() const noexcept { return t_->namespace_name; }
  [[nodiscard]] const client& get_client() const noexcept { return t_->c; }

  /// GET one object. Completion: void(error_code, T).
  template <class Token = use_awaitable_t>
  auto async_get(std::string_view name, Token&& token = {}) {
    return typed_initiate<T>(
        [t = t_, n = std::string(name)](std::shared_ptr<T> out, typed_completion h) mutable {
          typed_get(std::move(t), std::move(n), {}, make_decode_slot(std::move(out)), std::move(h));
        },
        std::forward<Token>(token));
  }

  /// One page (params.limit / continue_token); the list's metadata carries
  /// resourceVersion and the continue token of the next page.
  /// Completion: void(error_code, List).
  template <class Token = use_awaitable_t>
  auto async_list(const list_params& params = defaults<list_params>, Token&& token = {}) {
    return list_impl(params, false, std::forward<Token>(token));
  }

  /// Every page, following continue tokens (page size params.limit, default
  /// 500); each page is decoded as it arrives. If a continue token expires
  /// (410), starts over with one unpaginated list, as client-go's pager.
  /// The result's metadata is the first page's without continue/remaining
  /// count (all pages are one consistent snapshot at that resourceVersion).
  template <class Token = use_awaitable_t>
  auto async_list_all(const list_params& params = defaults<list_params>, Token&& token = {}) {
    return list_impl(params, true, std::forward<Token>(token));
  }

  /// Like async_list (one page), but each item is decoded straight into its
  /// own std::shared_ptr<T> and no List is built (see shared_list): for
  /// callers that keep the items shared, as informers do.
  /// Completion: void(error_code, shared_list<T>).
  template <class Token = use_awaitable_t>
  auto async_list_shared(const list_params& params = defaults<list_params>, Token&& token = {}) {
    return typed_initiate<shared_list<T>>(
        [t = t_, p = params](std::shared_ptr<shared_list<T>> out, typed_completion h) mutable {
          typed_list(std::move(t), std::move(p), false, make_shared_list_slot<T>(std::move(out)), std::move(h));
        },
        std::forward<Token>(token));
  }

  /// Opens a watch (see typed_watch_stream). A refused watch (410 for a
  /// too old resourceVersion, 403) fails here with the server's Status.
  /// Completion: void(error_code, typed_watch_stream<T>).
  template <class Token = use_awaitable_t>
  auto async_watch(const watch_params& params = defaults<watch_params>, Token&& token = {}) {
    return initiate<typed_watch_stream<T>>(
        [t = t_, p = params](completion<typed_watch_stream<T>> h) mutable {
          auto raw = std::make_shared<watch_stream>();
          auto keep = raw;
          auto target = t;
          typed_completion done(watch_deliver{{std::move(h)}, std::move(target), std::move(raw)});
          typed_watch_open(std::move(t), std::move(p), std::move(keep), std::move(done));
        },
        std::forward<Token>(token));
  }

  /// PATCH with a body in the given format: patch_type::json (RFC 6902
  /// array), merge (RFC 7386), strategic_merge (built-in kinds only), or
  /// apply (a partial object as JSON). Completion: void(error_code, T).
  template <class Token = use_awaitable_t>
  auto async_patch(std::string_view name, patch_type type, std::string_view body,
                   const patch_params& params = defaults<patch_params>, Token&& token = {}) {
    return patch_impl<T>(name, type, std::string(body), {}, params, std::forward<Token>(token));
  }

  /// DELETE. Completion: void(error_code, delete_result<T>) holding what the
  /// server answered: the object when the deletion is not immediate (still
  /// present with a deletionTimestamp while finalizers, foreground
  /// propagation or graceful termination run) or when the kind's registry
  /// returns deleted objects; otherwise a Status "Success" whose details
  /// name the object. Preconditions (UID, resourceVersion) that do not hold
  /// fail with api_errc::conflict; a dry run deletes nothing.
  template <class Token = use_awaitable_t>
  auto async_delete(std::string_view name, const delete_params& params = defaults<delete_params>, Token&& token = {}) {
    return typed_initiate<delete_result<T>>(
        [t = t_, n = std::string(name), p = params](std::shared_ptr<delete_result<T>> out, typed_completion h) mutable {
          auto slot = make_delete_slot<T>(std::move(out), t->kind);  // the slot keeps a copy of the kind
          typed_delete(std::move(t), std::move(n), std::move(p), std::move(slot), std::move(h));
        },
        std::forward<Token>(token));
  }

protected:
  explicit typed_operations(typed_ptr t)
      : t_(std::move(t)) {}

  typed_ptr t_;

  template <class R, class Token>
  auto patch_impl(std::string_view name, patch_type type, std::string body, std::string_view subresource,
                  const patch_params& params, Token&& token) {
    return typed_initiate<R>(
        [t = t_, n = std::string(name), type, b = std::move(body), s = std::string(subresource),
         p = params](std::shared_ptr<R> out, typed_completion h) mutable {
          typed_patch(std::move(t), std::move(n), type, std::move(b), std::move(s), std::move(p),
                      make_decode_slot(std::move(out)), std::move(h));
        },
        std::forward<Token>(token));
  }

private:
  // Completes with the opened stream wrapped as typed_watch_stream<T>.
  struct watch_deliver : handler_wrapper<completion<typed_watch_stream<T>>> {
    typed_ptr t;
    std::shared_ptr<watch_stream> raw;
    void operator()(error_code ec, diagnostics diag, typed_done) {
      if (ec) {
        std::move(this->handler)(ec, std::move(diag), typed_watch_stream<T>{});
      } else {
        std::move(this->handler)(ec, std::move(diag), typed_watch_stream<T>(std::move(t), std::move(*raw)));
      }
    }
  };

  template <class Token>
  auto list_impl(const list_params& params, bool all, Token&& token) {
    return typed_initiate<List>(
        [t = t_, p = params, all](std::shared_ptr<List> out, typed_completion h) mutable {
          typed_list(std::move(t), std::move(p), all, make_list_slot(std::move(out)), std::move(h));
        },
        std::forward<Token>(token));
  }
};

}  // namespace kube::detail

#pragma once

// Internal: the token-only overloads of the clients' operations, written
// once for kube::api<T>, kube::dynamic_api and kube::metadata_api.

#include <kube/rest/list_params.hpp>

#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace kube::detail {

/// `async_list(token)`, `async_create(obj, token)` ...: each calls the
/// client's full operation with the default options (no temporary options
/// object is created). A client derives from default_options<itself> and
/// brings in, with `using`, the names it has (its own declarations would
/// hide the base's otherwise).
template <class Client>
class default_options {
  template <class Token, class Params>
  static constexpr bool is_token = !std::is_convertible_v<Token, const Params&>;

  Client& self() noexcept { return static_cast<Client&>(*this); }

public:
  template <class Token>
    requires is_token<Token, list_params>
  auto async_list(Token&& token) { return self().async_list(defaults<list_params>, std::forward<Token>(token)); }
  template <class Token>
    requires is_token<Token, list_params>
  auto async_list_all(Token&& token) {
    return self().async_list_all(defaults<list_params>, std::forward<Token>(token));
  }
  template <class Token>
    requires is_token<Token, list_params>
  auto async_list_shared(Token&& token) {
    return self().async_list_shared(defaults<list_params>, std::forward<Token>(token));
  }
  template <class Token>
    requires is_token<Token, watch_params>
  auto async_watch(Token&& token) { return self().async_watch(defaults<watch_params>, std::forward<Token>(token)); }
  template <class Object, class Token>
    requires is_token<Token, write_params>
  auto async_create(const Object& obj, Token&& token) {
    return self().async_create(obj, defaults<write_params>, std::forward<Token>(token));
  }
  template <class Object, class Token>
    requires is_token<Token, write_params>
  auto async_replace(const Object& obj, Token&& token) {
    return self().async_replace(obj, defaults<write_params>, std::forward<Token>(token));
  }
  template <class Object, class Token>
    requires is_token<Token, write_params>
  auto async_replace_status(const Object& obj, Token&& token) {
    return self().async_replace_status(obj, defaults<write_params>, std::forward<Token>(token));
  }
  template <class Object, class Token>
    requires is_token<Token, patch_params>
  auto async_apply(const Object& obj, Token&& token) {
    return self().async_apply(obj, defaults<patch_params>, std::forward<Token>(token));
  }
  template <class Token>
    requires is_token<Token, patch_params>
  auto async_patch(std::string_view name, patch_type type, std::string_view body, Token&& token) {
    return self().async_patch(name, type, body, defaults<patch_params>, std::forward<Token>(token));
  }
  template <class Token>
    requires is_token<Token, patch_params>
  auto async_patch_status(std::string_view name, patch_type type, std::string_view body, Token&& token) {
    return self().async_patch_status(name, type, body, defaults<patch_params>, std::forward<Token>(token));
  }
  template <class Token>
    requires is_token<Token, delete_params>
  auto async_delete(std::string_view name, Token&& token) {
    return self().async_delete(name, defaults<delete_params>, std::forward<Token>(token));
  }
  template <class Token>
    requires is_token<Token, delete_params>
  auto async_evict(std::string_view name, Token&& token) {
    return self().async_evict(name, defaults<delete_params>, std::forward<Token>(token));
  }
};

}  // namespace kube::detail

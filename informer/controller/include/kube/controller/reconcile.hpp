#pragma once

// What a reconcile receives and what it answers (controller-runtime's
// reconcile.Request / reconcile.Result, kube-rs's Action).
//
//   reconcile_result::done()                 forget the key's backoff; nothing queued
//   reconcile_result::requeue_after(30s)     forget the backoff; reconcile again in 30 s
//   reconcile_result::requeue()              reconcile again after the key's backoff
//                                            (rate limited, but not counted as an error)
//   reconcile_result::failed(ec, "why")      an error: rate-limited retry (5 ms, 10 ms, ...)
//   throw ...                                the same as failed(), with the exception's text
//
// Keys are client-go's "namespace/name" ("name" for cluster-scoped objects).

#include <kube/error.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace kube::controller {

/// What to do with a key after its reconcile.
class reconcile_result {
public:
  enum class action {
    done,           ///< success: forget the key's backoff
    requeue,        ///< success, but come back after the key's rate-limited backoff
    requeue_after,  ///< success: forget the backoff, come back after `delay()`
    error,          ///< failure: rate-limited retry
  };

  reconcile_result() = default;

  [[nodiscard]] static reconcile_result done() { return reconcile_result(action::done); }
  [[nodiscard]] static reconcile_result requeue() { return reconcile_result(action::requeue); }
  /// A delay <= 0 behaves as requeue() (controller-runtime does the same).
  [[nodiscard]] static reconcile_result requeue_after(std::chrono::steady_clock::duration d) {
    reconcile_result r(action::requeue_after);
    r.delay_ = d;
    return r;
  }
  [[nodiscard]] static reconcile_result failed(error_code ec, std::string message = {}) {
    reconcile_result r(action::error);
    r.ec_ = ec;
    r.message_ = std::move(message);
    return r;
  }

  [[nodiscard]] action what() const noexcept { return what_; }
  [[nodiscard]] std::chrono::steady_clock::duration delay() const noexcept { return delay_; }
  [[nodiscard]] const error_code& error() const noexcept { return ec_; }
  [[nodiscard]] const std::string& message() const noexcept { return message_; }

private:
  explicit reconcile_result(action a)
      : what_(a) {}
  action what_ = action::done;
  std::chrono::steady_clock::duration delay_{};
  error_code ec_{};
  std::string message_;
};

/// "done", "requeue", "requeue_after", "error".
[[nodiscard]] const char* to_string(reconcile_result::action a) noexcept;

/// A key split into namespace and name.
struct object_key {
  std::string namespace_;  ///< empty for cluster-scoped objects
  std::string name;

  /// "namespace/name", or "name" when the namespace is empty.
  [[nodiscard]] std::string str() const;
  friend bool operator==(const object_key&, const object_key&) = default;
};

/// Parses "namespace/name" or "name". Returns nullopt for anything else: an
/// empty key, an empty namespace or name around the '/', more than one '/'.
[[nodiscard]] std::optional<object_key> parse_key(std::string_view key);

/// What one reconcile of the primary type T receives.
template <class T>
struct reconcile_request {
  std::string key;         ///< "namespace/name" (or "name")
  std::string namespace_;  ///< from the key
  std::string name;        ///< from the key
  /// The object in the informer's cache when the reconcile started (shared,
  /// read-only; copy it to modify). Null: the object is gone (deleted, or
  /// never existed: e.g. a key enqueued by a mapping function).
  std::shared_ptr<const T> object;

  [[nodiscard]] bool gone() const noexcept { return !object; }
};

}  // namespace kube::controller

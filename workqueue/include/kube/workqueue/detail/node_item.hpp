#pragma once

// How a queue node keeps its item (queue_impl's node derives from one of
// these).
//
// In general the node holds the item itself, and compares it with the
// user's KeyEqual.
//
// A std::string key hashed and compared by the queue itself
// (own_string_hash) of up to 32 bytes is kept in the node, in the 32 bytes a
// std::string object takes; a longer one is kept as a std::string (moved in
// when the caller gives it up). Object keys ("namespace/name") are mostly
// longer than std::string's 15-byte small buffer and short enough for 32,
// so a lookup that reaches the node finds the bytes in the node's cache
// line instead of loading a separate heap block after it (re-adding a
// queued key, dedup_hot: three dependent loads become two), and retiring a
// node frees nothing. A worker still gets its own std::string.
//
// The node's own small fields follow the 33 bytes used here, in the base's
// tail padding, so a node stays one 64-byte line (queue_impl asserts it).

#include <kube/workqueue/detail/hashed_key.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>

namespace kube::workqueue::detail {

/// The general case: the item itself.
template <class T, class Hash, class KeyEqual, bool Inline = own_string_hash<T, Hash, KeyEqual>>
class node_item {
public:
  /// What lookups compare a node with.
  using view_type = const T&;

  explicit node_item(const T& item)
      : item_(item) {}
  explicit node_item(T&& item)
      : item_(std::move(item)) {}

  [[nodiscard]] view_type view() const noexcept { return item_; }
  [[nodiscard]] bool same(view_type other) const { return KeyEqual{}(item_, other); }
  /// A worker's copy.
  [[nodiscard]] T copy() const { return item_; }
  void prefetch() const noexcept {}

private:
  T item_;
};

/// A std::string with the queue's own hash and equality: up to 32 bytes
/// inline.
template <class Hash, class KeyEqual>
class node_item<std::string, Hash, KeyEqual, true> {
public:
  using view_type = std::string_view;
  static constexpr std::size_t inline_max = 32;

  explicit node_item(const std::string& item) {
    if (item.size() <= inline_max) {
      set_inline(item.data(), item.size());
    } else {
      ::new (static_cast<void*>(&heap_)) std::string(item);
      len_ = on_heap;
    }
  }

  explicit node_item(std::string&& item) {
    if (item.size() <= inline_max) {
      set_inline(item.data(), item.size());
    } else {
      ::new (static_cast<void*>(&heap_)) std::string(std::move(item));
      len_ = on_heap;
    }
  }

  node_item(const node_item&) = delete;
  node_item& operator=(const node_item&) = delete;

  ~node_item() {
    if (len_ == on_heap) std::destroy_at(&heap_);
  }

  [[nodiscard]] view_type view() const noexcept {
    return len_ == on_heap ? std::string_view(heap_) : std::string_view(inline_, len_);
  }

  [[nodiscard]] bool same(view_type other) const noexcept {
    const view_type mine = view();
    return same_bytes(mine.data(), mine.size(), other.data(), other.size());
  }

  // A key too long for std::string's small buffer is copied as all 32
  // inline bytes (memcpy: the bytes past the key may be indeterminate, and
  // are cut off), then cut to its length: a copy of a size known at
  // compile time is two vector moves, where g++ makes the copy of 16-32
  // bytes of unknown length a `rep movsq`, which costs ~30 cycles to start
  // (distinct_2w: 124 -> 117 ns/op).
  [[nodiscard]] std::string copy() const {
    if (len_ == on_heap) return heap_;
    if (len_ <= small_max) return std::string(inline_, len_);
    std::string s(inline_, inline_max);
    s.resize(len_);
    return s;
  }

  void prefetch() const noexcept {
    if (len_ == on_heap) __builtin_prefetch(heap_.data());
  }

private:
  static constexpr std::uint8_t on_heap = 0xff;
  // No heap block up to this (15 in libstdc++). Read once at start-up:
  // std::string's capacity is not a constant expression with every compiler
  // (clang 14 over libstdc++ 12).
  static inline const std::size_t small_max = std::string{}.capacity();

  void set_inline(const char* p, std::size_t n) noexcept {
    if (n != 0) std::memcpy(inline_, p, n);
    len_ = static_cast<std::uint8_t>(n);
  }

  union {
    char inline_[inline_max];
    std::string heap_;
  };
  std::uint8_t len_;  // bytes in inline_, or on_heap
};

}  // namespace kube::workqueue::detail

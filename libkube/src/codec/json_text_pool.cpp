#include "codec/json_text_pool.hpp"

#include <kube/base/hash_bytes.hpp>

#include <mutex>
#include <unordered_map>

namespace kube::detail {
namespace {

// A text and its hash, computed once per call: the texts are kilobytes of
// managedFields, and a miss looks its text up twice and inserts it.
struct text_key {
  std::string_view text;
  std::size_t hash;
  bool operator==(const text_key& o) const noexcept { return hash == o.hash && text == o.text; }
};
struct text_key_hash {
  std::size_t operator()(const text_key& k) const noexcept { return k.hash; }
};
// The library's byte hash (kube/base/hash_bytes.hpp): std::hash, one
// 8-byte step after another, took 3% of an informer's instructions per
// update event (two managedFields texts of 1-2 KB each).
text_key key_of(std::string_view text) noexcept { return {text, kube::base::hash_bytes(text.data(), text.size())}; }

struct entry {
  const std::string* text;  // identifies the holder that may erase this entry
  std::weak_ptr<const std::string> shared;
};

struct pool {
  std::mutex m;
  // Keys view the text of their own entry.
  std::unordered_map<text_key, entry, text_key_hash> texts;
};

pool& the_pool() {
  static auto* p = new pool;  // never destroyed: raw_json values in other statics may outlive any order
  return *p;
}

// Runs when the last raw_json holding `s` lets go. A racing call may have
// replaced the entry already (it found it expired): only our own is erased.
struct release_text {
  std::size_t hash;  // of *s, kept from when it was made
  void operator()(const std::string* s) const noexcept {
    auto& p = the_pool();
    {
      std::lock_guard lock(p.m);
      const auto it = p.texts.find(text_key{*s, hash});
      if (it != p.texts.end() && it->second.text == s) p.texts.erase(it);
    }
    delete s;
  }
};

std::shared_ptr<const std::string> find_locked(pool& p, const text_key& k) {
  const auto it = p.texts.find(k);
  return it != p.texts.end() ? it->second.shared.lock() : nullptr;
}

}  // namespace

std::shared_ptr<const std::string> find_json_text(std::string_view text) {
  auto& p = the_pool();
  const auto k = key_of(text);
  std::lock_guard lock(p.m);
  return find_locked(p, k);
}

std::shared_ptr<const std::string> shared_json_text(std::string_view text) {
  auto& p = the_pool();
  const auto k = key_of(text);
  {
    std::lock_guard lock(p.m);
    if (auto live = find_locked(p, k)) return live;
  }
  // Made outside the lock: should making it throw, the deleter runs and
  // takes the lock. Declared before the guard, so that if another thread
  // added the same text meanwhile, it is released after the lock is.
  std::shared_ptr<const std::string> made(new std::string(text), release_text{k.hash});
  std::lock_guard lock(p.m);
  const auto it = p.texts.find(k);
  if (it != p.texts.end()) {
    if (auto live = it->second.shared.lock()) return live;
    p.texts.erase(it);  // its last holder is on the way out; that release finds nothing of its own to erase
  }
  p.texts.emplace(text_key{*made, k.hash}, entry{made.get(), made});
  return made;
}

}  // namespace kube::detail

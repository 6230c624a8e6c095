#include "codec/json_text_pool.hpp"

#include <mutex>
#include <unordered_map>

namespace kube::detail {
namespace {

struct entry {
  const std::string* text;  // identifies the holder that may erase this entry
  std::weak_ptr<const std::string> shared;
};

struct pool {
  std::mutex m;
  // Keys view the text of their own entry.
  std::unordered_map<std::string_view, entry> texts;
};

pool& the_pool() {
  static auto* p = new pool;  // never destroyed: raw_json values in other statics may outlive any order
  return *p;
}

// Runs when the last raw_json holding `s` lets go. A racing call may have
// replaced the entry already (it found it expired): only our own is erased.
struct release_text {
  void operator()(const std::string* s) const noexcept {
    auto& p = the_pool();
    {
      std::lock_guard lock(p.m);
      const auto it = p.texts.find(std::string_view(*s));
      if (it != p.texts.end() && it->second.text == s) p.texts.erase(it);
    }
    delete s;
  }
};

}  // namespace

std::shared_ptr<const std::string> find_json_text(std::string_view text) {
  auto& p = the_pool();
  std::lock_guard lock(p.m);
  const auto it = p.texts.find(text);
  return it != p.texts.end() ? it->second.shared.lock() : nullptr;
}

std::shared_ptr<const std::string> shared_json_text(std::string_view text) {
  if (auto live = find_json_text(text)) return live;
  auto& p = the_pool();
  // Made outside the lock: should making it throw, the deleter runs and
  // takes the lock. Declared before the guard, so that if another thread
  // added the same text meanwhile, it is released after the lock is.
  std::shared_ptr<const std::string> made(new std::string(text), release_text{});
  std::lock_guard lock(p.m);
  const auto it = p.texts.find(text);
  if (it != p.texts.end()) {
    if (auto live = it->second.shared.lock()) return live;
    p.texts.erase(it);  // its last holder is on the way out; that release finds nothing of its own to erase
  }
  p.texts.emplace(std::string_view(*made), entry{made.get(), made});
  return made;
}

}  // namespace kube::detail

#include "codec/json_text_pool.hpp"

#include <bit>
#include <cstdint>
#include <cstring>
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
std::uint64_t load64(const char* p) noexcept {
  std::uint64_t v = 0;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// One word into one lane: a bijection of the lane for any word.
std::uint64_t lane(std::uint64_t h, std::uint64_t word) noexcept {
  return std::rotl(h ^ word, 29) * 0x9E3779B97F4A7C15ULL;
}

// The pool's hash of a text: four independent lanes over 32 bytes a round,
// mixed at the end. std::hash (libstdc++'s Murmur, one 8-byte step after
// another) took 3% of an informer's instructions per update event, two
// managedFields texts of 1-2 KB each. A hit compares the whole text anyway,
// so the hash only has to spread the texts over the buckets.
std::size_t text_hash(std::string_view s) noexcept {
  const char* p = s.data();
  std::size_t n = s.size();
  std::uint64_t a = 0x243F6A8885A308D3ULL ^ n;
  std::uint64_t b = 0x13198A2E03707344ULL;
  std::uint64_t c = 0xA4093822299F31D0ULL;
  std::uint64_t d = 0x082EFA98EC4E6C89ULL;
  for (; n >= 32; p += 32, n -= 32) {
    a = lane(a, load64(p));
    b = lane(b, load64(p + 8));
    c = lane(c, load64(p + 16));
    d = lane(d, load64(p + 24));
  }
  for (; n >= 8; p += 8, n -= 8) a = lane(a, load64(p));
  std::uint64_t tail = 0;
  if (n > 0) std::memcpy(&tail, p, n);
  b = lane(b, tail);
  std::uint64_t h = a ^ std::rotl(b, 17) ^ std::rotl(c, 31) ^ std::rotl(d, 47);
  h ^= h >> 33;  // Murmur3's finalizer: every input bit reaches every output bit
  h *= 0xFF51AFD7ED558CCDULL;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ULL;
  h ^= h >> 33;
  return static_cast<std::size_t>(h);
}

text_key key_of(std::string_view text) noexcept { return {text, text_hash(text)}; }

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

#pragma once
// A small object with metadata accessors, so tests need no JSON.
#include <memory>
#include <string>
#include <vector>

namespace kube::informer::test {

struct thing {
  std::string ns;
  std::string nm;
  std::string rv;
  std::vector<std::string> colors;  // multi-value index input

  [[nodiscard]] std::string namespace_() const { return ns; }
  [[nodiscard]] std::string name() const { return nm; }
  [[nodiscard]] std::string resource_version() const { return rv; }
};

inline std::shared_ptr<const thing> make(std::string ns, std::string nm, std::string rv = "1",
                                         std::vector<std::string> colors = {}) {
  return std::make_shared<const thing>(thing{std::move(ns), std::move(nm), std::move(rv), std::move(colors)});
}

}  // namespace kube::informer::test

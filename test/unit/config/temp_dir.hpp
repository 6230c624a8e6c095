#pragma once

// A temporary directory for configuration tests, removed at scope exit.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <unistd.h>

namespace kube_test {

class temp_dir {
public:
  temp_dir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "kube-config-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  /// Writes `content` to `rel` (creating directories); returns the full path.
  std::string write(const std::string& rel, const std::string& content) const {
    const auto p = path_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }

private:
  std::filesystem::path path_;
};

}  // namespace kube_test

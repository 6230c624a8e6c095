// Helpers for configuration loading: file reads that name the file and field,
// Go-compatible path handling (clientcmd resolves paths with path/filepath).
// Base64 of the `*-data` fields is the codec's (codec/base64.hpp).

#include <kube/detail/config_files.hpp>
#include <kube/exception.hpp>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

namespace kube::detail {

void throw_config_error(client_errc code, std::string message) {
  throw kube::error(make_error_code(code), std::move(message));
}

namespace {

std::string prefix(std::string_view context) { return context.empty() ? std::string{} : std::string(context) + ": "; }

// errno is read right after the failing call; strerror's text ("No such file
// or directory") is what users know from the shell and from kubectl.
std::optional<std::string> read_impl(const std::string& path, std::string_view context, bool missing_ok) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    if (missing_ok && (e == ENOENT || e == ENOTDIR)) {
      return std::nullopt;
    }
    throw_config_error(client_errc::file_error, prefix(context) + path + ": " + std::strerror(e));
  }
  if (S_ISDIR(st.st_mode)) {
    throw_config_error(client_errc::file_error, prefix(context) + path + ": " + std::strerror(EISDIR));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int e = errno;
    throw_config_error(client_errc::file_error, prefix(context) + path + ": " + std::strerror(e != 0 ? e : EACCES));
  }
  std::string data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) {
    throw_config_error(client_errc::file_error, prefix(context) + path + ": read error");
  }
  return data;
}

}  // namespace

std::string read_config_file(const std::string& path, std::string_view context) {
  return *read_impl(path, context, false);
}

std::optional<std::string> read_config_file_if_exists(const std::string& path, std::string_view context) {
  return read_impl(path, context, true);
}

bool regular_file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

std::string clean_path(std::string_view path) {
  if (path.empty()) {
    return ".";
  }
  const bool rooted = path.front() == '/';
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < path.size()) {
    const std::size_t j = std::min(path.find('/', i), path.size());
    const std::string_view elem = path.substr(i, j - i);
    i = j + 1;
    if (elem.empty() || elem == ".") {
      continue;
    }
    if (elem == "..") {
      if (!out.empty() && out.back() != "..") {
        out.pop_back();
      } else if (!rooted) {
        out.push_back(elem);  // a relative path keeps leading ".."
      }                       // "/.." is "/"
      continue;
    }
    out.push_back(elem);
  }
  std::string r = rooted ? "/" : "";
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (k > 0) {
      r += '/';
    }
    r += out[k];
  }
  return r.empty() ? "." : r;
}

std::string join_path(std::string_view base, std::string_view rel) {
  if (base.empty()) {
    return rel.empty() ? std::string{} : clean_path(rel);
  }
  if (rel.empty()) {
    return clean_path(base);
  }
  std::string joined(base);
  joined += '/';
  joined += rel;
  return clean_path(joined);
}

std::string dir_path(std::string_view path) {
  const auto slash = path.rfind('/');
  if (slash == std::string_view::npos) {
    return ".";
  }
  return clean_path(path.substr(0, slash + 1));
}

std::string absolute_path(std::string_view path) {
  if (!path.empty() && path.front() == '/') {
    return clean_path(path);
  }
  std::array<char, 4096> buf{};
  if (::getcwd(buf.data(), buf.size()) == nullptr) {
    throw_config_error(client_errc::file_error,
                       "cannot determine the current directory: " + std::string(std::strerror(errno)));
  }
  return join_path(buf.data(), path);
}

std::optional<std::string> get_env(const char* name) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read once at load time
  if (v == nullptr) {
    return std::nullopt;
  }
  return std::string(v);
}

}  // namespace kube::detail

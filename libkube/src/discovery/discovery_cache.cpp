#include <kube/discovery/discovery_cache.hpp>

#include <boost/json.hpp>
#include <boost/url/parse.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <system_error>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kube {
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view format_tag = "kube.discovery-cache/v1";
constexpr std::string_view file_name = "kube-discovery.json";

// As client-go's disk cache: folders rwxr-x---, files rw-rw---- (the umask
// may take more away). The cache says which API groups and resources a
// server has; other users of the machine have no business reading it.
constexpr mode_t dir_mode = 0750;
constexpr mode_t file_mode = 0660;

// Creates `dir` and its missing parents with dir_mode; folders that exist
// keep their mode.
std::error_code make_dirs(const fs::path& dir) {
  std::error_code ec;
  if (dir.empty() || fs::is_directory(dir, ec)) return {};
  if (auto pec = make_dirs(dir.parent_path())) return pec;
  if (::mkdir(dir.c_str(), dir_mode) != 0 && errno != EEXIST) return {errno, std::generic_category()};
  return {};
}

// Writes `data` to a new file `path` (which must not exist) with file_mode.
bool write_new_file(const fs::path& path, std::string_view data) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, file_mode);
  if (fd < 0) return false;
  bool ok = true;
  while (ok && !data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) data.remove_prefix(static_cast<std::size_t>(n));
  }
  return ::close(fd) == 0 && ok;
}

std::string lower(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return r;
}

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

fs::path default_root() {
  if (const char* d = std::getenv("KUBECACHEDIR"); d && *d) return fs::path(d) / "discovery";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".kube" / "cache" / "discovery";
  return {};
}

}  // namespace

discovery_cache::discovery_cache(discovery_cache_params params)
    : root_(params.root.empty() ? default_root() : params.root),
      params_(std::move(params)) {}

std::chrono::system_clock::time_point discovery_cache::now() const {
  return params_.now ? params_.now() : std::chrono::system_clock::now();
}

std::optional<std::string> discovery_cache::canonical_server(std::string_view server_url) {
  auto u = boost::urls::parse_uri(server_url);
  if (!u) return std::nullopt;
  const auto scheme = lower(u->scheme());
  if ((scheme != "https" && scheme != "http") || !u->has_authority() || u->encoded_host().empty()) return std::nullopt;
  std::string port(u->port());
  if (port.empty()) port = scheme == "https" ? "443" : "80";
  std::string path(u->encoded_path());
  while (!path.empty() && path.back() == '/') path.pop_back();
  return scheme + "://" + lower(u->encoded_host()) + ":" + port + path;
}

fs::path discovery_cache::path_for(std::string_view server_url) const {
  if (root_.empty()) return {};
  const auto canon = canonical_server(server_url);
  if (!canon) return {};
  // "https://10.0.0.1:6443/k8s" -> "10.0.0.1_6443_k8s-<hash>": readable, and
  // no character that could climb out of root ('/', "..") survives.
  std::string name = canon->substr(canon->find("://") + 3);
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  if (!name.empty() && name.front() == '.') name.front() = '_';
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a(*canon)));
  return root_ / (name + "-" + hash) / std::string(file_name);
}

std::optional<discovery_document> discovery_cache::load(std::string_view server_url) const {
  const auto path = path_for(server_url);
  if (path.empty()) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string header;
  if (!std::getline(in, header)) return std::nullopt;
  const std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return std::nullopt;

  error_code ec;
  const auto hv = json::parse(header, ec);
  if (ec || !hv.is_object()) return std::nullopt;
  const auto& h = hv.as_object();
  const auto* format = h.if_contains("format");
  const auto* server = h.if_contains("server");
  const auto* fetched = h.if_contains("fetchedAt");
  if (!format || !format->is_string() || format->as_string() != format_tag) return std::nullopt;
  // Two URLs hashing alike must not read each other's entry.
  if (!server || !server->is_string() || server->as_string() != *canonical_server(server_url)) return std::nullopt;
  if (!fetched || !fetched->is_int64()) return std::nullopt;

  const auto fetched_at = std::chrono::system_clock::time_point(std::chrono::seconds(fetched->as_int64()));
  const auto t = now();
  if (fetched_at > t + std::chrono::minutes(1)) return std::nullopt;  // written "in the future": distrust
  if (t - fetched_at >= params_.ttl) return std::nullopt;

  std::vector<api_group> groups;
  diagnostics diag;
  if (discovery_document::parse_aggregated(body, path.string(), groups, diag)) return std::nullopt;
  discovery_document doc;
  doc.groups = std::move(groups);
  return doc;
}

error_code discovery_cache::store(std::string_view server_url, const discovery_document& doc, diagnostics& diag) const {
  if (root_.empty()) return {};  // disabled
  const auto path = path_for(server_url);
  if (path.empty()) {
    diag.set_client_message("discovery cache: server URL is not an absolute http(s) URL");
    return client_errc::invalid_config;
  }
  std::error_code fec = make_dirs(path.parent_path());
  if (fec) {
    diag.set_client_message("discovery cache: cannot create " + path.parent_path().string() + ": " + fec.message());
    return client_errc::file_error;
  }
  const auto stamp = std::chrono::duration_cast<std::chrono::seconds>(now().time_since_epoch()).count();
  const json::object header{{"format", format_tag}, {"server", *canonical_server(server_url)}, {"fetchedAt", stamp}};

  // Unique per process and call, so concurrent writers never share a temp file.
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const auto tmp = path.parent_path() /
                   (std::string(file_name) + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(rng()));
  if (!write_new_file(tmp, json::serialize(header) + '\n' + doc.to_json())) {
    diag.set_client_message("discovery cache: cannot write " + tmp.string() + ": " + std::strerror(errno));
    fs::remove(tmp, fec);
    return client_errc::file_error;
  }
  // No fsync: after a crash a torn entry only reads as corrupt, i.e. a miss.
  fs::rename(tmp, path, fec);
  if (fec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    diag.set_client_message("discovery cache: cannot rename " + tmp.string() + " to " + path.string() + ": " +
                            fec.message());
    return client_errc::file_error;
  }
  return {};
}

void discovery_cache::invalidate(std::string_view server_url) const {
  const auto path = path_for(server_url);
  if (path.empty()) return;
  std::error_code ignored;
  fs::remove(path, ignored);
}

}  // namespace kube

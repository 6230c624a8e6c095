#include "recorded_server.hpp"

#include <kube/discovery/discovery_cache.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <sys/stat.h>

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

struct temp_dir {
  fs::path path;
  temp_dir() {
    std::random_device rd;
    path = fs::temp_directory_path() / ("kube-discovery-cache-test-" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// A clock the test moves by hand.
struct manual_clock {
  std::chrono::system_clock::time_point t = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
  std::function<std::chrono::system_clock::time_point()> fn() {
    return [this] { return t; };
  }
};

const kube::discovery_document& sample_doc() {
  static const auto d = kube_test::discover(kube_test::server_mode::aggregated);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

constexpr const char* server = "https://127.0.0.1:6443";

}  // namespace

TEST_CASE("cache: a stored document reads back equal", "[discovery][cache]") {
  temp_dir dir;
  manual_clock clock;
  kube::discovery_cache cache({.root = dir.path, .now = clock.fn()});
  CHECK_FALSE(cache.load(server));
  kube::diagnostics diag;
  REQUIRE_FALSE(cache.store(server, sample_doc(), diag));
  const auto back = cache.load(server);
  REQUIRE(back);
  CHECK(*back == sample_doc());
  // No temporary file is left next to the entry.
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(cache.path_for(server).parent_path())) {
    (void)e;
    ++files;
  }
  CHECK(files == 1);
}

TEST_CASE("cache: folders and files are created rwxr-x--- and rw-rw----", "[discovery][cache]") {
  temp_dir dir;
  manual_clock clock;
  const auto root = dir.path / "a" / "b";  // two levels the cache creates itself
  kube::discovery_cache cache({.root = root, .now = clock.fn()});
  const mode_t old_mask = ::umask(0);  // so the modes seen are the ones asked for
  kube::diagnostics diag;
  const auto failed = cache.store(server, sample_doc(), diag);
  ::umask(old_mask);
  REQUIRE_FALSE(failed);
  const auto mode = [](const fs::path& p) { return fs::status(p).permissions() & fs::perms::all; };
  using fs::perms;
  const auto dir_mode = perms::owner_all | perms::group_read | perms::group_exec;
  for (auto p = cache.path_for(server).parent_path(); p != dir.path; p = p.parent_path()) {
    INFO(p);
    CHECK(mode(p) == dir_mode);
  }
  CHECK(mode(cache.path_for(server)) ==
        (perms::owner_read | perms::owner_write | perms::group_read | perms::group_write));
}

TEST_CASE("cache: entries expire after the TTL by the injected clock", "[discovery][cache]") {
  temp_dir dir;
  manual_clock clock;
  kube::discovery_cache cache({.root = dir.path, .ttl = 6h, .now = clock.fn()});
  kube::diagnostics diag;
  REQUIRE_FALSE(cache.store(server, sample_doc(), diag));
  clock.t += 6h - 1s;
  CHECK(cache.load(server));
  clock.t += 1s;
  CHECK_FALSE(cache.load(server));
  // A shorter TTL on the same files expires them sooner.
  kube::discovery_cache short_cache({.root = dir.path, .ttl = 10min, .now = clock.fn()});
  REQUIRE_FALSE(short_cache.store(server, sample_doc(), diag));
  clock.t += 9min;
  CHECK(short_cache.load(server));
  clock.t += 1min;
  CHECK_FALSE(short_cache.load(server));
}

TEST_CASE("cache: an entry dated in the future is not trusted", "[discovery][cache]") {
  temp_dir dir;
  manual_clock clock;
  kube::discovery_cache cache({.root = dir.path, .now = clock.fn()});
  kube::diagnostics diag;
  REQUIRE_FALSE(cache.store(server, sample_doc(), diag));
  clock.t -= 2h;  // the clock went back
  CHECK_FALSE(cache.load(server));
}

TEST_CASE("cache: corrupt or truncated entries are misses", "[discovery][cache]") {
  temp_dir dir;
  manual_clock clock;
  kube::discovery_cache cache({.root = dir.path, .now = clock.fn()});
  kube::diagnostics diag;
  REQUIRE_FALSE(cache.store(server, sample_doc(), diag));
  const auto path = cache.path_for(server);
  const auto good = slurp(path);
  REQUIRE(cache.load(server));
  for (const std::string& bad : {std::string("garbage"), good.substr(0, good.size() / 2), std::string(),
                                 good.substr(good.find('\n') + 1) /* no header */}) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bad;
    CHECK_FALSE(cache.load(server));
  }
  // Rewritten, it is good again.
  REQUIRE_FALSE(cache.store(server, sample_doc(), diag));
  CHECK(cache.load(server));
}

TEST_CASE("cache: entries are keyed by server and invalidate removes only that entry", "[discovery][cache]") {
  temp_dir dir;
  manual_clock clock;
  kube::discovery_cache cache({.root = dir.path, .now = clock.fn()});
  kube::diagnostics diag;
  REQUIRE_FALSE(cache.store(server, sample_doc(), diag));
  CHECK_FALSE(cache.load("https://127.0.0.1:6444"));
  CHECK_FALSE(cache.load("http://127.0.0.1:6443"));
  CHECK(cache.load("HTTPS://127.0.0.1:6443/"));  // same server, other spelling
  CHECK(cache.path_for("http://127.0.0.1:6443") != cache.path_for(server));
  kube::discovery_document other;
  other.groups.push_back({"only.example.com", "v1", {}});
  REQUIRE_FALSE(cache.store("https://other.example:443", other, diag));
  cache.invalidate(server);
  CHECK_FALSE(cache.load(server));
  REQUIRE(cache.load("https://other.example"));
  CHECK(cache.load("https://other.example")->groups.at(0).name == "only.example.com");
}

TEST_CASE("cache: no URL credential reaches the disk and paths stay under the root", "[discovery][cache]") {
  temp_dir dir;
  manual_clock clock;
  kube::discovery_cache cache({.root = dir.path, .now = clock.fn()});
  kube::diagnostics diag;
  const std::string url = "https://admin:s3cr3t-pw@10.0.0.1:6443/../../etc?token=t0k3n-value#frag";
  REQUIRE_FALSE(cache.store(url, sample_doc(), diag));
  const auto path = cache.path_for(url);
  CHECK(fs::weakly_canonical(path).string().rfind(fs::weakly_canonical(dir.path).string(), 0) == 0);
  for (const auto& e : fs::recursive_directory_iterator(dir.path)) {
    const auto name = e.path().string();
    CHECK(name.find("s3cr3t") == std::string::npos);
    CHECK(name.find("t0k3n") == std::string::npos);
    if (e.is_regular_file()) {
      const auto text = slurp(e.path());
      CHECK(text.find("s3cr3t") == std::string::npos);
      CHECK(text.find("admin") == std::string::npos);
      CHECK(text.find("t0k3n") == std::string::npos);
    }
  }
  CHECK(cache.load(url));
}

TEST_CASE("cache: a URL that is not http(s) is refused by name", "[discovery][cache]") {
  temp_dir dir;
  kube::discovery_cache cache({.root = dir.path});
  kube::diagnostics diag;
  CHECK(cache.store("not a url", sample_doc(), diag) == kube::client_errc::invalid_config);
  CHECK_THAT(diag.client_message(), Catch::Contains("server URL"));
  CHECK_FALSE(cache.load("ftp://x"));
  CHECK(kube::discovery_cache::canonical_server("https://Example.COM") == "https://example.com:443");
  CHECK(kube::discovery_cache::canonical_server("http://h:8080/base/") == "http://h:8080/base");
}

// Our side of the decode benchmark (test/bench/decode/run.sh): decodes a
// PodList recorded from the API server into the generated types, as
// api<Pod>::async_list decodes a list response (kube::from_json: the text
// reader, no DOM), the given number of passes, and reports the median time
// and CPU per pass. The client-go peer is test/bench/go/cmd/decode.
//
//   kube-bench-decode [--passes N] LIST.json
//
// Output line (key=value):
//   RESULT impl=kube format=json items=N bytes=B ms=.. cpu_ms=.. maxrss_kb=..

#include <kube/api/core/v1/pod.hpp>

#include "../tools/process_stats.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using kube_bench::cpu_seconds;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int passes = 7;
  const char* path = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--passes" && i + 1 < argc) {
      passes = std::atoi(argv[++i]);
    } else if (path == nullptr && !a.starts_with("--")) {
      path = argv[i];
    } else {
      path = nullptr;
      break;
    }
  }
  if (path == nullptr || passes < 1) {
    std::fprintf(stderr, "usage: kube-bench-decode [--passes N] LIST.json\n");
    return 2;
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "kube-bench-decode: cannot read %s\n", path);
    return 1;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();

  using k8s::core::v1::PodList;
  std::vector<double> ms;
  std::vector<double> cpu_ms;
  std::vector<PodList> keep;  // the last list stays alive while the next one is decoded
  try {
    for (int i = 0; i < passes; ++i) {
      const double c0 = cpu_seconds();
      const auto t0 = std::chrono::steady_clock::now();
      PodList list = kube::from_json<PodList>(text);
      const auto t1 = std::chrono::steady_clock::now();
      cpu_ms.push_back((cpu_seconds() - c0) * 1e3);
      ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      keep.clear();  // frees the previous list, outside the timed part
      keep.push_back(std::move(list));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kube-bench-decode: %s: %s\n", path, e.what());
    return 1;
  }
  std::printf("RESULT impl=kube format=json items=%zu bytes=%zu ms=%.1f cpu_ms=%.1f maxrss_kb=%ld\n",
              keep.back().items.size(), text.size(), median(ms), median(cpu_ms), kube_bench::usage_now().max_rss_kb);
  return 0;
}

// Our side of the decode benchmark (test/bench/decode/run.sh): decodes a
// PodList recorded from the API server into the generated types, the given
// number of passes, and reports the median time and CPU per pass. The
// client-go peer is test/bench/go/cmd/decode.
//
//   kube-bench-decode [--passes N] [--shared] LIST
//
// LIST is JSON or protobuf (a body that starts with "k8s\0", as the API
// server answers `Accept: application/vnd.kubernetes.protobuf`):
//   JSON:      kube::from_json<PodList>, the text reader api<Pod>::async_list
//              uses (no DOM).
//   protobuf:  kube::from_protobuf<PodList>, what api<Pod>::async_list uses
//              on a protobuf answer (the envelope opened, the list read).
// --shared decodes each item straight into its own std::shared_ptr<Pod> and
// builds no std::vector<Pod>, as the informer's list does
// (api<Pod>::async_list_shared, kube::shared_list<Pod>).
//
// heap_per_item is the live heap (glibc mallinfo2) the last pass's list
// holds, over its items: the objects' own size, the floor under an
// informer's memory per cached object.
//
// Output line (key=value):
//   RESULT impl=kube|kube-shared format=json|protobuf items=N bytes=B ms=.. cpu_ms=.. maxrss_kb=.. heap_per_item=..

#include <kube/k8s/core/v1/pod.hpp>
#include <kube/codec/json_reader.hpp>
#include <kube/detail/typed_core.hpp>

#include <malloc.h>

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

using k8s::core::v1::Pod;
using k8s::core::v1::PodList;
using kube_bench::cpu_seconds;
using shared_pods = kube::shared_list<Pod>;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The informer's list readers (detail::make_shared_list_slot), called on
// the recorded body as the typed client calls them on a response body.
void read_shared_json(kube::codec::json_reader& in, void* out, const kube::json_path& at) {
  kube::detail::read_shared_list(in, kube::detail::make_shared_list_sink(*static_cast<shared_pods*>(out)), at);
}
void decode_shared_json(const boost::json::value& in, void* out, const kube::json_path& at) {
  kube::detail::decode_shared_list(in, kube::detail::make_shared_list_sink(*static_cast<shared_pods*>(out)), at);
}
void read_shared_proto(kube::codec::proto_reader& in, void* out, const kube::json_path& at) {
  kube::detail::read_shared_list_proto(in, kube::detail::make_shared_list_sink(*static_cast<shared_pods*>(out)), at);
}

shared_pods shared_from_json(std::string_view text) {
  shared_pods out;
  kube::codec::decode_text(text, &read_shared_json, &decode_shared_json, &out);
  return out;
}
shared_pods shared_from_protobuf(std::string_view body) {
  const auto env = kube::codec::open_envelope(body);
  shared_pods out;
  kube::codec::decode_protobuf(env.raw, &read_shared_proto, &out);
  return out;
}

// Allocated bytes, in the arenas and in mmapped chunks (large vectors).
std::size_t live_heap() {
  const auto m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

// Decodes `text` `passes` times with `decode`; the last list stays alive
// while the next one is decoded (freed outside the timed part), as on the
// Go side. Returns the item count of the last pass and sets `heap` to the
// live heap that list holds.
template <class Decode>
std::size_t run(int passes, std::vector<double>& ms, std::vector<double>& cpu_ms, std::size_t& heap, Decode decode) {
  using L = decltype(decode());
  std::vector<L> keep;
  keep.reserve(1);
  const std::size_t heap_before = live_heap();
  for (int i = 0; i < passes; ++i) {
    const double c0 = cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    L list = decode();
    const auto t1 = std::chrono::steady_clock::now();
    cpu_ms.push_back((cpu_seconds() - c0) * 1e3);
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    keep.clear();
    keep.push_back(std::move(list));
  }
  heap = live_heap() - heap_before;
  return keep.back().items.size();
}

}  // namespace

int main(int argc, char** argv) {
  int passes = 7;
  bool shared = false;
  const char* path = nullptr;
  bool bad = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--passes" && i + 1 < argc) {
      passes = std::atoi(argv[++i]);
    } else if (a == "--shared") {
      shared = true;
    } else if (path == nullptr && !a.starts_with("--")) {
      path = argv[i];
    } else {
      bad = true;
    }
  }
  if (bad || path == nullptr || passes < 1) {
    std::fprintf(stderr, "usage: kube-bench-decode [--passes N] [--shared] LIST\n");
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
  const bool protobuf = std::string_view(text).starts_with(kube::codec::protobuf_magic);

  std::vector<double> ms;
  std::vector<double> cpu_ms;
  std::size_t items = 0;
  std::size_t heap = 0;
  try {
    if (protobuf && shared) {
      items = run(passes, ms, cpu_ms, heap, [&] { return shared_from_protobuf(text); });
    } else if (protobuf) {
      items = run(passes, ms, cpu_ms, heap, [&] { return kube::from_protobuf<PodList>(text); });
    } else if (shared) {
      items = run(passes, ms, cpu_ms, heap, [&] { return shared_from_json(text); });
    } else {
      items = run(passes, ms, cpu_ms, heap, [&] { return kube::from_json<PodList>(text); });
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kube-bench-decode: %s: %s\n", path, e.what());
    return 1;
  }
  std::printf("RESULT impl=%s format=%s items=%zu bytes=%zu ms=%.1f cpu_ms=%.1f maxrss_kb=%ld heap_per_item=%zu\n",
              shared ? "kube-shared" : "kube", protobuf ? "protobuf" : "json", items, text.size(), median(ms),
              median(cpu_ms), kube_bench::usage_now().max_rss_kb, items ? heap / items : 0);
  return 0;
}

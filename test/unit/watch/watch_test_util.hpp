#pragma once

// Helpers shared by the watch decoder tests: read recorded data, decode a
// body cut into given pieces, compare event sequences.

#include <kube/detail/watch_decoder.hpp>
#include <kube/watch/watch_event.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace watch_test {

inline std::string read_data(const std::string& name) {
  const std::string path = std::string(KUBE_WATCH_TEST_DATA_DIR) + "/" + name;
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open test data " + path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

struct decoded {
  std::vector<kube::watch_event> events;
  kube::error_code ec;
  std::string message;
};

inline void drain(kube::detail::watch_decoder& d, decoded& r) {
  while (auto e = d.next()) r.events.push_back(std::move(*e));
}

/// Feeds `body` cut at each offset in `cuts` (ascending), then finish().
inline decoded decode_cut(std::string_view body, const std::vector<std::size_t>& cuts,
                          const kube::detail::watch_decoder_params& params = {}) {
  kube::detail::watch_decoder d(params);
  decoded r;
  std::size_t from = 0;
  for (const std::size_t to : cuts) {
    d.write(body.substr(from, to - from));
    drain(d, r);
    from = to;
  }
  d.write(body.substr(from));
  d.finish();
  drain(d, r);
  r.ec = d.error();
  r.message = d.error_message();
  return r;
}

inline decoded decode_whole(std::string_view body, const kube::detail::watch_decoder_params& params = {}) {
  return decode_cut(body, {}, params);
}

inline decoded decode_bytewise(std::string_view body, const kube::detail::watch_decoder_params& params = {}) {
  kube::detail::watch_decoder d(params);
  decoded r;
  for (const char c : body) {
    d.write(&c, 1);
    drain(d, r);
  }
  d.finish();
  drain(d, r);
  r.ec = d.error();
  r.message = d.error_message();
  return r;
}

inline bool same(const decoded& a, const decoded& b) {
  if (a.ec != b.ec || a.message != b.message || a.events.size() != b.events.size()) return false;
  for (std::size_t i = 0; i < a.events.size(); ++i)
    if (a.events[i].type != b.events[i].type || a.events[i].object != b.events[i].object) return false;
  return true;
}

/// The independent oracle: each line of a recorded .jsonl parsed on its own
/// with boost::json::parse, type kept as the wire string.
struct oracle_event {
  std::string type;
  boost::json::object object;
};

inline std::vector<oracle_event> oracle(std::string_view jsonl) {
  std::vector<oracle_event> out;
  while (!jsonl.empty()) {
    const auto nl = jsonl.find('\n');
    const auto line = jsonl.substr(0, nl);
    jsonl.remove_prefix(nl == std::string_view::npos ? jsonl.size() : nl + 1);
    if (line.empty()) continue;
    auto v = boost::json::parse(line).as_object();
    out.push_back({std::string(v.at("type").as_string()), v.at("object").as_object()});
  }
  return out;
}

}  // namespace watch_test

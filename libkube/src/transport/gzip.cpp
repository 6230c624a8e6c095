#include <kube/detail/gzip.hpp>

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>

namespace kube::detail {

namespace {

struct inflater {
  z_stream zs{};
  bool ok = false;
  inflater() { ok = inflateInit2(&zs, 16 + MAX_WBITS) == Z_OK; }  // 16: gzip wrapper only
  ~inflater() {
    if (ok) inflateEnd(&zs);
  }
  inflater(const inflater&) = delete;
  inflater& operator=(const inflater&) = delete;
};

// The trailer's ISIZE (decoded size mod 2^32) of the last member, as a
// first guess for the output's size, so a list is inflated into one
// allocation. The guess is allocated before any data is decoded, so a claim
// above 64 times the input (JSON lists compress about 20:1) is not
// believed: a lying trailer cannot make us allocate more than that up
// front; real data beyond it grows the buffer as it is decoded.
std::size_t size_hint(std::string_view in) {
  constexpr std::size_t max_ratio = 64;
  if (in.size() < 18) return 0;  // smaller than any gzip member
  std::uint32_t isize = 0;
  for (int i = 3; i >= 0; --i)
    isize = (isize << 8) | static_cast<unsigned char>(in[in.size() - 4 + static_cast<std::size_t>(i)]);
  return std::min<std::size_t>(isize, in.size() * max_ratio);
}

}  // namespace

bool gunzip(std::string_view in, std::string& out, std::string& why, std::size_t max_out) {
  out.clear();
  if (in.empty()) return true;  // an empty body stays empty
  inflater z;
  if (!z.ok) {
    why = "zlib could not start an inflater";
    return false;
  }
  std::size_t produced = 0;
  // One byte beyond the cap is room to find that the data goes past it.
  const std::size_t room = max_out == std::numeric_limits<std::size_t>::max() ? max_out : max_out + 1;
  out.resize(std::min(std::max<std::size_t>(size_hint(in), 4096), room));
  std::size_t consumed = 0;
  for (;;) {
    if (produced == out.size()) out.resize(out.size() > room / 2 ? room : out.size() * 2);
    // zlib counts in uInt (32 bits): feed and drain at most 1 GiB per call.
    constexpr std::size_t step = std::size_t{1} << 30;
    const std::size_t in_now = std::min(in.size() - consumed, step);
    const std::size_t out_now = std::min(out.size() - produced, step);
    z.zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + consumed));
    z.zs.avail_in = static_cast<uInt>(in_now);
    z.zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    z.zs.avail_out = static_cast<uInt>(out_now);
    const int rc = inflate(&z.zs, Z_NO_FLUSH);
    consumed += in_now - z.zs.avail_in;
    produced += out_now - z.zs.avail_out;
    if (produced > max_out) {
      why = "the decoded body is larger than the limit of " + std::to_string(max_out) +
            " bytes (client_params::max_response_body)";
      out.resize(produced);  // above max_out: how the caller tells this failure from bad data
      return false;
    }
    if (rc == Z_STREAM_END) {
      if (consumed == in.size()) break;
      // Another member follows (concatenated gzip files decode as one).
      if (inflateReset(&z.zs) != Z_OK) {
        why = "zlib could not restart at byte " + std::to_string(consumed);
        return false;
      }
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && consumed == in.size() && z.zs.avail_out != 0) {
      why = "the gzip data ends early (" + std::to_string(in.size()) + " bytes, member not complete)";
      return false;
    }
    if (rc == Z_BUF_ERROR) continue;  // no room left: the next turn grows the output
    why = std::string("invalid gzip data near byte ") + std::to_string(consumed) + ": " +
          (z.zs.msg != nullptr ? z.zs.msg : "zlib error " + std::to_string(rc));
    return false;
  }
  out.resize(produced);
  if (out.capacity() - produced > produced / 4 + 4096) out.shrink_to_fit();  // the trailer claimed more
  return true;
}

}  // namespace kube::detail

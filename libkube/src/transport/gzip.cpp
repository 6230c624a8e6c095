#include <kube/detail/gzip.hpp>

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>

namespace kube::detail {

struct gzip_decoder::state {
  z_stream zs{};
  bool ok = false;
  state() { ok = inflateInit2(&zs, 16 + MAX_WBITS) == Z_OK; }  // 16: gzip wrapper only
  ~state() {
    if (ok) inflateEnd(&zs);
  }
  state(const state&) = delete;
  state& operator=(const state&) = delete;
};

gzip_decoder::gzip_decoder(std::size_t max_out)
    : s_(std::make_unique<state>()),
      max_out_(max_out) {}

gzip_decoder::~gzip_decoder() = default;

bool gzip_decoder::write(std::string_view in, std::string& out, std::string& why) {
  if (!s_->ok) {
    why = "zlib could not start an inflater";
    return false;
  }
  // One byte beyond the cap is room to find that the data goes past it.
  const std::size_t room = max_out_ == std::numeric_limits<std::size_t>::max() ? max_out_ : max_out_ + 1;
  std::size_t used = 0;  // of `in`
  std::size_t end = out.size();
  for (;;) {
    if (used == in.size()) break;
    if (member_ended_) {
      // Another member follows (concatenated gzip files decode as one).
      if (inflateReset(&s_->zs) != Z_OK) {
        why = "zlib could not restart at byte " + std::to_string(consumed_);
        return false;
      }
      member_ended_ = false;
    }
    if (end == out.size()) {
      const std::size_t left = room - produced_;
      out.resize(end + std::min(std::max<std::size_t>(end, 16384), std::max<std::size_t>(left, 1)));
    }
    // zlib counts in uInt (32 bits): feed and drain at most 1 GiB per call.
    constexpr std::size_t step = std::size_t{1} << 30;
    const std::size_t in_now = std::min(in.size() - used, step);
    const std::size_t out_now = std::min({out.size() - end, step, room - produced_});
    s_->zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + used));
    s_->zs.avail_in = static_cast<uInt>(in_now);
    s_->zs.next_out = reinterpret_cast<Bytef*>(out.data() + end);
    s_->zs.avail_out = static_cast<uInt>(out_now);
    const int rc = inflate(&s_->zs, Z_NO_FLUSH);
    const std::size_t took = in_now - s_->zs.avail_in;
    const std::size_t gave = out_now - s_->zs.avail_out;
    used += took;
    consumed_ += took;
    end += gave;
    produced_ += gave;
    if (produced_ > max_out_) {
      why = "the decoded body is larger than the limit of " + std::to_string(max_out_) +
            " bytes (client_params::max_response_body)";
      out.resize(end);
      too_large_ = true;
      return false;
    }
    if (rc == Z_STREAM_END) {
      member_ended_ = true;
      continue;
    }
    if (rc == Z_OK || rc == Z_BUF_ERROR) continue;  // more input, or more room
    out.resize(end);
    why = std::string("invalid gzip data near byte ") + std::to_string(consumed_) + ": " +
          (s_->zs.msg != nullptr ? s_->zs.msg : "zlib error " + std::to_string(rc));
    return false;
  }
  out.resize(end);
  return true;
}

bool gzip_decoder::finish(std::string& why) const {
  if (consumed_ == 0 || member_ended_) return true;  // an empty body stays empty
  why = "the gzip data ends early (" + std::to_string(consumed_) + " bytes, member not complete)";
  return false;
}

namespace {

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
  const std::size_t room = max_out == std::numeric_limits<std::size_t>::max() ? max_out : max_out + 1;
  out.reserve(std::min(std::max<std::size_t>(size_hint(in), 4096), room));
  gzip_decoder z(max_out);
  if (!z.write(in, out, why) || !z.finish(why)) return false;
  if (out.capacity() - out.size() > out.size() / 4 + 4096) out.shrink_to_fit();  // the trailer claimed more
  return true;
}

}  // namespace kube::detail

#pragma once

// Internal: gzip decoding of response bodies (RFC 1952), for responses the
// client asked to be compressed (Accept-Encoding: gzip). Exposed under
// detail/ for the unit tests.

#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

namespace kube::detail {

/// Decodes gzip text that arrives in pieces (members back to back decode as
/// one body, as Go's reader accepts), for bodies read as they stream in.
class gzip_decoder {
public:
  explicit gzip_decoder(std::size_t max_out = std::numeric_limits<std::size_t>::max());
  ~gzip_decoder();
  gzip_decoder(const gzip_decoder&) = delete;
  gzip_decoder& operator=(const gzip_decoder&) = delete;

  /// Decodes the next piece of input, appending what it yields to `out`.
  /// False on bad data (`why`: zlib's reason and the byte offset in the
  /// whole input), or once the output passed `max_out` bytes in all
  /// (too_large(); `out` then holds up to one step beyond the cap).
  bool write(std::string_view in, std::string& out, std::string& why);
  /// The input is complete: false (with `why`) if a member is unfinished.
  bool finish(std::string& why) const;
  [[nodiscard]] bool too_large() const noexcept { return too_large_; }

private:
  struct state;
  std::unique_ptr<state> s_;
  std::size_t max_out_;
  std::size_t consumed_ = 0;   // input bytes so far
  std::size_t produced_ = 0;   // output bytes so far
  bool member_ended_ = false;  // the last member ended at the end of the input so far
  bool too_large_ = false;
};

/// Decodes the whole gzip text `in` (one member, or several back to back,
/// as Go's reader accepts) into `out` (gzip_decoder on one piece). On failure returns false and says why in
/// `why` (zlib's reason and the byte offset in `in`); `out` is then
/// unspecified. The output is allocated up front from the gzip trailer's
/// size, believed up to 64 times the input; beyond that it grows as data
/// is decoded (deflate can expand at most 1,032 times). Decoding stops with
/// an error as soon as the output would exceed `max_out` bytes, so a small
/// body that inflates to gigabytes (a gzip bomb) costs at most `max_out`;
/// `out.size()` is then above `max_out`, which tells this failure apart.
bool gunzip(std::string_view in, std::string& out, std::string& why,
            std::size_t max_out = std::numeric_limits<std::size_t>::max());

}  // namespace kube::detail

// Go's base64.StdEncoding, as Kubernetes writes []byte fields in JSON and
// kubeconfigs write certificate and key data.
#include "codec/base64.hpp"

#include <array>

namespace kube::detail {

namespace {
constexpr std::string_view b64_alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
}  // namespace

std::optional<std::string> base64_decode(std::string_view in, std::size_t& bad_offset) {
  std::string out;
  out.reserve(in.size() / 4 * 3);
  std::array<int, 4> quad{};
  std::size_t n = 0;  // sextets in the current quantum
  std::size_t quantum_start = 0;
  std::size_t pos = 0;
  for (; pos < in.size(); ++pos) {
    const char c = in[pos];
    if (c == '\r' || c == '\n') {
      continue;
    }
    if (n == 0) {
      quantum_start = pos;
    }
    if (c == '=') {
      // Padding is only valid at the third or fourth place of the last quantum.
      if (n < 2) {
        bad_offset = pos;
        return std::nullopt;
      }
      std::size_t need = 4 - n;  // '=' characters expected, this one included
      std::size_t k = pos;
      while (need > 0) {
        while (k < in.size() && (in[k] == '\r' || in[k] == '\n')) ++k;
        if (k >= in.size() || in[k] != '=') {
          bad_offset = k >= in.size() ? quantum_start : k;
          return std::nullopt;
        }
        ++k;
        --need;
      }
      while (k < in.size() && (in[k] == '\r' || in[k] == '\n')) ++k;
      if (k != in.size()) {
        bad_offset = k;  // data after the padding
        return std::nullopt;
      }
      out.push_back(static_cast<char>((quad[0] << 2) | (quad[1] >> 4)));
      if (n == 3) {
        out.push_back(static_cast<char>(((quad[1] & 0xf) << 4) | (quad[2] >> 2)));
      }
      return out;
    }
    const int v = b64_value(c);
    if (v < 0) {
      bad_offset = pos;
      return std::nullopt;
    }
    quad[n++] = v;
    if (n == 4) {
      out.push_back(static_cast<char>((quad[0] << 2) | (quad[1] >> 4)));
      out.push_back(static_cast<char>(((quad[1] & 0xf) << 4) | (quad[2] >> 2)));
      out.push_back(static_cast<char>(((quad[2] & 0x3) << 6) | quad[3]));
      n = 0;
    }
  }
  if (n != 0) {
    bad_offset = quantum_start;  // an unpadded, incomplete last quantum
    return std::nullopt;
  }
  return out;
}

std::string base64_encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    const auto a = static_cast<unsigned char>(in[i]);
    const auto b = static_cast<unsigned char>(in[i + 1]);
    const auto c = static_cast<unsigned char>(in[i + 2]);
    out += b64_alphabet[a >> 2];
    out += b64_alphabet[((a & 0x3) << 4) | (b >> 4)];
    out += b64_alphabet[((b & 0xf) << 2) | (c >> 6)];
    out += b64_alphabet[c & 0x3f];
  }
  if (i < in.size()) {
    const auto a = static_cast<unsigned char>(in[i]);
    const bool two = i + 1 < in.size();
    const auto b = two ? static_cast<unsigned char>(in[i + 1]) : 0;
    out += b64_alphabet[a >> 2];
    out += b64_alphabet[((a & 0x3) << 4) | (b >> 4)];
    out += two ? b64_alphabet[(b & 0xf) << 2] : '=';
    out += '=';
  }
  return out;
}

}  // namespace kube::detail

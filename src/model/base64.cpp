#include "model/base64.h"

#include <cstdint>

namespace hamisim::model {
namespace {

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

bool decode_base64(std::string_view in, std::string& out) {
  std::string s;
  s.reserve(in.size());
  for (char c : in) {
    if (c != '\r' && c != '\n') s += c;
  }
  if (s.size() % 4 != 0) return false;
  out.clear();
  out.reserve(s.size() / 4 * 3);
  for (size_t i = 0; i < s.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int j = 0; j < 4; ++j) {
      const char c = s[i + j];
      if (c == '=') {
        if (i + 4 != s.size() || j < 2) return false;
        v[j] = 0;
        ++pad;
      } else {
        if (pad > 0) return false;
        v[j] = base64_value(c);
        if (v[j] < 0) return false;
      }
    }
    const uint32_t bits =
        (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) | (uint32_t(v[2]) << 6) | uint32_t(v[3]);
    out += static_cast<char>((bits >> 16) & 0xff);
    if (pad < 2) out += static_cast<char>((bits >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(bits & 0xff);
  }
  return true;
}

std::string encode_base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t bits = uint32_t(static_cast<unsigned char>(in[i])) << 16;
    if (i + 1 < in.size()) bits |= uint32_t(static_cast<unsigned char>(in[i + 1])) << 8;
    if (i + 2 < in.size()) bits |= uint32_t(static_cast<unsigned char>(in[i + 2]));
    out += kAlphabet[(bits >> 18) & 63];
    out += kAlphabet[(bits >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(bits >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kAlphabet[bits & 63] : '=';
  }
  return out;
}

}  // namespace hamisim::model

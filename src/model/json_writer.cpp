#include "model/json_writer.h"

#include <array>
#include <charconv>
#include <cmath>

namespace hamisim::model {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_unicode_escape(std::string& out, unsigned code) {
  out += "\\u";
  out += kHex[(code >> 12) & 0xF];
  out += kHex[(code >> 8) & 0xF];
  out += kHex[(code >> 4) & 0xF];
  out += kHex[code & 0xF];
}

// Bytes Go writes as they are: printable ASCII and DEL, but for the five it escapes. Most
// strings (names, annotation values) are made of these only and are copied in runs.
constexpr std::array<bool, 256> kVerbatim = [] {
  std::array<bool, 256> t{};
  for (unsigned c = 0x20; c < 0x80; ++c) t[c] = true;
  for (unsigned char c : {'"', '\\', '<', '>', '&'}) t[c] = false;
  return t;
}();

}  // namespace

size_t decode_utf8_rune(std::string_view s, size_t i, uint32_t* cp) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  auto cont = [&](size_t k) -> int {
    if (i + k >= s.size()) return -1;
    const auto b = static_cast<unsigned char>(s[i + k]);
    return (b & 0xC0) == 0x80 ? (b & 0x3F) : -1;
  };
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    const int c1 = cont(1);
    if (c1 < 0) return 0;
    *cp = ((b0 & 0x1Fu) << 6) | static_cast<uint32_t>(c1);
    return 2;
  }
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    const int c1 = cont(1);
    const int c2 = c1 < 0 ? -1 : cont(2);
    if (c2 < 0) return 0;
    const uint32_t v =
        ((b0 & 0x0Fu) << 12) | (static_cast<uint32_t>(c1) << 6) | static_cast<uint32_t>(c2);
    if (v < 0x800 || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return 3;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    const int c1 = cont(1);
    const int c2 = c1 < 0 ? -1 : cont(2);
    const int c3 = c2 < 0 ? -1 : cont(3);
    if (c3 < 0) return 0;
    const uint32_t v = ((b0 & 0x07u) << 18) | (static_cast<uint32_t>(c1) << 12) |
                       (static_cast<uint32_t>(c2) << 6) | static_cast<uint32_t>(c3);
    if (v < 0x10000 || v > 0x10FFFF) return 0;
    *cp = v;
    return 4;
  }
  return 0;
}

void append_go_json_string(std::string& out, std::string_view s) {
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    size_t end = i;
    while (end < s.size() && kVerbatim[static_cast<unsigned char>(s[end])]) ++end;
    out.append(s.data() + i, end - i);
    i = end;
    if (i == s.size()) break;
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        // Go >= 1.22 (HAMi v2.10 builds with it) writes these two as short escapes too.
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '<':
        case '>':
        case '&':
          append_unicode_escape(out, c);
          break;
        default:  // the other control characters (everything else was copied above)
          append_unicode_escape(out, c);
      }
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t n = decode_utf8_rune(s, i, &cp);
    if (n == 0) {
      out += "\\ufffd";  // Go replaces each invalid byte with U+FFFD
      ++i;
      continue;
    }
    if (cp == 0x2028 || cp == 0x2029) {
      append_unicode_escape(out, cp);
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  out += '"';
}

void JsonWriter::comma() {
  if (need_comma_) out_ += ',';
  need_comma_ = true;
}

JsonWriter& JsonWriter::begin_object() {
  comma();
  out_ += '{';
  need_comma_ = false;
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  out_ += '}';
  need_comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  comma();
  out_ += '[';
  need_comma_ = false;
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  out_ += ']';
  need_comma_ = true;
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view k) {
  comma();
  append_go_json_string(out_, k);
  out_ += ':';
  need_comma_ = false;
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view s) {
  comma();
  append_go_json_string(out_, s);
  return *this;
}

JsonWriter& JsonWriter::number(int64_t v) {
  comma();
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, r.ptr);
  return *this;
}

JsonWriter& JsonWriter::unsigned_number(uint64_t v) {
  comma();
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, r.ptr);
  return *this;
}

JsonWriter& JsonWriter::float64(double v) {
  comma();
  if (!std::isfinite(v)) {
    out_ += "null";  // JSON has no NaN/Inf; Go would refuse to encode, we degrade to null
    return *this;
  }
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, r.ptr);
  return *this;
}

JsonWriter& JsonWriter::boolean(bool v) {
  comma();
  out_ += v ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null() {
  comma();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::raw(std::string_view json) {
  comma();
  out_.append(json);
  return *this;
}

}  // namespace hamisim::model

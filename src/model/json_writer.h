#pragma once
// A small JSON writer whose output matches Go's encoding/json byte for byte: no whitespace,
// `<`, `>`, `&`, U+2028 and U+2029 escaped as \u003c.., invalid UTF-8 replaced by U+FFFD.
// Objects are written in the order the caller writes keys (Go writes struct fields in
// declaration order and map keys sorted).

#include <cstdint>
#include <string>
#include <string_view>

#include "go/json_string.h"
#include "go/utf8.h"

namespace hamisim::model {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& string(std::string_view s);
  JsonWriter& number(int64_t v);
  JsonWriter& unsigned_number(uint64_t v);
  // Shortest round-trip decimal form (Go's encoding for float64 in the common range).
  JsonWriter& float64(double v);
  JsonWriter& boolean(bool v);
  JsonWriter& null();
  // Inserts already-encoded JSON (e.g. a Node object echoed as received).
  JsonWriter& raw(std::string_view json);

  const std::string& str() const { return out_; }
  std::string take() { return std::move(out_); }
  void reserve(size_t n) { out_.reserve(n); }

 private:
  void comma();
  std::string out_;
  bool need_comma_ = false;
};

// Go's UTF-8 decoding and JSON string escaping live in src/go; these names keep serving the
// writer's users (the server's error bodies, the plan report).
using go::decode_utf8_rune;
inline constexpr auto* append_go_json_string = &go::append_json_string;

}  // namespace hamisim::model

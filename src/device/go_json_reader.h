#pragma once
// The Go-JSON reader of the annotation codecs: JSON read the way Go's json.Unmarshal reads it,
// in two steps.
//
//  1. prepare() runs Go's own acceptance rules over the raw bytes (the scanner behind
//     checkValid: exact number grammar, control characters, nesting limit 10000) and copies
//     the text, replacing what Go's string decoder replaces with U+FFFD (invalid UTF-8 bytes,
//     unpaired surrogate escapes). simdjson alone would reject such strings, which Go accepts,
//     and would accept nothing Go rejects only after this pass has run.
//  2. simdjson On-Demand walks the prepared text with the readers below. On-Demand parses a
//     number only when asked, so numbers under ignored keys may be as large as Go tolerates;
//     the integer fields read are parsed from their raw token with Go's strconv rules. Keys
//     match with go::json_key_matches.
//
// Decoding mirrors Go's merge semantics: a repeated key decodes again into the same field
// (scalars overwritten, slices decoded element-wise into the existing elements and truncated,
// maps extended), `null` leaves scalars and structs untouched and resets slices, maps and
// pointers. simdjson is a heavy header: include this only from .cpp files.

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/result.h"

namespace hamisim::device::gojson {

namespace od = simdjson::ondemand;

// Step 1: the text Go would decode, or Go's error ("invalid JSON at offset 3: ...").
Result<std::string> prepare(std::string_view json);

// Where a value sits, for error messages ("[1].migProfiles[0].core"); formatted only on error.
struct Path {
  const Path* parent = nullptr;
  std::string_view key;
  size_t index = 0;
  enum Kind { kRoot, kIndex, kField, kMapKey } kind = kRoot;

  Path index_of(size_t i) const { return Path{this, {}, i, kIndex}; }
  Path field(std::string_view k) const { return Path{this, k, 0, kField}; }
  Path map_key(std::string_view k) const { return Path{this, k, 0, kMapKey}; }
  std::string str() const;
};

// "<path>: <what>" (just `what` at the root).
Error at(const Path& p, std::string_view what);
Error simdjson_failure(const Path& p, simdjson::error_code e);
// "cannot decode array as <want>", Go's UnmarshalTypeError in short.
Error wrong_type(const Path& p, od::json_type got, std::string_view want);
Status get_type(od::value& v, const Path& p, od::json_type* t);
// The number's text as written (trailing JSON white space dropped).
std::string_view number_token(od::value& v);

// Go string and bool fields: the type or null (null leaves the value unchanged).
Status read_string(od::value& v, const Path& p, std::string* out);
Status read_bool(od::value& v, const Path& p, bool* out);
// Go integer fields: the token must parse with strconv.ParseInt/ParseUint(tok, 10, 64) (no
// fraction, no exponent) and fit the range. `*present` is set when a number was read.
Status read_signed(od::value& v, const Path& p, int64_t lo, int64_t hi, std::string_view go_type,
                   int64_t* out, bool* present = nullptr);
Status read_unsigned(od::value& v, const Path& p, uint64_t hi, std::string_view go_type,
                     uint64_t* out, bool* present = nullptr);
Status read_int32(od::value& v, const Path& p, int32_t* out);
Status read_int(od::value& v, const Path& p, int64_t* out);
Status read_uint32(od::value& v, const Path& p, uint32_t* out);

// Visits each field of an object value (null: no fields, Go leaves structs alone on null).
template <class F>
Status for_each_field(od::value& v, const Path& p, std::string_view go_type, F&& visit) {
  od::json_type t;
  if (auto st = get_type(v, p, &t); !st.ok()) return st;
  if (t == od::json_type::null) return ok_status();
  if (t != od::json_type::object) return wrong_type(p, t, go_type);
  od::object obj;
  if (auto e = v.get_object().get(obj)) return simdjson_failure(p, e);
  for (auto field_result : obj) {
    od::field field;
    if (auto e = std::move(field_result).get(field)) return simdjson_failure(p, e);
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return simdjson_failure(p, e);
    if (auto st = visit(key, field.value()); !st.ok()) return st;
  }
  return ok_status();
}

// Go slice decoding: null resets; an array decodes element i into the existing element i
// (a fresh zero value past the end) and truncates to the array's length.
template <class T, class F>
Status read_slice(od::value& v, const Path& p, std::string_view go_type, std::vector<T>* out,
                  bool* is_nil, F&& read_element) {
  od::json_type t;
  if (auto st = get_type(v, p, &t); !st.ok()) return st;
  if (t == od::json_type::null) {
    out->clear();
    if (is_nil != nullptr) *is_nil = true;
    return ok_status();
  }
  if (t != od::json_type::array) return wrong_type(p, t, go_type);
  od::array arr;
  if (auto e = v.get_array().get(arr)) return simdjson_failure(p, e);
  size_t i = 0;
  for (auto element_result : arr) {
    od::value element;
    if (auto e = element_result.get(element)) return simdjson_failure(p, e);
    if (i >= out->size()) out->emplace_back();
    const Path ep = p.index_of(i);
    if (auto st = read_element(element, ep, (*out)[i]); !st.ok()) return st;
    ++i;
  }
  out->resize(i);
  if (is_nil != nullptr) *is_nil = false;
  return ok_status();
}

// DeviceInfo.CustomInfo as HAMi reads it, a map[string]any, from the text the registration
// decoder kept (or a backend wrote). Visits each entry in order with its key exactly as written
// (map keys do not fold), so a key given twice is visited twice and the last visit is the value
// Go's map keeps. False, with nothing visited, when the text is not a JSON object (HAMi's map
// is then nil). `visit(std::string_view key, od::value& value)` returns false to stop.
template <class F>
bool for_each_custom_info_entry(std::string_view text, F&& visit) {
  thread_local od::parser parser;
  thread_local std::string padded;
  padded.assign(text);
  padded.append(simdjson::SIMDJSON_PADDING, '\0');
  od::document doc;
  if (parser.iterate(padded.data(), text.size(), padded.size()).get(doc)) return false;
  od::object obj;
  if (doc.get_object().get(obj)) return false;
  for (auto field_result : obj) {
    od::field field;
    if (std::move(field_result).get(field)) return true;
    std::string_view key;
    if (field.unescaped_key().get(key)) return true;
    od::value value = field.value();
    if (!visit(key, value)) return true;
  }
  return true;
}

// A value of a map[string]any under HAMi's type assertions: `v.(string)`, `v.(float64)` (every
// JSON number decodes to float64 in an interface). nullopt when the assertion fails.
std::optional<std::string_view> any_string(od::value& v);
std::optional<double> any_number(od::value& v);

// Go decodes numbers inside interface{} values as float64 and fails when one is out of range
// (overflow to ±Inf; underflow quietly becomes 0). `json` is prepared, valid JSON.
bool numbers_fit_float64(std::string_view json);

}  // namespace hamisim::device::gojson

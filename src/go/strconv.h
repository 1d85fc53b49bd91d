#pragma once
// Go's strconv number and boolean rules, as HAMi, pflag and Go's encoding/json apply them to
// the texts we read from them.

#include <cstdint>
#include <string>
#include <string_view>

namespace hamisim::go {

// The kind of a *strconv.NumError (none: the text parsed).
enum class NumError { kNone, kSyntax, kRange };

// strconv.ParseUint(s, 10, bits): ASCII digits only, no sign; overflow is reported as soon as
// it happens, before any later invalid character.
NumError parse_uint(std::string_view s, int bits, uint64_t* out);
// strconv.ParseInt(s, 10, bits) (and Atoi, which accepts and rejects the same strings): an
// optional sign, then parse_uint's digits.
NumError parse_int(std::string_view s, int bits, int64_t* out);
// strconv.ParseInt(s, 0, 64), as pflag reads integer flags: a sign, 0x/0o/0b/0 prefixes,
// underscores between digits (only with a prefix, as Go's base 0 allows them).
bool parse_int_base0(std::string_view s, int64_t* out);
// *strconv.NumError's text: `strconv.ParseInt: parsing "x": invalid syntax`.
std::string num_error_text(std::string_view fn, std::string_view s, NumError e);

// strconv.ParseBool: 1 t T TRUE true True, 0 f F FALSE false False.
bool parse_bool(std::string_view s, bool* out);

}  // namespace hamisim::go

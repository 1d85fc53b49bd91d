#pragma once
// A string as Go's encoding/json writes it, byte for byte.

#include <string>
#include <string_view>

namespace hamisim::go {

// Appends `s` as a JSON string literal (with quotes) the way json.Marshal writes it: quote,
// backslash, \n \r \t \b \f as short escapes, other control characters and `<`, `>`, `&`, U+2028,
// U+2029 as \u00XX, each invalid UTF-8 byte as \ufffd; everything else as it is.
void append_json_string(std::string& out, std::string_view s);

}  // namespace hamisim::go

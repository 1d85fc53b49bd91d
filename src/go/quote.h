#pragma once
// Go's strconv.Quote (fmt's %q for strings): how Go error texts and klog's key/value lines
// show a string.

#include <cstdint>
#include <string>
#include <string_view>

namespace hamisim::go {

// Appends `s` double-quoted: \" and \\, the short escapes \a \b \f \n \r \t \v, other control
// and non-printable runes as \xNN, \uNNNN or \UNNNNNNNN, each invalid UTF-8 byte as \xNN;
// printable runes as they are. Printability is strconv.IsPrint's for ASCII and for the
// invisible and C1 runes names and reasons may carry; runes above the BMP count as printable.
void append_quoted(std::string& out, std::string_view s);
std::string quote(std::string_view s);

// Go's backslash escape of a control rune (strconv's \a \b \f \n \r \t \v, the ones
// encoding/json also writes short: \b \f \n \r \t), or empty when it has none. Every
// escaping writer takes its short escapes from here, then chooses which of them it uses.
std::string_view short_escape(uint32_t r);

}  // namespace hamisim::go

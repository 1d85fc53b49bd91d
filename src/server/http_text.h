#pragma once
// The HTTP text rules of the server (private to hamisim_server_core): which methods, request ids
// and header values it accepts, ASCII case-insensitive names, and the outcome label a status
// gets in hamisim_http_request_duration_seconds when its route sets none.

#include <algorithm>
#include <cctype>
#include <string_view>

namespace hamisim::server {

inline bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

inline bool valid_method(std::string_view m) {
  return !m.empty() && std::all_of(m.begin(), m.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

inline std::string_view outcome_of(int status) {
  if (status < 400) return "ok";
  if (status == 403) return "forbidden";
  if (status == 429) return "overloaded";
  if (status < 500) return "client_error";
  return "server_error";
}

inline bool valid_request_id(std::string_view id) {
  return !id.empty() && id.size() <= 128 &&
         std::all_of(id.begin(), id.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

inline bool valid_header_text(std::string_view s) {
  return s.find_first_of("\r\n") == std::string_view::npos && s.find('\0') == s.npos;
}

}  // namespace hamisim::server

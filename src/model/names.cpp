#include "model/names.h"

namespace hamisim::model {
namespace {

bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// A label's characters, whatever its length.
bool has_label_shape(std::string_view s) {
  if (s.empty() || !is_lower_alnum(s.front()) || !is_lower_alnum(s.back())) return false;
  for (const char c : s) {
    if (!is_lower_alnum(c) && c != '-') return false;
  }
  return true;
}

}  // namespace

bool is_dns_label(std::string_view s) {
  return s.size() <= 63 && has_label_shape(s);
}

// The API's subdomain pattern limits only the whole name, not each of its labels.
bool is_dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (;;) {
    const size_t dot = s.find('.');
    if (!has_label_shape(s.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

}  // namespace hamisim::model

#include "dra/names.h"

namespace hamisim::dra {
namespace {

bool is_c_identifier(std::string_view s) {
  if (s.empty() || s.size() > 32) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && (i == 0 || c < '0' || c > '9')) return false;
  }
  return true;
}

}  // namespace

bool is_dns_subdomain(std::string_view s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  while (true) {
    const size_t dot = s.find('.');
    if (!is_dns_label(s.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

bool is_pool_name(std::string_view s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  while (true) {
    const size_t slash = s.find('/');
    if (!is_dns_subdomain(s.substr(0, slash), max)) return false;
    if (slash == std::string_view::npos) return true;
    s.remove_prefix(slash + 1);
  }
}

bool is_qualified_name(std::string_view s) {
  const size_t slash = s.find('/');
  if (slash == std::string_view::npos) return is_c_identifier(s);
  return is_dns_subdomain(s.substr(0, slash), 63) && is_c_identifier(s.substr(slash + 1));
}

}  // namespace hamisim::dra

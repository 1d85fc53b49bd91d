#include <charconv>
#include <string>

#include "cel/selector.h"
#include "go/quote.h"

namespace hamisim::cel {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool all_digits(std::string_view s) {
  for (char c : s) {
    if (!is_digit(c)) return false;
  }
  return true;
}
bool ident_chars(std::string_view s) {
  for (char c : s) {
    if (!(is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-')) {
      return false;
    }
  }
  return true;
}

Error bad(std::string_view text, std::string_view why) {
  return make_error("invalid semantic version " + go::quote(text) + ": " + std::string(why));
}

// Checks dot-separated identifiers: non-empty, [0-9A-Za-z-]; numeric ones (prerelease only)
// without leading zeros.
bool identifiers_ok(std::string_view s, bool numeric_leading_zero_rule) {
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    const std::string_view id =
        s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (id.empty() || !ident_chars(id)) return false;
    if (numeric_leading_zero_rule && all_digits(id)) {
      if (id.size() > 1 && id[0] == '0') return false;
      // Kubernetes parses numeric prerelease identifiers as uint64 (blang/semver) and refuses
      // larger ones.
      uint64_t n = 0;
      auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), n);
      if (ec != std::errc() || end != id.data() + id.size()) return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

int compare_identifier(std::string_view a, std::string_view b) {
  const bool an = all_digits(a), bn = all_digits(b);
  if (an && bn) {
    // No leading zeros: the longer number is the larger.
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  } else if (an != bn) {
    return an ? -1 : 1;  // numeric identifiers sort before alphanumeric ones
  }
  const int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace

Result<Semver> parse_semver(std::string_view text) {
  Semver v;
  std::string_view rest = text;
  const size_t plus = rest.find('+');
  if (plus != std::string_view::npos) {
    const std::string_view build = rest.substr(plus + 1);
    if (!identifiers_ok(build, false)) return bad(text, "invalid build metadata");
    v.build = std::string(build);
    rest = rest.substr(0, plus);
  }
  const size_t dash = rest.find('-');
  if (dash != std::string_view::npos) {
    const std::string_view pre = rest.substr(dash + 1);
    if (!identifiers_ok(pre, true)) return bad(text, "invalid prerelease");
    v.prerelease = std::string(pre);
    rest = rest.substr(0, dash);
  }
  uint64_t* parts[3] = {&v.major, &v.minor, &v.patch};
  for (int k = 0; k < 3; ++k) {
    const size_t dot = k < 2 ? rest.find('.') : rest.size();
    if (dot == std::string_view::npos) return bad(text, "expected MAJOR.MINOR.PATCH");
    const std::string_view num = rest.substr(0, dot);
    if (num.empty() || !all_digits(num)) return bad(text, "expected MAJOR.MINOR.PATCH");
    if (num.size() > 1 && num[0] == '0') return bad(text, "a number has a leading zero");
    auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), *parts[k]);
    if (ec != std::errc() || end != num.data() + num.size()) return bad(text, "number too large");
    rest = k < 2 ? rest.substr(dot + 1) : std::string_view();
  }
  return v;
}

int compare_semver(const Semver& a, const Semver& b) {
  if (a.major != b.major) return a.major < b.major ? -1 : 1;
  if (a.minor != b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch != b.patch) return a.patch < b.patch ? -1 : 1;
  // A release sorts after its prereleases.
  if (a.prerelease.empty() || b.prerelease.empty()) {
    if (a.prerelease.empty() == b.prerelease.empty()) return 0;
    return a.prerelease.empty() ? 1 : -1;
  }
  std::string_view x = a.prerelease, y = b.prerelease;
  while (true) {
    const size_t dx = x.find('.'), dy = y.find('.');
    const int c = compare_identifier(x.substr(0, dx), y.substr(0, dy));
    if (c != 0) return c;
    const bool ex = dx == std::string_view::npos, ey = dy == std::string_view::npos;
    if (ex || ey) return ex == ey ? 0 : (ex ? -1 : 1);  // fewer identifiers sort first
    x = x.substr(dx + 1);
    y = y.substr(dy + 1);
  }
}

}  // namespace hamisim::cel

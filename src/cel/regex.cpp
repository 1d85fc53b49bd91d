// RE2 for `matches` and Kubernetes' find/findAll: RE2's syntax and leftmost-first semantics are
// those of Go's regexp, which cel-go uses (std::regex has neither).
#include <re2/re2.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cel/ast.h"

namespace hamisim::cel::detail {

namespace {

// Go's regexp (1.22 on) also spells a named group `(?<name>re)`; Debian 12's RE2 knows only
// `(?P<name>re)`. Rewrites the former outside character classes and escapes.
std::string with_python_group_names(std::string_view p) {
  std::string out;
  out.reserve(p.size() + 4);
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      out += c;
      out += p[++i];
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      out += c;
      continue;
    }
    if (c == '[') {
      in_class = true;
      out += c;
      // A ']' right after '[' or '[^' is a literal member.
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];
      continue;
    }
    if (c == '(' && p.substr(i, 3) == "(?<" && i + 3 < p.size() && p[i + 3] != '=' &&
        p[i + 3] != '!') {
      out += "(?P<";
      i += 2;
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::shared_ptr<const void> compile_regex(std::string_view pattern, std::string* error) {
  RE2::Options options;
  options.set_log_errors(false);
  const std::string go_pattern = with_python_group_names(pattern);
  auto re = std::make_shared<const RE2>(go_pattern, options);
  if (!re->ok()) {
    if (error) *error = "error parsing regexp: " + re->error();
    return nullptr;
  }
  return re;
}

namespace {
const RE2& as_re2(const void* re) {
  return *static_cast<const RE2*>(re);
}
}  // namespace

bool regex_matches(const void* re, std::string_view text) {
  return RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), as_re2(re));
}

std::optional<std::string_view> regex_find(const void* re, std::string_view text) {
  re2::StringPiece match;
  const re2::StringPiece input(text.data(), text.size());
  if (!as_re2(re).Match(input, 0, input.size(), RE2::UNANCHORED, &match, 1)) return std::nullopt;
  return std::string_view(match.data(), match.size());
}

// Go's Regexp.FindAllString: successive non-overlapping matches; an empty match right after
// the previous match is skipped; n < 0: all of them.
std::vector<std::string_view> regex_find_all(const void* re, std::string_view text, int64_t n) {
  std::vector<std::string_view> out;
  const re2::StringPiece input(text.data(), text.size());
  size_t pos = 0;
  long prev_end = -1;
  while ((n < 0 || static_cast<int64_t>(out.size()) < n) && pos <= text.size()) {
    re2::StringPiece m;
    if (!as_re2(re).Match(input, pos, input.size(), RE2::UNANCHORED, &m, 1)) break;
    const size_t start = static_cast<size_t>(m.data() - input.data());
    const size_t end = start + m.size();
    bool accept = true;
    if (end == pos) {
      // An empty match: not right after the previous match; move on by one code point.
      if (static_cast<long>(start) == prev_end) accept = false;
      size_t width = 1;
      if (pos < text.size()) {
        const unsigned char c = static_cast<unsigned char>(text[pos]);
        width = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
      }
      pos += width;
    } else {
      pos = end;
    }
    prev_end = static_cast<long>(end);
    if (accept) out.push_back(text.substr(start, m.size()));
  }
  return out;
}

}  // namespace hamisim::cel::detail

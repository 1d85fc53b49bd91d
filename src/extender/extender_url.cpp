#include "extender/extender_url.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace hamisim::extender {

std::string join_extender_url(std::string_view url_prefix, std::string_view verb) {
  while (!url_prefix.empty() && url_prefix.back() == '/') url_prefix.remove_suffix(1);
  std::string url(url_prefix);
  url += '/';
  url += verb;
  return url;
}

Result<ParsedUrl> parse_extender_url(std::string_view url) {
  ParsedUrl out;
  const size_t colon = url.find("://");
  if (colon == std::string_view::npos) {
    return make_error("\"" + std::string(url) + "\" is not an http:// or https:// URL");
  }
  out.scheme = std::string(url.substr(0, colon));
  std::transform(out.scheme.begin(), out.scheme.end(), out.scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (out.scheme != "http" && out.scheme != "https") {
    return make_error("\"" + std::string(url) + "\": scheme \"" + out.scheme +
                      "\" is not http or https");
  }
  std::string_view rest = url.substr(colon + 3);
  const size_t path_start = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, path_start);
  std::string_view path =
      path_start == std::string_view::npos ? std::string_view{} : rest.substr(path_start);
  if (path.find('#') != std::string_view::npos) {
    return make_error("\"" + std::string(url) + "\": fragments are not allowed");
  }
  if (authority.find('@') != std::string_view::npos) {
    return make_error("\"" + std::string(url) + "\": user info is not allowed");
  }
  if (authority.empty()) return make_error("\"" + std::string(url) + "\": no host");
  out.host_header = std::string(authority);

  std::string_view host = authority;
  std::string_view port;
  if (authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return make_error("\"" + std::string(url) + "\": unterminated IPv6 address");
    }
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return make_error("\"" + std::string(url) + "\": bad host");
      port = after.substr(1);
      out.explicit_port = true;
    }
  } else {
    const size_t c = authority.rfind(':');
    if (c != std::string_view::npos) {
      host = authority.substr(0, c);
      port = authority.substr(c + 1);
      out.explicit_port = true;
    }
  }
  if (host.empty()) return make_error("\"" + std::string(url) + "\": no host");
  out.host = std::string(host);
  if (out.explicit_port) {
    unsigned value = 0;
    auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || value == 0 ||
        value > 65535) {
      return make_error("\"" + std::string(url) + "\": bad port \"" + std::string(port) + "\"");
    }
    out.port = static_cast<uint16_t>(value);
  } else {
    out.port = out.scheme == "https" ? 443 : 80;
  }
  out.target = path.empty() ? "/" : std::string(path);
  if (out.target.front() == '?') out.target.insert(out.target.begin(), '/');
  return out;
}

}  // namespace hamisim::extender

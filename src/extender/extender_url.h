#pragma once
// The URL an extender verb is sent to, built as kube-scheduler's HTTPExtender.send does:
// every trailing "/" of urlPrefix removed, then "/" and the verb (which may itself contain
// "/"), and the parts of that URL a client needs.

#include <cstdint>
#include <string>
#include <string_view>

#include "model/result.h"

namespace hamisim::extender {

// strings.TrimRight(urlPrefix, "/") + "/" + verb
std::string join_extender_url(std::string_view url_prefix, std::string_view verb);

struct ParsedUrl {
  std::string scheme;  // "http" or "https", lower case
  std::string host;    // without brackets for IPv6 literals
  uint16_t port = 0;   // explicit or the scheme's default
  bool explicit_port = false;
  std::string target;  // path and query, "/" when empty
  // The Host header value Go sends: the URL's host[:port] as written (brackets kept).
  std::string host_header;
};

// Accepts http:// and https:// URLs with a host, an optional port and an optional path; user
// info and fragments are refused.
Result<ParsedUrl> parse_extender_url(std::string_view url);

}  // namespace hamisim::extender

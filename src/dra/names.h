#pragma once
// The name grammars of resource.k8s.io (../shared/reference/dra.md §1.1 and §1.9).

#include <cstddef>
#include <string_view>

#include "model/names.h"

namespace hamisim::dra {

// RFC 1123 label (device, request and counter names): the core API's grammar.
using model::is_dns_label;
// RFC 1123 subdomain: DNS labels joined by '.', at most `max` characters (drivers: 63).
bool is_dns_subdomain(std::string_view s, size_t max);
// A pool name: one or more DNS subdomains joined by '/', at most `max` characters.
bool is_pool_name(std::string_view s, size_t max);
// An attribute or capacity name: a C identifier of at most 32 characters, optionally after a
// DNS subdomain of at most 63 characters and '/'.
bool is_qualified_name(std::string_view s);

}  // namespace hamisim::dra

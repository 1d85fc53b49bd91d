#pragma once
// The object-name grammars of Kubernetes' API validation (apimachinery), for the core/v1
// fields the model checks: pod resource claim names and the ResourceClaim names they refer to.

#include <string_view>

namespace hamisim::model {

// RFC 1123 label: lower-case letters, digits and '-', starting and ending with a letter or a
// digit, at most 63 characters.
bool is_dns_label(std::string_view s);
// RFC 1123 subdomain: labels joined by '.', at most 253 characters in all (object names;
// unlike a DNS label alone, a label of a subdomain may be longer than 63).
bool is_dns_subdomain(std::string_view s);

}  // namespace hamisim::model

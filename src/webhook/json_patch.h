#pragma once
// A JSON Patch (RFC 6902) that turns one JSON document into another, for the webhook's answer.
//
// The diff is deliberately simple: objects are compared key by key (remove, then replace or
// recurse, then add), arrays of equal length element by element, anything else that differs is
// replaced whole. Applied to `from`, the ops give a document equal to `to`.

#include <string>
#include <string_view>

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>

namespace hamisim::webhook {

// RFC 6901 reference token: "~" -> "~0", "/" -> "~1" (resource names contain "/").
std::string escape_pointer_token(std::string_view token);

// Ops in document order: for an object, removed keys in `from`'s order, then changed keys in
// `from`'s order, then added keys in `to`'s order. Empty when the documents are equal.
// Recursion follows the nesting of the inputs, which the caller bounds.
boost::json::array diff(const boost::json::value& from, const boost::json::value& to);

}  // namespace hamisim::webhook

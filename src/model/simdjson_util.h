#pragma once
// Small helpers shared by the simdjson-based decoders (model, device codecs, extender wire
// protocol). simdjson is a heavy header: include this only from .cpp files.

#include <simdjson.h>

#include <string_view>

#include "model/objects.h"
#include "model/result.h"

namespace hamisim::model::json {

// The JSON type as an error message names it ("expected an object, got array").
inline std::string_view type_name(simdjson::ondemand::json_type t) {
  switch (t) {
    case simdjson::ondemand::json_type::array:
      return "array";
    case simdjson::ondemand::json_type::object:
      return "object";
    case simdjson::ondemand::json_type::number:
      return "number";
    case simdjson::ondemand::json_type::string:
      return "string";
    case simdjson::ondemand::json_type::boolean:
      return "boolean";
    case simdjson::ondemand::json_type::null:
      return "null";
  }
  return "value";
}

// A Pod or Node decoded from a value of a document that is already being iterated (an item
// of a larger body), so its bytes go through simdjson's first stage once, with the body. The
// value must be an object, and `out` a fresh object to decode into (a Pod is too large to move
// around cheaply); `path` prefixes every error message. Whatever these accept decodes exactly
// as the object's own bytes do with decode_*_json_in_buffer; they refuse malformed JSON on
// which the two could differ, so a caller that must keep the errors of the latter decodes again
// that way on failure. On success the document is positioned just past the object.
Status decode_pod(simdjson::ondemand::value& v, std::string_view path, Pod& out);
Status decode_node(simdjson::ondemand::value& v, std::string_view path, Node& out);

}  // namespace hamisim::model::json

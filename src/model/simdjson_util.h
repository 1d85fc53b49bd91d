#pragma once
// Small helpers shared by the simdjson-based decoders (model, device codecs, extender wire
// protocol). simdjson is a heavy header: include this only from .cpp files.

#include <simdjson.h>

#include <string_view>

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

}  // namespace hamisim::model::json

#pragma once
// Reading and editing a Pod held as JSON, the way Go's Kubernetes decoder sees it: keys match
// case-sensitively, a null counts as absent. The webhook mutates the pod JSON it received rather
// than a re-encoded model::Pod, so that the patch touches only what the mutation changed.

#include <optional>
#include <string>
#include <string_view>

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include "model/quantity.h"

namespace hamisim::webhook {

// The value under `key`, or nullptr when the key is missing or null.
const boost::json::value* find(const boost::json::object& o, std::string_view key);
const boost::json::object* find_object(const boost::json::object& o, std::string_view key);
std::string_view find_string(const boost::json::object& o, std::string_view key);

// The object under `key`, created (replacing a null or a value of another type) when needed.
boost::json::object& ensure_object(boost::json::object& o, std::string_view key);

// A resource of one container list ("limits" or "requests").
struct ResourceEntry {
  bool present = false;
  std::optional<model::Quantity> quantity;  // nullopt when the value does not parse
};
ResourceEntry resource(const boost::json::object& container, std::string_view list,
                       std::string_view name);
bool has_resource(const boost::json::object& container, std::string_view list,
                  std::string_view name);
// Sets `resources.<list>.<name>` to the quantity text, as Go's Quantity marshals an integer.
void set_resource(boost::json::object& container, std::string_view list, std::string_view name,
                  int64_t value);

// Appends {"name": name, "value": value} to the container's env.
void append_env(boost::json::object& container, std::string_view name, std::string_view value);

std::string_view container_name(const boost::json::object& container);

}  // namespace hamisim::webhook

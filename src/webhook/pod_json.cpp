#include "webhook/pod_json.h"

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>
#include <cmath>
#include <cstdio>

namespace hamisim::webhook {

const boost::json::value* find(const boost::json::object& o, std::string_view key) {
  const boost::json::value* v = o.if_contains(key);
  return v && !v->is_null() ? v : nullptr;
}

const boost::json::object* find_object(const boost::json::object& o, std::string_view key) {
  const boost::json::value* v = find(o, key);
  return v ? v->if_object() : nullptr;
}

std::string_view find_string(const boost::json::object& o, std::string_view key) {
  const boost::json::value* v = find(o, key);
  if (!v || !v->is_string()) return {};
  const auto& s = v->get_string();
  return {s.data(), s.size()};
}

boost::json::object& ensure_object(boost::json::object& o, std::string_view key) {
  boost::json::value& v = o[key];
  if (!v.is_object()) v = boost::json::object();
  return v.get_object();
}

namespace {

std::optional<model::Quantity> to_quantity(const boost::json::value& v) {
  std::string text;
  if (v.is_string()) {
    text = std::string(v.get_string());
    const size_t b = text.find_first_not_of(" \t\r\n");
    const size_t e = text.find_last_not_of(" \t\r\n");
    text = b == std::string::npos ? std::string() : text.substr(b, e - b + 1);
  } else if (v.is_int64()) {
    text = std::to_string(v.get_int64());
  } else if (v.is_uint64()) {
    text = std::to_string(v.get_uint64());
  } else if (v.is_double()) {
    const double d = v.get_double();
    if (!std::isfinite(d)) return std::nullopt;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", d);
    text = buf;
  } else {
    return std::nullopt;
  }
  auto q = model::Quantity::parse(text);
  if (!q) return std::nullopt;
  return *q;
}

}  // namespace

ResourceEntry resource(const boost::json::object& container, std::string_view list,
                       std::string_view name) {
  ResourceEntry out;
  if (name.empty()) return out;
  const boost::json::object* resources = find_object(container, "resources");
  const boost::json::object* l = resources ? find_object(*resources, list) : nullptr;
  // Go's map lookup sees a key whose value is null as present with a zero quantity.
  const boost::json::value* v = l ? l->if_contains(name) : nullptr;
  if (!v) return out;
  out.present = true;
  out.quantity = v->is_null() ? model::Quantity() : to_quantity(*v);
  return out;
}

bool has_resource(const boost::json::object& container, std::string_view list,
                  std::string_view name) {
  return resource(container, list, name).present;
}

void set_resource(boost::json::object& container, std::string_view list, std::string_view name,
                  int64_t value) {
  boost::json::object& resources = ensure_object(container, "resources");
  ensure_object(resources, list)[name] = std::to_string(value);
}

void append_env(boost::json::object& container, std::string_view name, std::string_view value) {
  boost::json::value& env = container["env"];
  if (!env.is_array()) env = boost::json::array();
  boost::json::object var;
  var["name"] = name;
  var["value"] = value;
  env.get_array().emplace_back(std::move(var));
}

std::string_view container_name(const boost::json::object& container) {
  return find_string(container, "name");
}

}  // namespace hamisim::webhook

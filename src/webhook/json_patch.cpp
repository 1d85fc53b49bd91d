#include "webhook/json_patch.h"

#include <boost/json/object.hpp>

namespace hamisim::webhook {
namespace {

void add_op(boost::json::array& ops, std::string_view op, const std::string& path,
            const boost::json::value* value) {
  boost::json::object o;
  o["op"] = op;
  o["path"] = path;
  if (value) o["value"] = *value;
  ops.emplace_back(std::move(o));
}

void diff_into(const boost::json::value& from, const boost::json::value& to,
               const std::string& path, boost::json::array& ops) {
  if (from.is_object() && to.is_object()) {
    const auto& a = from.get_object();
    const auto& b = to.get_object();
    for (const auto& kv : a) {
      if (!b.contains(kv.key()))
        add_op(ops, "remove", path + "/" + escape_pointer_token(kv.key()), nullptr);
    }
    for (const auto& kv : a) {
      if (const auto* other = b.if_contains(kv.key())) {
        diff_into(kv.value(), *other, path + "/" + escape_pointer_token(kv.key()), ops);
      }
    }
    for (const auto& kv : b) {
      if (!a.contains(kv.key())) {
        add_op(ops, "add", path + "/" + escape_pointer_token(kv.key()), &kv.value());
      }
    }
    return;
  }
  if (from.is_array() && to.is_array() && from.get_array().size() == to.get_array().size()) {
    const auto& a = from.get_array();
    const auto& b = to.get_array();
    for (size_t i = 0; i < a.size(); ++i)
      diff_into(a[i], b[i], path + "/" + std::to_string(i), ops);
    return;
  }
  if (from != to) add_op(ops, "replace", path, &to);
}

}  // namespace

std::string escape_pointer_token(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

boost::json::array diff(const boost::json::value& from, const boost::json::value& to) {
  boost::json::array ops;
  diff_into(from, to, "", ops);
  return ops;
}

}  // namespace hamisim::webhook

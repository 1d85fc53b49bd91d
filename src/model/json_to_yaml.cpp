#include "model/json_to_yaml.h"

#include <yaml-cpp/yaml.h>
#include <boost/json.hpp>

#include <cctype>

namespace hamisim::model {
namespace {

namespace bjson = boost::json;

// A key written plain reads back as the same string in YAML 1.1 and 1.2 alike: a letter first,
// then letters, digits and `_.-/`, and not a word either reads as a boolean or null.
bool plain_key(std::string_view k) {
  static constexpr std::string_view kWords[] = {"true", "false", "yes", "no",   "on",
                                                "off",  "y",     "n",   "null", "~"};
  if (k.empty() || !std::isalpha(static_cast<unsigned char>(k[0]))) return false;
  for (const char c : k) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-' &&
        c != '/') {
      return false;
    }
  }
  std::string lower(k);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto w : kWords) {
    if (lower == w) return false;
  }
  return true;
}

// Boost.JSON keeps an object's keys in their order, so the YAML has the JSON's order.
void emit(YAML::Emitter& out, const bjson::value& v) {
  switch (v.kind()) {
    case bjson::kind::object:
      if (v.get_object().empty()) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;  // `{}`, as kubectl writes it
        break;
      }
      out << YAML::BeginMap;
      for (const auto& kv : v.get_object()) {
        out << YAML::Key;
        if (!plain_key(kv.key())) out << YAML::DoubleQuoted;
        out << std::string(kv.key()) << YAML::Value;
        emit(out, kv.value());
      }
      out << YAML::EndMap;
      break;
    case bjson::kind::array:
      if (v.get_array().empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;  // `[]`
        break;
      }
      out << YAML::BeginSeq;
      for (const auto& item : v.get_array()) emit(out, item);
      out << YAML::EndSeq;
      break;
    case bjson::kind::string:
      out << YAML::DoubleQuoted << std::string(v.get_string());
      break;
    case bjson::kind::bool_:
      out << (v.get_bool() ? "true" : "false");
      break;
    case bjson::kind::null:
      out << YAML::Null;
      break;
    default:
      // Numbers as JSON writes them (an int64 exactly; a double with the digits it needs).
      out << bjson::serialize(v);
      break;
  }
}

}  // namespace

Result<std::string> json_to_yaml(std::string_view json) {
  boost::system::error_code ec;
  const bjson::value v = bjson::parse(json, ec);
  if (ec) return make_error("json_to_yaml: invalid JSON: " + ec.message());
  YAML::Emitter out;
  out.SetIndent(2);
  emit(out, v);
  if (!out.good()) return make_error("json_to_yaml: " + out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

}  // namespace hamisim::model

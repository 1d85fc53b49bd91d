#include "extender/yaml11_fields.h"

#include <cctype>
#include <set>

#include "go/duration.h"
#include "model/base64.h"
#include "model/yaml_number.h"

namespace hamisim::extender::yaml11 {
namespace {

bool is_plain(const YAML::Node& n) {
  return n.Tag() == "?" || n.Tag().empty();
}

bool looks_int(const std::string& s) {
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  if (i >= s.size()) return false;
  for (; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i])) && s[i] != '_') return false;
  return true;
}

bool looks_float(const std::string& s) {
  if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "-.inf" || s == "+.inf" || s == ".nan" ||
      s == ".NaN" || s == ".NAN")
    return true;
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  bool digits = false, dot = false, exp = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits = true;
    } else if (c == '.' && !dot && !exp) {
      dot = true;
    } else if ((c == 'e' || c == 'E') && digits && !exp) {
      exp = true;
      if (i + 1 < s.size() && (s[i + 1] == '-' || s[i + 1] == '+')) ++i;
    } else {
      return false;
    }
  }
  return digits && (dot || exp);
}

}  // namespace

Kind kind_of(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return Kind::kNull;
  if (n.IsMap()) return Kind::kMap;
  if (n.IsSequence()) return Kind::kSeq;
  if (!is_plain(n)) return Kind::kString;
  const std::string& s = n.Scalar();
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return Kind::kNull;
  if (model::yaml11_bool(s)) return Kind::kBool;
  if (looks_int(s)) return Kind::kInt;
  if (looks_float(s)) return Kind::kFloat;
  return Kind::kString;
}

std::string describe(const YAML::Node& n) {
  switch (kind_of(n)) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return "boolean " + n.Scalar();
    case Kind::kInt:
    case Kind::kFloat:
      return "number " + n.Scalar();
    case Kind::kString:
      return "string \"" + n.Scalar() + "\"";
    case Kind::kMap:
      return "a mapping";
    case Kind::kSeq:
      return "a list";
  }
  return "?";
}

std::string child(const std::string& path, std::string_view key) {
  if (path.empty()) return std::string(key);
  return path + "." + std::string(key);
}
std::string index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

Error field_error(const std::string& path, const std::string& message) {
  return make_error(path.empty() ? message : path + ": " + message);
}

Status read_string(const YAML::Node& n, const std::string& path, std::string& out) {
  const Kind k = kind_of(n);
  if (k == Kind::kNull) return ok_status();  // null leaves Go's zero value
  if (k != Kind::kString) return field_error(path, "expected a string, got " + describe(n));
  out = n.Scalar();
  return ok_status();
}

Status read_bool(const YAML::Node& n, const std::string& path, bool& out) {
  const Kind k = kind_of(n);
  if (k == Kind::kNull) return ok_status();
  if (k != Kind::kBool) return field_error(path, "expected true or false, got " + describe(n));
  out = *model::yaml11_bool(n.Scalar());
  return ok_status();
}

// Underscores, which YAML 1.1 allows in integers, are not in model/yaml_number.h's grammar.
Status read_int64(const YAML::Node& n, const std::string& path, int64_t& out) {
  const Kind k = kind_of(n);
  if (k == Kind::kNull) return ok_status();
  if (k != Kind::kInt) return field_error(path, "expected an integer, got " + describe(n));
  switch (model::parse_yaml_integer(n.Scalar(), &out)) {
    case model::YamlInteger::kOk:
      return ok_status();
    case model::YamlInteger::kLeadingZero:
      return field_error(path, model::leading_zero_message(n.Scalar()) + " (line " +
                                   std::to_string(n.Mark().line + 1) + ")");
    case model::YamlInteger::kOutOfRange:
      return field_error(path, n.Scalar() + " does not fit in a 64-bit integer");
    case model::YamlInteger::kNotInteger:
      break;
  }
  return field_error(path, "expected an integer, got " + describe(n));
}

Status read_duration(const YAML::Node& n, const std::string& path, std::chrono::nanoseconds& out) {
  const Kind k = kind_of(n);
  if (k == Kind::kNull) return ok_status();
  if (k != Kind::kString) {
    return field_error(path, "expected a duration string such as \"5s\", got " + describe(n));
  }
  auto d = go::parse_duration(n.Scalar());
  if (!d) return field_error(path, "\"" + n.Scalar() + "\" is not a duration");
  out = *d;
  return ok_status();
}

Status read_base64(const YAML::Node& n, const std::string& path, std::string& out) {
  std::string text;
  if (Status s = read_string(n, path, text); !s) return s;
  if (!model::decode_base64(text, out)) return field_error(path, "not valid base64");
  return ok_status();
}

Status read_string_list(const YAML::Node& n, const std::string& path,
                        std::vector<std::string>& out) {
  const Kind k = kind_of(n);
  if (k == Kind::kNull) return ok_status();
  if (k != Kind::kSeq) return field_error(path, "expected a list of strings, got " + describe(n));
  out.clear();
  for (size_t i = 0; i < n.size(); ++i) {
    std::string item;
    if (Status s = read_string(n[i], index(path, i), item); !s) return s;
    out.push_back(std::move(item));
  }
  return ok_status();
}

Status for_each_field(const YAML::Node& map, const std::string& path, const FieldHandler& on) {
  if (kind_of(map) == Kind::kNull) return ok_status();
  if (!map.IsMap()) return field_error(path, "expected a mapping, got " + describe(map));
  std::set<std::string> seen;
  for (const auto& entry : map) {
    if (!entry.first.IsScalar()) return field_error(path, "a key is not a string");
    const std::string key = entry.first.Scalar();
    const std::string field_path = child(path, key);
    if (!seen.insert(key).second) return field_error(field_path, "duplicate field");
    auto r = on(key, entry.second, field_path);
    if (!r) return r.error();
    if (*r == Field::kUnknown) return field_error(field_path, "unknown field");
  }
  return ok_status();
}

}  // namespace hamisim::extender::yaml11

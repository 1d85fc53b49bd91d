#include "model/unknown_fields.h"

#include <simdjson.h>

#include <algorithm>
#include <deque>
#include <map>
#include <unordered_map>
#include <utility>

#include "go/json_key.h"
#include "model/decode.h"

namespace hamisim::model {
namespace unknown_fields_impl {

namespace od = simdjson::ondemand;

constexpr std::string_view kSchemaText =
#include "model/kube_fields.inc"
    ;

struct TypeNode;

// A type expression of kube_fields.inc, resolved: "s", "*", "[]T", "{}T" or a struct type.
struct Expr {
  enum class Kind : uint8_t { kScalar, kAny, kList, kMap, kStruct };
  Kind kind = Kind::kScalar;
  const Expr* elem = nullptr;      // kList, kMap
  const TypeNode* type = nullptr;  // kStruct
};

struct TypeNode {
  std::vector<std::pair<std::string_view, const Expr*>> fields;  // JSON name, type
};

struct Schema {
  // (apiVersion, kind) -> the root type.
  std::map<std::pair<std::string_view, std::string_view>, const TypeNode*> roots;
  std::unordered_map<std::string_view, TypeNode> types;  // node-based: pointers stay
  std::deque<Expr> exprs;
  const Expr scalar{};

  const Expr* resolve(std::string_view text) {
    if (text == "s") return &scalar;
    Expr e;
    if (text == "*") {
      e.kind = Expr::Kind::kAny;
    } else if (text.starts_with("[]") || text.starts_with("{}")) {
      e.kind = text[0] == '[' ? Expr::Kind::kList : Expr::Kind::kMap;
      e.elem = resolve(text.substr(2));
    } else {
      const auto it = types.find(text);
      if (it == types.end()) return &scalar;  // not generated: nothing to check inside
      e.kind = Expr::Kind::kStruct;
      e.type = &it->second;
    }
    exprs.push_back(e);
    return &exprs.back();
  }
};

std::vector<std::string_view> split_spaces(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    const size_t end = std::min(line.find(' ', i), line.size());
    if (end > i) out.push_back(line.substr(i, end - i));
    i = end + 1;
  }
  return out;
}

// kube_fields.inc is generated and tested; a malformed line is skipped rather than trusted.
Schema* parse_schema() {
  auto* s = new Schema;  // lives as long as the process, like the text it points into
  std::vector<std::vector<std::string_view>> lines;
  for (size_t i = 0; i < kSchemaText.size();) {
    const size_t end = std::min(kSchemaText.find('\n', i), kSchemaText.size());
    auto words = split_spaces(kSchemaText.substr(i, end - i));
    i = end + 1;
    if (words.empty()) continue;
    if (!words[0].starts_with('@')) s->types[words[0]];
    lines.push_back(std::move(words));
  }
  for (const auto& words : lines) {
    if (words[0].starts_with('@')) {
      if (words.size() != 3) continue;
      const auto it = s->types.find(words[2]);
      if (it != s->types.end()) s->roots[{words[0].substr(1), words[1]}] = &it->second;
      continue;
    }
    TypeNode& type = s->types[words[0]];
    for (size_t w = 1; w < words.size(); ++w) {
      const size_t colon = words[w].find(':');
      if (colon == std::string_view::npos) continue;
      type.fields.emplace_back(words[w].substr(0, colon), s->resolve(words[w].substr(colon + 1)));
    }
  }
  return s;
}

const Schema& schema() {
  static const Schema* const kSchema = parse_schema();
  return *kSchema;
}

bool is_list_kind(std::string_view kind) {
  return kind == "List" || (kind.size() > 4 && kind.ends_with("List"));
}

constexpr int kMaxDepth = 64;

// One step of the path to the value being walked; rendered only for a finding.
struct Segment {
  std::string_view key;  // a field name or map key (in the parser's buffer); empty for an index
  size_t index = 0;
  bool is_map_key = false;
};

class Walker {
 public:
  Walker(const char* base, const JsonLineMap* yaml_lines, std::string_view json,
         std::vector<UnknownField>& out)
      : base_(base), yaml_lines_(yaml_lines), json_(json), out_(out) {
    path_.reserve(32);
  }

  // An object of the input (the root, a List's item): its kind decides its type.
  simdjson::error_code object(od::value v, const std::string& where, std::string_view list_kind,
                              std::string_view list_api_version, int depth) {
    if (depth > kMaxDepth) return simdjson::SUCCESS;
    od::json_type type;
    if (auto e = v.type().get(type)) return e;
    if (type == od::json_type::array) {
      od::array items;
      if (auto e = v.get_array().get(items)) return e;
      return objects(items, where, list_kind, list_api_version, depth);
    }
    if (type != od::json_type::object) return simdjson::SUCCESS;
    od::object o;
    if (auto e = v.get_object().get(o)) return e;
    // First pass: what the object is.
    std::string kind, api_version, name, namespace_;
    // Each field unwrapped by its error code: a malformed document must not throw.
    for (auto result : o) {
      od::field field;
      if (auto e = std::move(result).get(field)) return e;
      const od::raw_json_string raw = field.key();
      const bool is_kind = raw.unsafe_is_equal("kind");
      const bool is_api_version = !is_kind && raw.unsafe_is_equal("apiVersion");
      const bool is_metadata = !is_kind && !is_api_version && raw.unsafe_is_equal("metadata");
      od::value fv = field.value();
      if (is_kind || is_api_version) {
        std::string_view text;
        if (fv.get_string().get(text) == simdjson::SUCCESS) {
          (is_kind ? kind : api_version) = std::string(text);
        }
      } else if (is_metadata) {
        od::object m;
        if (fv.get_object().get(m) != simdjson::SUCCESS) continue;
        for (auto mresult : m) {
          od::field mf;
          if (auto e = std::move(mresult).get(mf)) return e;
          const od::raw_json_string mkey = mf.key();
          const bool is_name = mkey.unsafe_is_equal("name");
          std::string_view text;
          if ((is_name || mkey.unsafe_is_equal("namespace")) &&
              mf.value().get_string().get(text) == simdjson::SUCCESS) {
            (is_name ? name : namespace_) = std::string(text);
          }
        }
      }
    }
    if (kind.empty() && is_list_kind(list_kind) && list_kind != "List") {
      kind = std::string(list_kind.substr(0, list_kind.size() - 4));
    }
    if (api_version.empty()) api_version = std::string(list_api_version);
    if (api_version.empty() && !kind.empty()) api_version = "v1";  // core kinds are written so
    const auto root = schema().roots.find({api_version, kind});
    if (root == schema().roots.end()) return simdjson::SUCCESS;
    std::string object = where;
    if (!where.empty()) {
      std::string named = namespace_.empty() || name.empty() ? name : namespace_ + "/" + name;
      object += " (" + kind + (named.empty() ? std::string() : " " + named) + ")";
    }
    bool reset_ok = false;
    if (auto e = o.reset().get(reset_ok)) return e;
    object_ = &object;
    for (auto result : o) {
      od::field field;
      if (auto e = std::move(result).get(field)) return e;
      std::string_view key;
      const Expr* expr = find(*root->second, field, key);
      od::value fv = field.value();
      if (expr == nullptr) continue;
      if (is_list_kind(kind) && key == "items") {
        if (auto e = items(fv, object, kind, api_version, depth)) return e;
        object_ = &object;
        continue;
      }
      path_.push_back({key});
      const auto e = value(fv, *expr, depth + 1);
      path_.pop_back();
      if (e) return e;
    }
    return simdjson::SUCCESS;
  }

 private:
  simdjson::error_code items(od::value v, const std::string& list_object, std::string_view kind,
                             std::string_view api_version, int depth) {
    od::array a;
    if (v.get_array().get(a) != simdjson::SUCCESS) return simdjson::SUCCESS;
    const std::string prefix = list_object.empty() ? std::string() : list_object + ".";
    return objects(a, prefix + "items", kind, api_version, depth);
  }

  // Each element of `a` as an object of its own, named `<name>[i]`.
  simdjson::error_code objects(od::array a, const std::string& name, std::string_view kind,
                               std::string_view api_version, int depth) {
    size_t index = 0;
    for (auto item : a) {
      od::value iv;
      if (auto e = item.get(iv)) return e;
      const std::string at = name + "[" + std::to_string(index++) + "]";
      if (auto e = object(iv, at, kind, api_version, depth + 1)) return e;
    }
    return simdjson::SUCCESS;
  }

  // The type of the field's key among the fields of `type`, its name in `key`; or nullptr after
  // noting the key as unknown. Keys are compared as written first (no unescaping: most keys of
  // a large file are known and plain), then unescaped.
  const Expr* find(const TypeNode& type, od::field& field, std::string_view& key) {
    const od::raw_json_string raw = field.key();
    for (const auto& f : type.fields) {
      if (raw.unsafe_is_equal(f.first)) {
        key = f.first;
        return f.second;
      }
    }
    const char* quote = raw.raw() - 1;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) return nullptr;  // decoded before
    for (const auto& f : type.fields) {
      if (f.first == key) return f.second;
    }
    UnknownField u;
    u.object = *object_;
    u.field = render_path();
    if (!u.field.empty()) u.field += '.';
    u.field += key;
    for (const auto& f : type.fields) {
      if (go::json_key_matches(key, f.first)) u.same_but_case = std::string(f.first);
    }
    const size_t offset = static_cast<size_t>(quote - base_);
    u.line = yaml_lines_ != nullptr ? yaml_lines_->line_at(offset) : json_line_at(offset);
    out_.push_back(std::move(u));
    return nullptr;
  }

  std::string render_path() const {
    std::string out;
    for (const Segment& seg : path_) {
      if (seg.key.empty() && !seg.is_map_key) {
        out += "[" + std::to_string(seg.index) + "]";
      } else if (seg.is_map_key) {
        out += "[" + std::string(seg.key) + "]";
      } else {
        if (!out.empty()) out += '.';
        out += seg.key;
      }
    }
    return out;
  }

  // Keys arrive in input order, so the newlines are counted once over the whole walk.
  size_t json_line_at(size_t offset) {
    offset = std::min(offset, json_.size());
    if (offset < counted_to_) {
      counted_to_ = 0;
      line_ = 1;
    }
    line_ +=
        static_cast<size_t>(std::count(json_.begin() + static_cast<std::ptrdiff_t>(counted_to_),
                                       json_.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
    counted_to_ = offset;
    return line_;
  }

  simdjson::error_code value(od::value v, const Expr& expr, int depth) {
    if (depth > kMaxDepth || expr.kind == Expr::Kind::kScalar || expr.kind == Expr::Kind::kAny) {
      return simdjson::SUCCESS;
    }
    if ((expr.kind == Expr::Kind::kList || expr.kind == Expr::Kind::kMap) &&
        (expr.elem->kind == Expr::Kind::kScalar || expr.elem->kind == Expr::Kind::kAny)) {
      return simdjson::SUCCESS;  // nothing inside can be unknown
    }
    od::json_type type;
    if (auto e = v.type().get(type)) return e;
    if (expr.kind == Expr::Kind::kList) {
      if (type != od::json_type::array) return simdjson::SUCCESS;  // the decoder judges types
      od::array a;
      if (auto e = v.get_array().get(a)) return e;
      size_t index = 0;
      for (auto item : a) {
        od::value iv;
        if (auto e = item.get(iv)) return e;
        path_.push_back({{}, index++});
        const auto e = value(iv, *expr.elem, depth + 1);
        path_.pop_back();
        if (e) return e;
      }
      return simdjson::SUCCESS;
    }
    if (type != od::json_type::object) return simdjson::SUCCESS;
    od::object o;
    if (auto e = v.get_object().get(o)) return e;
    for (auto result : o) {
      od::field field;
      if (auto e = std::move(result).get(field)) return e;
      std::string_view key;
      const Expr* sub = nullptr;
      if (expr.kind == Expr::Kind::kMap) {
        if (auto e = field.unescaped_key().get(key)) return e;
        sub = expr.elem;
      } else {
        sub = find(*expr.type, field, key);
      }
      od::value fv = field.value();
      if (sub == nullptr) continue;
      path_.push_back({key, 0, expr.kind == Expr::Kind::kMap});
      const auto e = value(fv, *sub, depth + 1);
      path_.pop_back();
      if (e) return e;
    }
    return simdjson::SUCCESS;
  }

  const char* base_;
  const JsonLineMap* yaml_lines_;
  std::string_view json_;
  std::vector<UnknownField>& out_;
  std::vector<Segment> path_;
  const std::string* object_ = nullptr;
  size_t counted_to_ = 0;
  size_t line_ = 1;
};

bool looks_like_json(std::string_view text) {
  const size_t i = text.find_first_not_of(" \t\r\n");
  return i != std::string_view::npos && (text[i] == '{' || text[i] == '[');
}

}  // namespace unknown_fields_impl

Result<std::vector<UnknownField>> find_unknown_fields(std::string_view text,
                                                      size_t readable_past_end) {
  using namespace unknown_fields_impl;
  JsonLineMap lines;
  std::string converted;
  const bool yaml = !looks_like_json(text);
  if (yaml) {
    auto json = yaml_to_json(text, lines);
    if (!json) return json.error();
    converted = std::move(json).value();
  }
  const std::string_view json_text = yaml ? std::string_view(converted) : text;
  // The text is read in place when the bytes past its end are readable (read_file's are, and
  // a converted string is given them), else copied.
  simdjson::padded_string copy;
  simdjson::padded_string_view padded;
  if (yaml) {
    converted.reserve(converted.size() + simdjson::SIMDJSON_PADDING);
    padded = simdjson::padded_string_view(converted.data(), converted.size(), converted.capacity());
  } else if (readable_past_end >= simdjson::SIMDJSON_PADDING) {
    padded =
        simdjson::padded_string_view(text.data(), text.size(), text.size() + readable_past_end);
  } else {
    copy = simdjson::padded_string(text);
    padded = copy;
  }
  od::parser parser;
  od::document doc;
  if (auto e = parser.iterate(padded).get(doc)) {
    return make_error(std::string("invalid JSON: ") + simdjson::error_message(e));
  }
  od::value root;
  std::vector<UnknownField> out;
  if (doc.get_value().get(root) != simdjson::SUCCESS) return out;  // a scalar: nothing to check
  Walker walker(padded.data(), yaml ? &lines : nullptr, json_text, out);
  if (auto e = walker.object(root, "", "", "", 0)) {
    return make_error(std::string("invalid JSON: ") + simdjson::error_message(e));
  }
  return out;
}

std::string describe_unknown_field(std::string_view file, const UnknownField& f) {
  std::string out(file);
  if (f.line > 0) out += ":" + std::to_string(f.line);
  out += ": ";
  if (!f.object.empty()) out += f.object + ": ";
  out += "unknown field \"" + f.field + "\"";
  if (!f.same_but_case.empty()) {
    out += " (hamisim reads it as \"" + f.same_but_case + "\"; the API server would not)";
  }
  return out;
}

}  // namespace hamisim::model

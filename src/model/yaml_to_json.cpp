// YAML to JSON: the YAML documents of a text converted to JSON text (so that the one object
// decoder in decode.cpp reads both), the guard every other reader of YAML runs first
// (check_yaml), and the entry points that take either JSON or YAML text.

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "go/json_string.h"
#include "go/utf8.h"
#include "model/decode.h"
#include "model/yaml_check.h"

namespace hamisim::model {
namespace {

constexpr int kMaxYamlDepth = 256;

struct YamlError {
  std::string message;
  YAML::Mark mark;
};

std::string describe(const YAML::Mark& mark, std::string_view message) {
  if (mark.is_null()) return "yaml: " + std::string(message);
  return "yaml: line " + std::to_string(mark.line + 1) + ", column " +
         std::to_string(mark.column + 1) + ": " + std::string(message);
}

bool all_of(std::string_view s, bool (*pred)(char)) {
  return !s.empty() && std::all_of(s.begin(), s.end(), pred);
}
bool is_dec(char c) {
  return c >= '0' && c <= '9';
}
bool is_oct(char c) {
  return c >= '0' && c <= '7';
}
bool is_hex(char c) {
  return is_dec(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? as a JSON number, or nullopt.
std::optional<std::string> yaml_float_to_json(std::string_view s) {
  std::string out;
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
    if (s[i] == '-') out += '-';
    ++i;
  }
  size_t start = i;
  while (i < s.size() && is_dec(s[i])) ++i;
  std::string_view int_part = s.substr(start, i - start);
  std::string_view frac;
  bool dot = false;
  if (i < s.size() && s[i] == '.') {
    dot = true;
    start = ++i;
    while (i < s.size() && is_dec(s[i])) ++i;
    frac = s.substr(start, i - start);
  }
  if (int_part.empty() && frac.empty()) return std::nullopt;
  if (int_part.empty() && dot == false) return std::nullopt;
  std::string_view exponent;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    start = i++;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    const size_t digits = i;
    while (i < s.size() && is_dec(s[i])) ++i;
    if (i == digits) return std::nullopt;
    exponent = s.substr(start, i - start);
  }
  if (i != s.size()) return std::nullopt;
  const size_t nz = int_part.find_first_not_of('0');
  out += nz == std::string_view::npos ? std::string_view("0") : int_part.substr(nz);
  if (!frac.empty()) {
    out += '.';
    out += frac;
  }
  out += exponent;
  return out;
}

// The JSON form of a plain (unquoted, untagged) YAML scalar under the YAML 1.2 core schema:
// a number, a boolean, or nullopt for a string. Nulls are already null nodes.
std::optional<std::string> resolve_plain_scalar(std::string_view s) {
  if (s == "true" || s == "True" || s == "TRUE") return "true";
  if (s == "false" || s == "False" || s == "FALSE") return "false";
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) {
    const std::string_view digits = s.substr(2);
    const bool octal = s[1] == 'o';
    if (!all_of(digits, octal ? is_oct : is_hex)) return std::nullopt;
    unsigned __int128 v = 0;
    for (const char c : digits) {
      const int d = is_dec(c) ? c - '0' : (c | 0x20) - 'a' + 10;
      v = v * (octal ? 8 : 16) + static_cast<unsigned>(d);
      if (v > std::numeric_limits<uint64_t>::max()) return std::nullopt;  // keep as text
    }
    return std::to_string(static_cast<uint64_t>(v));
  }
  return yaml_float_to_json(s);  // also covers [-+]?[0-9]+
}

// Converts yaml-cpp parser events straight to JSON text, one string per document. Working on
// events keeps the conversion iterative (yaml-cpp itself bounds its recursion depth) and lets
// us guard against yaml-cpp's known failure modes: an alias that refers to the node containing
// it, alias "bombs" that expand exponentially, and inputs on which its parser makes no progress
// and would otherwise emit empty documents forever (for example `"a",{}`).
class YamlEvents : public YAML::EventHandler {
 public:
  // `lines`, when given, receives for every mapping key written the YAML line it came from.
  explicit YamlEvents(size_t limit, bool lines = false) : limit_(limit), lines_(lines) {}

  std::vector<std::string>& documents() { return documents_; }
  // Per document: (offset of a key in the document's JSON, 1-based YAML line), ascending.
  std::vector<std::vector<std::pair<size_t, size_t>>>& key_lines() { return key_lines_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (started_ && mark.pos == last_start_.pos && mark.line == last_start_.line &&
        mark.column == last_start_.column) {
      throw YamlError{"unexpected content", mark};
    }
    started_ = true;
    last_start_ = mark;
    out_.clear();
    doc_lines_.clear();
    stack_.clear();
    anchors_.clear();
  }

  void OnDocumentEnd() override {
    // A document with nothing in it ("---" alone, comments only) is dropped.
    if (!out_.empty() && out_ != "null") {
      done_bytes_ += out_.size();
      documents_.push_back(std::move(out_));
      if (lines_) key_lines_.push_back(std::move(doc_lines_));
    }
    out_.clear();
    doc_lines_.clear();
  }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (key_expected()) {
      begin_key(mark);
      append("\"null\"", mark);
    } else {
      begin_value();
      append("null", mark);
    }
    remember(anchor, "null");
    end_value();
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const auto it = anchors_.find(anchor);
    if (it == anchors_.end()) throw YamlError{"alias refers to the node that contains it", mark};
    const std::string& json = it->second;
    if (key_expected()) {
      if (json.empty() || json[0] == '{' || json[0] == '[') {
        throw YamlError{"mapping keys must be scalars", mark};
      }
      begin_key(mark);
      if (json[0] == '"') {
        append(json, mark);
      } else {
        go::append_json_string(out_, json);
        check_size(mark);
      }
    } else {
      begin_value();
      note_line(mark);  // the keys of the expansion are on the alias's line
      append(json, mark);
    }
    end_value();
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    std::string json;
    if (auto resolved = resolve(tag, value)) {
      json = std::move(*resolved);
    } else {
      go::append_json_string(json, value);
    }
    if (key_expected()) {
      begin_key(mark);
      go::append_json_string(out_, value);  // keys are strings, written as they were
      check_size(mark);
    } else {
      begin_value();
      append(json, mark);
    }
    remember(anchor, std::move(json));
    end_value();
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor, /*is_map=*/false);
  }
  void OnSequenceEnd() override { close(']'); }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor, /*is_map=*/true);
  }
  void OnMapEnd() override { close('}'); }

 private:
  struct Frame {
    bool is_map;
    bool expect_key;
    size_t count;
    YAML::anchor_t anchor;
    size_t start;  // where this collection's JSON begins in out_
    YAML::Mark mark;
  };

  static std::optional<std::string> resolve(const std::string& tag, const std::string& value) {
    if (tag == "?" || tag == "tag:yaml.org,2002:int" || tag == "tag:yaml.org,2002:float" ||
        tag == "tag:yaml.org,2002:bool") {
      return resolve_plain_scalar(value);
    }
    if (tag == "tag:yaml.org,2002:null") return "null";
    return std::nullopt;  // quoted ("!") or any other tag: a string
  }

  bool key_expected() const {
    return !stack_.empty() && stack_.back().is_map && stack_.back().expect_key;
  }

  void begin_key(const YAML::Mark& mark) {
    if (stack_.back().count > 0) out_ += ',';
    note_line(mark);
  }

  void note_line(const YAML::Mark& mark) {
    if (lines_ && !mark.is_null()) doc_lines_.emplace_back(out_.size(), mark.line + 1);
  }

  void begin_value() {
    if (stack_.empty()) return;
    Frame& f = stack_.back();
    if (f.is_map) {
      out_ += ':';
    } else if (f.count > 0) {
      out_ += ',';
    }
  }

  void end_value() {
    if (stack_.empty()) return;
    Frame& f = stack_.back();
    if (f.is_map && f.expect_key) {
      f.expect_key = false;
    } else {
      if (f.is_map) f.expect_key = true;
      ++f.count;
    }
  }

  void open(const YAML::Mark& mark, YAML::anchor_t anchor, bool is_map) {
    if (key_expected()) throw YamlError{"mapping keys must be scalars", mark};
    if (stack_.size() >= static_cast<size_t>(kMaxYamlDepth)) {
      throw YamlError{"nesting too deep", mark};
    }
    begin_value();
    stack_.push_back(Frame{is_map, true, 0, anchor, out_.size(), mark});
    out_ += is_map ? '{' : '[';
  }

  void close(char bracket) {
    if (stack_.empty()) throw YamlError{"unbalanced collection events", YAML::Mark::null_mark()};
    const Frame f = stack_.back();
    stack_.pop_back();
    out_ += bracket;
    check_size(f.mark);
    if (f.anchor != YAML::NullAnchor) remember(f.anchor, out_.substr(f.start));
    end_value();
  }

  void remember(YAML::anchor_t anchor, std::string json) {
    if (anchor == YAML::NullAnchor) return;
    anchors_bytes_ += json.size();
    if (anchors_bytes_ > limit_) {
      throw YamlError{"anchors expand to more than " + std::to_string(limit_) + " bytes",
                      YAML::Mark::null_mark()};
    }
    anchors_.insert_or_assign(anchor, std::move(json));
  }

  void append(std::string_view json, const YAML::Mark& mark) {
    out_ += json;
    check_size(mark);
  }

  void check_size(const YAML::Mark& mark) {
    if (done_bytes_ + out_.size() > limit_) {
      throw YamlError{
          "document expands to more than " + std::to_string(limit_) + " bytes of JSON (aliases?)",
          mark};
    }
  }

  size_t limit_;
  std::string out_;
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, std::string> anchors_;
  size_t anchors_bytes_ = 0;
  std::vector<std::string> documents_;
  size_t done_bytes_ = 0;
  bool lines_ = false;
  std::vector<std::pair<size_t, size_t>> doc_lines_;
  std::vector<std::vector<std::pair<size_t, size_t>>> key_lines_;
  bool started_ = false;
  YAML::Mark last_start_;
};

struct YamlDocuments {
  std::string json;
  size_t count = 0;
};

// The JSON of several documents: {"kind":"List","items":[doc,doc...]}.
constexpr std::string_view kListOpen = R"({"kind":"List","items":[)";

// YAML text is Unicode (YAML 1.2 §5.2), and Go's YAML reader refuses bytes that are not UTF-8
// ("invalid leading UTF-8 octet"); yaml-cpp passes them through into keys and values. The error
// names the line and the column (in characters) of the first bad byte. Text that starts with a
// UTF-16 or UTF-32 byte order mark is left to yaml-cpp, which decodes those encodings.
Status check_utf8(std::string_view yaml) {
  if (yaml.starts_with("\xFE\xFF") || yaml.starts_with("\xFF\xFE") ||
      yaml.starts_with(std::string_view("\0\0\xFE\xFF", 4))) {
    return ok_status();
  }
  size_t line = 1, column = 1;
  for (size_t i = 0; i < yaml.size();) {
    const unsigned char c = static_cast<unsigned char>(yaml[i]);
    if (c < 0x80) {
      ++i;
      if (c == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
      continue;
    }
    uint32_t rune = 0;
    const size_t n = go::decode_utf8_rune(yaml, i, &rune);
    if (n == 0) {
      return make_error(
          fmt::format("yaml: line {}, column {}: invalid UTF-8 (byte 0x{:02x})", line, column, c));
    }
    i += n;
    ++column;
  }
  return ok_status();
}

Result<YamlDocuments> convert_yaml(std::string_view yaml, JsonLineMap* lines = nullptr) {
  if (Status s = check_utf8(yaml); !s) return s.error();
  try {
    std::istringstream in{std::string(yaml)};
    YAML::Parser parser(in);
    YamlEvents events((size_t{16} << 20) + yaml.size() * 16, lines != nullptr);
    while (parser.HandleNextDocument(events)) {
    }
    auto& docs = events.documents();
    YamlDocuments out;
    out.count = docs.size();
    if (docs.size() == 1) {
      out.json = std::move(docs[0]);
      if (lines != nullptr) lines->keys = std::move(events.key_lines()[0]);
    } else {
      out.json = kListOpen;
      for (size_t i = 0; i < docs.size(); ++i) {
        if (i > 0) out.json += ',';
        if (lines != nullptr) {
          for (const auto& [offset, line] : events.key_lines()[i]) {
            lines->keys.emplace_back(out.json.size() + offset, line);
          }
        }
        out.json += docs[i];
      }
      out.json += "]}";
    }
    return out;
  } catch (const YamlError& e) {
    return make_error(describe(e.mark, e.message));
  } catch (const YAML::DeepRecursion& e) {
    return make_error(describe(e.mark, "nesting too deep"));
  } catch (const YAML::Exception& e) {
    return make_error(describe(e.mark, e.msg));
  } catch (const std::exception& e) {
    return make_error(std::string("yaml: ") + e.what());
  }
}

bool looks_like_json(std::string_view text) {
  const size_t i = text.find_first_not_of(" \t\r\n");
  return i != std::string_view::npos && (text[i] == '{' || text[i] == '[');
}

// The JSON to decode a single object from: the text itself, or its YAML converted.
Result<std::string> single_object_json(std::string_view text) {
  if (looks_like_json(text)) return std::string(text);
  auto docs = convert_yaml(text);
  if (!docs) return docs.error();
  if (docs->count != 1) {
    return make_error("yaml: expected one document, got " + std::to_string(docs->count));
  }
  return std::move(docs->json);
}

}  // namespace

Status check_yaml(std::string_view yaml) {
  auto docs = convert_yaml(yaml);
  if (!docs) return docs.error();
  return Ok{};
}

Result<std::string> yaml_to_json(std::string_view yaml) {
  auto docs = convert_yaml(yaml);
  if (!docs) return docs.error();
  return std::move(docs->json);
}

Result<std::string> yaml_to_json(std::string_view yaml, JsonLineMap& lines) {
  lines.keys.clear();
  auto docs = convert_yaml(yaml, &lines);
  if (!docs) return docs.error();
  return std::move(docs->json);
}

size_t JsonLineMap::line_at(size_t offset) const {
  auto it =
      std::upper_bound(keys.begin(), keys.end(), offset,
                       [](size_t o, const std::pair<size_t, size_t>& k) { return o < k.first; });
  return it == keys.begin() ? 0 : std::prev(it)->second;
}

Result<ObjectSet> decode_objects(std::string_view text, const DecodeKinds& kinds) {
  if (looks_like_json(text)) return decode_objects_json(text, kinds);
  auto json = yaml_to_json(text);
  if (!json) return json.error();
  return decode_objects_json(*json, kinds);
}

Result<ObjectSet> decode_objects_in_place(const std::string& text, const DecodeKinds& kinds) {
  // The bytes past the end are the string's own (read_file zeroed them).
  if (text.capacity() - text.size() >= kJsonPadding && looks_like_json(text)) {
    return decode_objects_json_in_buffer(text, kinds);
  }
  return decode_objects(std::string_view(text), kinds);
}

bool is_empty_document(std::string_view text) {
  if (looks_like_json(text)) return false;
  auto docs = convert_yaml(text);
  return docs && docs->count == 0;
}

Result<Pod> decode_pod(std::string_view text) {
  auto json = single_object_json(text);
  if (!json) return json.error();
  return decode_pod_json(*json);
}

Result<Node> decode_node(std::string_view text) {
  auto json = single_object_json(text);
  if (!json) return json.error();
  return decode_node_json(*json);
}

}  // namespace hamisim::model

#include "planner/framework/labels.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace hamisim::planner::framework {
namespace {

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], at most 63 characters.
bool is_label_name_part(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!is_alnum(s.front()) || !is_alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// RFC 1123 subdomain: dot-separated lowercase labels, each [a-z0-9]([-a-z0-9]*[a-z0-9])?,
// at most 253 characters in all.
bool is_dns1123_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view label = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (label.empty() || !is_lower_alnum(label.front()) || !is_lower_alnum(label.back())) {
      return false;
    }
    for (char c : label) {
      if (!is_lower_alnum(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::optional<SelectorOp> label_selector_op(std::string_view op) {
  if (op == "In") return SelectorOp::kIn;
  if (op == "NotIn") return SelectorOp::kNotIn;
  if (op == "Exists") return SelectorOp::kExists;
  if (op == "DoesNotExist") return SelectorOp::kDoesNotExist;
  return std::nullopt;
}

std::optional<SelectorOp> node_selector_op(std::string_view op) {
  if (op == "Gt") return SelectorOp::kGt;
  if (op == "Lt") return SelectorOp::kLt;
  return label_selector_op(op);
}

}  // namespace

bool is_qualified_name(std::string_view name) {
  size_t slash = name.find('/');
  if (slash == std::string_view::npos) return is_label_name_part(name);
  std::string_view prefix = name.substr(0, slash);
  std::string_view rest = name.substr(slash + 1);
  if (rest.find('/') != std::string_view::npos) return false;
  return is_dns1123_subdomain(prefix) && is_label_name_part(rest);
}

bool is_valid_label_value(std::string_view value) {
  return value.empty() || is_label_name_part(value);
}

std::optional<int64_t> parse_int64(std::string_view text) {
  if (text.empty()) return std::nullopt;
  bool negative = false;
  size_t i = 0;
  if (text[0] == '+' || text[0] == '-') {
    negative = text[0] == '-';
    i = 1;
  }
  if (i == text.size()) return std::nullopt;
  // Accumulate as a negative number so INT64_MIN is representable.
  int64_t acc = 0;
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c < '0' || c > '9') return std::nullopt;
    int digit = c - '0';
    if (acc < (kMin + digit) / 10) return std::nullopt;
    acc = acc * 10 - digit;
  }
  if (!negative) {
    if (acc == kMin) return std::nullopt;
    return -acc;
  }
  return acc;
}

Result<Requirement> Requirement::make(std::string key, SelectorOp op,
                                      std::vector<std::string> values) {
  if (!is_qualified_name(key)) {
    return make_error(fmt::format("invalid label key \"{}\"", key));
  }
  switch (op) {
    case SelectorOp::kIn:
    case SelectorOp::kNotIn:
      if (values.empty()) {
        return make_error(
            fmt::format("{}: for 'in', 'notin' operators, values set can't be empty", key));
      }
      break;
    case SelectorOp::kEquals:
      if (values.size() != 1) {
        return make_error(fmt::format("{}: exact-match compatibility requires one value", key));
      }
      break;
    case SelectorOp::kExists:
    case SelectorOp::kDoesNotExist:
      if (!values.empty()) {
        return make_error(
            fmt::format("{}: values set must be empty for exists and does not exist", key));
      }
      break;
    case SelectorOp::kGt:
    case SelectorOp::kLt:
      if (values.size() != 1) {
        return make_error(
            fmt::format("{}: for 'Gt', 'Lt' operators, exactly one value is required", key));
      }
      break;
  }
  Requirement r;
  if (op == SelectorOp::kGt || op == SelectorOp::kLt) {
    auto n = parse_int64(values[0]);
    if (!n) {
      return make_error(
          fmt::format("{}: for 'Gt', 'Lt' operators, the value must be an integer, got \"{}\"", key,
                      values[0]));
    }
    r.number = *n;
  }
  for (const auto& v : values) {
    if (!is_valid_label_value(v)) {
      return make_error(fmt::format("{}: invalid label value \"{}\"", key, v));
    }
  }
  std::sort(values.begin(), values.end());
  r.key = std::move(key);
  r.op = op;
  r.values = std::move(values);
  return r;
}

bool Requirement::matches(const model::StringMap& labels) const {
  auto it = labels.find(key);
  bool has = it != labels.end();
  auto in_values = [&] { return std::binary_search(values.begin(), values.end(), it->second); };
  switch (op) {
    case SelectorOp::kIn:
    case SelectorOp::kEquals:
      return has && in_values();
    case SelectorOp::kNotIn:
      return !has || !in_values();
    case SelectorOp::kExists:
      return has;
    case SelectorOp::kDoesNotExist:
      return !has;
    case SelectorOp::kGt:
    case SelectorOp::kLt: {
      if (!has) return false;
      auto v = parse_int64(it->second);
      if (!v) return false;
      return op == SelectorOp::kGt ? *v > number : *v < number;
    }
  }
  return false;
}

Selector Selector::nothing() {
  Selector s;
  s.nothing_ = true;
  return s;
}

Selector Selector::everything() {
  return Selector{};
}

Selector Selector::from_set(const model::StringMap& set) {
  Selector s;
  for (const auto& [k, v] : set) {
    Requirement r;
    r.key = k;
    r.op = SelectorOp::kEquals;
    r.values = {v};
    s.requirements_.push_back(std::move(r));
  }
  return s;
}

Result<Selector> Selector::from_label_selector(const model::LabelSelector* selector) {
  if (selector == nullptr) return nothing();
  Selector s;
  for (const auto& [k, v] : selector->match_labels) {
    auto r = Requirement::make(k, SelectorOp::kEquals, {v});
    if (!r) return r.error();
    s.requirements_.push_back(std::move(r.value()));
  }
  for (const auto& e : selector->match_expressions) {
    auto op = label_selector_op(e.op);
    if (!op) return make_error(fmt::format("\"{}\" is not a valid label selector operator", e.op));
    auto r = Requirement::make(e.key, *op, e.values);
    if (!r) return r.error();
    s.requirements_.push_back(std::move(r.value()));
  }
  return s;
}

bool Selector::matches(const model::StringMap& labels) const {
  if (nothing_) return false;
  return std::all_of(requirements_.begin(), requirements_.end(),
                     [&](const Requirement& r) { return r.matches(labels); });
}

void Selector::add(Requirement requirement) {
  if (nothing_) return;
  requirements_.push_back(std::move(requirement));
}

NodeSelectorMatcher NodeSelectorMatcher::compile(const model::NodeSelector& selector) {
  NodeSelectorMatcher m;
  std::vector<std::string> errors;
  for (size_t i = 0; i < selector.terms.size(); ++i) {
    const auto& term = selector.terms[i];
    if (term.match_expressions.empty() && term.match_fields.empty()) continue;
    Term parsed;
    std::optional<std::string> error;
    if (!term.match_expressions.empty()) {
      Selector s;
      for (const auto& e : term.match_expressions) {
        auto op = node_selector_op(e.op);
        if (!op) {
          error = fmt::format("\"{}\" is not a valid node selector operator", e.op);
          break;
        }
        auto r = Requirement::make(e.key, *op, e.values);
        if (!r) {
          error = r.error().message;
          break;
        }
        s.add(std::move(r.value()));
      }
      parsed.labels = std::move(s);
    }
    if (!error && !term.match_fields.empty()) {
      std::vector<FieldRequirement> fields;
      for (const auto& f : term.match_fields) {
        if (f.key != "metadata.name") {
          error = fmt::format("unexpected field key \"{}\"", f.key);
          break;
        }
        if (f.op != "In" && f.op != "NotIn") {
          error = fmt::format("\"{}\" is not a valid node field selector operator", f.op);
          break;
        }
        if (f.values.size() != 1) {
          error = fmt::format("unexpected number of value ({}) for node field selector operator {}",
                              f.values.size(), f.op);
          break;
        }
        fields.push_back(FieldRequirement{f.op == "In", f.values[0]});
      }
      parsed.fields = std::move(fields);
    }
    if (error) {
      errors.push_back(fmt::format("nodeSelectorTerms[{}]: {}", i, *error));
      continue;
    }
    m.terms_.push_back(std::move(parsed));
  }
  if (!errors.empty()) m.parse_error_ = make_error(fmt::format("{}", fmt::join(errors, "; ")));
  return m;
}

bool NodeSelectorMatcher::matches(const model::Node& node) const {
  const std::string& name = node.metadata.name;
  for (const auto& term : terms_) {
    if (term.labels && !term.labels->matches(node.metadata.labels)) continue;
    // A node without a name has no fields; matchFields then constrain nothing, as in
    // nodeaffinity's term matching.
    if (term.fields && !name.empty()) {
      bool ok =
          std::all_of(term.fields->begin(), term.fields->end(),
                      [&](const FieldRequirement& f) { return (name == f.value) == f.equals; });
      if (!ok) continue;
    }
    return true;
  }
  return false;
}

RequiredNodeAffinity RequiredNodeAffinity::of(const model::Pod& pod) {
  RequiredNodeAffinity r;
  if (!pod.spec.node_selector.empty())
    r.node_selector_ = Selector::from_set(pod.spec.node_selector);
  const auto& aff = pod.spec.affinity;
  if (aff && aff->node_affinity && aff->node_affinity->required) {
    r.affinity_ = NodeSelectorMatcher::compile(*aff->node_affinity->required);
  }
  return r;
}

bool RequiredNodeAffinity::matches(const model::Node& node) const {
  if (node_selector_ && !node_selector_->matches(node.metadata.labels)) return false;
  return !affinity_ || affinity_->matches(node);
}

}  // namespace hamisim::planner::framework

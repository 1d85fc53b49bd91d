#pragma once
// Label and field selectors as kube-scheduler evaluates them (apimachinery's labels.Selector,
// metav1.LabelSelectorAsSelector, and the node-affinity helpers of component-helpers).
//
// Selectors are compiled once (validation included) and matched many times. A selector that
// fails validation is reported as an Error; callers decide what that means (kube-scheduler
// drops an invalid node-selector term, fails PreFilter on an invalid pod-affinity selector).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/objects.h"
#include "model/result.h"

namespace hamisim::planner::framework {

// apimachinery's qualified-name rules (label keys, extended resource names).
bool is_qualified_name(std::string_view name);
// apimachinery's label-value rules: empty, or up to 63 alphanumerics/'-'/'_'/'.' that start
// and end with an alphanumeric.
bool is_valid_label_value(std::string_view value);
// Go's strconv.ParseInt(text, 10, 64): optional sign, decimal digits, no overflow.
std::optional<int64_t> parse_int64(std::string_view text);

enum class SelectorOp { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt, kEquals };

// One requirement of a label selector (labels.Requirement), validated on construction.
struct Requirement {
  std::string key;
  SelectorOp op = SelectorOp::kExists;
  std::vector<std::string> values;  // sorted, as labels.NewRequirement keeps them
  int64_t number = 0;               // the parsed value of Gt / Lt

  // labels.NewRequirement: key must be a qualified name; In/NotIn need values; Exists and
  // DoesNotExist take none; Gt/Lt take exactly one integer; every value is a label value.
  static Result<Requirement> make(std::string key, SelectorOp op, std::vector<std::string> values);
  bool matches(const model::StringMap& labels) const;
};

// A compiled label selector. Three shapes, as in apimachinery: Nothing (matches no object:
// a nil LabelSelector), Everything (no requirements: an empty LabelSelector), or a list of
// ANDed requirements.
class Selector {
 public:
  static Selector nothing();
  static Selector everything();
  // labels.SelectorFromSet: every key equals its value. Keys and values are not validated
  // (the map came from spec.nodeSelector, which the API server validated).
  static Selector from_set(const model::StringMap& set);
  // metav1.LabelSelectorAsSelector: nullptr is Nothing, an empty selector Everything.
  static Result<Selector> from_label_selector(const model::LabelSelector* selector);

  bool matches(const model::StringMap& labels) const;
  // True for Everything (no requirements); false for Nothing.
  bool empty() const { return !nothing_ && requirements_.empty(); }
  bool is_nothing() const { return nothing_; }
  // labels.Selector.Add: Nothing stays Nothing.
  void add(Requirement requirement);
  const std::vector<Requirement>& requirements() const { return requirements_; }

 private:
  bool nothing_ = false;
  std::vector<Requirement> requirements_;
};

// nodeaffinity.LazyErrorNodeSelector: terms ORed; inside a term, matchExpressions (over node
// labels) and matchFields (only metadata.name, In/NotIn with one value) are ANDed. An empty
// term matches nothing; a term that fails to parse is dropped (it matches nothing) and its
// error is kept.
class NodeSelectorMatcher {
 public:
  static NodeSelectorMatcher compile(const model::NodeSelector& selector);
  bool matches(const model::Node& node) const;
  const std::optional<Error>& parse_error() const { return parse_error_; }

 private:
  struct FieldRequirement {
    bool equals = true;  // In (true) or NotIn (false) on metadata.name
    std::string value;
  };
  struct Term {
    std::optional<Selector> labels;
    std::optional<std::vector<FieldRequirement>> fields;
  };
  std::vector<Term> terms_;
  std::optional<Error> parse_error_;
};

// nodeaffinity.RequiredNodeAffinity: spec.nodeSelector AND the required node-affinity terms.
class RequiredNodeAffinity {
 public:
  static RequiredNodeAffinity of(const model::Pod& pod);
  // Parse errors of the affinity terms are ignored, as kube-scheduler ignores them here.
  bool matches(const model::Node& node) const;

 private:
  std::optional<Selector> node_selector_;
  std::optional<NodeSelectorMatcher> affinity_;
};

}  // namespace hamisim::planner::framework

#pragma once
// The pod's device selection annotations, one rule for every vendor: `use-*type` /
// `nouse-*type` (HAMi device.CheckType) and `use-*uuid` / `nouse-*uuid` (device.CheckUUID), e.g.
// `nvidia.com/use-gputype`, `hygon.com/nouse-gpuuuid`, `hami.io/use-<chip>-uuid`.
//
// HAMi v2.10 reads every such value the same way:
//   - absent, or blank after Go's strings.TrimSpace: no constraint;
//   - anything else is a constraint: the value is split on ',' and each item trimmed; a blank
//     item matches no device. So `use-...: ","` or `" , "` admits no device (the Fit then fails
//     with CardTypeMismatch / CardUuidMismatch), while `nouse-...: ","` excludes none.
// A `use` list admits a device when one of its items matches it; a `nouse` list rejects a
// device when one of its items matches it; both apply. What "matches" means is the only thing
// that differs between the two kinds: UUIDs compare exactly, types are case-insensitive
// substrings of the device type.
//
// Vendors that do not read a key simply never build a filter for it (MetaX GPU's UUID check
// always passes; Enflame GCU reads no pod annotation).

#include <string>
#include <string_view>
#include <vector>

#include "model/objects.h"

namespace hamisim::device {

// One selection annotation's value, parsed once per pod.
class SelectionList {
 public:
  SelectionList() = default;  // no constraint
  // The rule above, for a present value.
  static SelectionList parse(std::string_view value);
  // The annotation `key` of `meta`; an empty key or an absent annotation is no constraint.
  static SelectionList read(const model::ObjectMeta& meta, std::string_view key);

  // False for an absent or blank value.
  bool constrains() const { return constrains_; }
  // The non-blank items, trimmed, in order.
  const std::vector<std::string>& items() const { return items_; }

  // An item equal to `value` (blank items never match).
  bool has_equal(std::string_view value) const;
  // An item contained in `text`, ignoring ASCII case (blank items never match).
  bool has_substring_of(std::string_view text) const;

  friend bool operator==(const SelectionList&, const SelectionList&) = default;

 private:
  bool constrains_ = false;
  std::vector<std::string> items_;
};

// device.CheckUUID: exact UUIDs.
struct UuidSelection {
  SelectionList use;
  SelectionList nouse;
  static UuidSelection read(const model::ObjectMeta& meta, std::string_view use_key,
                            std::string_view nouse_key);
  // Inline for a pod that selects nothing, the common case: asked for every device of every
  // node a pod is fitted on.
  bool allows(std::string_view uuid) const {
    return (!use.constrains() && nouse.items().empty()) || allows_listed(uuid);
  }
  // The same, against the lists.
  bool allows_listed(std::string_view uuid) const;
};

// device.CheckType: case-insensitive substrings of the device type.
struct TypeSelection {
  SelectionList use;
  SelectionList nouse;
  static TypeSelection read(const model::ObjectMeta& meta, std::string_view use_key,
                            std::string_view nouse_key);
  // Inline for a pod that selects nothing, the common case: asked for every device of every
  // node a pod is fitted on.
  bool allows(std::string_view type) const {
    return (!use.constrains() && nouse.items().empty()) || allows_listed(type);
  }
  // The same, against the lists.
  bool allows_listed(std::string_view type) const;
};

}  // namespace hamisim::device

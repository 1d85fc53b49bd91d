#pragma once
// The one grammar for integers in every YAML file hamisim reads (node groups, device profiles,
// device config, kube-scheduler config, the priority expander's config, kubeconfig). YAML
// itself disagrees with itself: YAML 1.1 (yaml-cpp's conversions, sigs.k8s.io/yaml, hence
// Kubernetes) reads `010` as octal 8, YAML 1.2 as decimal 10. An integer is therefore written
//   [-+]? (0 | [1-9][0-9]*)
// and a number with a leading zero is an error that says so, rather than one of two values.
// Hex, octal and binary prefixes and underscores are not integers either. Quoting does not
// matter (`"3"` is 3), as each reader already read its scalars. Callers prefix errors with
// the file, the field and the line (docs/configuration.md, "Numbers and durations in files
// and flags").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hamisim::model {

enum class YamlInteger {
  kOk,
  kLeadingZero,  // "010", "-007": refused, whatever YAML version the writer had in mind
  kOutOfRange,   // a decimal integer beyond int64
  kNotInteger,   // anything else: the reader's own type error applies
};
YamlInteger parse_yaml_integer(std::string_view text, int64_t* out);

// The message for kLeadingZero: `"010" has a leading zero (octal in YAML 1.1, decimal in YAML
// 1.2): write 10, or 8 for octal`.
std::string leading_zero_message(std::string_view text);

// A plain scalar as a boolean under YAML 1.1, as go-yaml v2 (sigs.k8s.io/yaml, hence
// kube-scheduler's configuration and client-go's kubeconfig loading) resolves it: y, yes, on,
// true and n, no, off, false, each in lower, capitalized and upper case (`Y` and `N` single).
// nullopt: not a boolean. The one table of both YAML 1.1 readers (the scheduler configuration's
// and the kubeconfig's), which used to disagree on `y` and `n`.
std::optional<bool> yaml11_bool(std::string_view plain);

}  // namespace hamisim::model

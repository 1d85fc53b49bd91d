#pragma once
// The strict YAML field reader of KubeSchedulerConfiguration files: kube-scheduler reads its
// config through sigs.k8s.io/yaml (go-yaml v2, YAML 1.1 scalars) into JSON and then into typed
// structs, so a plain `5` is a number and a plain `yes` a boolean, and neither decodes into a
// string field; quoted scalars are always strings. Integers follow model/yaml_number.h and
// durations go::parse_duration. Errors name the field path ("extenders[0].weight: ...").
// Includes yaml-cpp: for scheduler_config.cpp only.

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "model/result.h"

namespace hamisim::extender::yaml11 {

// What a node resolves to under YAML 1.1's scalar rules.
enum class Kind { kNull, kBool, kInt, kFloat, kString, kMap, kSeq };
Kind kind_of(const YAML::Node& n);
// The node as an error message shows it: `number 5`, `string "x"`, `a mapping`.
std::string describe(const YAML::Node& n);

// Field paths: child("extenders[0]", "weight"), index("extenders", 0).
std::string child(const std::string& path, std::string_view key);
std::string index(const std::string& path, size_t i);
// "<path>: <message>" (just the message at the top level).
Error field_error(const std::string& path, const std::string& message);

// Typed fields; null leaves Go's zero value (`out` untouched).
Status read_string(const YAML::Node& n, const std::string& path, std::string& out);
Status read_bool(const YAML::Node& n, const std::string& path, bool& out);
Status read_int64(const YAML::Node& n, const std::string& path, int64_t& out);
Status read_duration(const YAML::Node& n, const std::string& path, std::chrono::nanoseconds& out);
// A string holding base64 (the *Data fields), decoded into `out`.
Status read_base64(const YAML::Node& n, const std::string& path, std::string& out);
Status read_string_list(const YAML::Node& n, const std::string& path,
                        std::vector<std::string>& out);

enum class Field { kHandled, kUnknown };
using FieldHandler = std::function<Result<Field>(const std::string& key, const YAML::Node& value,
                                                 const std::string& path)>;
// Strict decoding of one mapping: keys must be strings, appear once and be known (kube-
// scheduler's strict decoder reports unknown and duplicate fields). Null is an empty mapping.
Status for_each_field(const YAML::Node& map, const std::string& path, const FieldHandler& on);

}  // namespace hamisim::extender::yaml11

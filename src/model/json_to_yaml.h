#pragma once
// JSON text written as block YAML, as kubectl prints objects with `-o yaml`: the output forms
// (`-o yaml`) of plan, fit, profile check and doctor are their JSON forms in YAML, the same
// keys in the same order. Strings are double-quoted, so none reads back as something else
// ("100", "true", "~", "2026-12-03"); numbers, booleans and null (`~`) are plain. Reading the
// YAML back (model::yaml_to_json) gives the JSON back.

#include <string>
#include <string_view>

#include "model/result.h"

namespace hamisim::model {

// `json` is one JSON value (our own renderers' output); an error says why it is not.
Result<std::string> json_to_yaml(std::string_view json);

}  // namespace hamisim::model

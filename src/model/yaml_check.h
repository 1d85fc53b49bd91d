#pragma once
// A guard for code that hands untrusted YAML to yaml-cpp directly: yaml-cpp 0.7 loops forever
// on some inputs (its parser stops making progress and LoadAll keeps returning empty
// documents) and expands alias bombs. This parses the text once with the guarded event
// walker of decode_objects, so callers load only text known to terminate.

#include <string_view>

#include "model/result.h"

namespace hamisim::model {

// Errors name the line and column, like decode_objects' YAML errors.
Status check_yaml(std::string_view yaml);

}  // namespace hamisim::model

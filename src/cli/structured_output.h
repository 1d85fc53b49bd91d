#pragma once
// `-o json` and `-o yaml` of the commands that have them (plan, fit, profile check, doctor):
// one JSON document, or the same document as YAML (model/json_to_yaml.h), on stdout.

#include <cstdio>
#include <string>
#include <string_view>

#include "model/json_to_yaml.h"

namespace hamisim::cli {

// Writes `json` as `output` ("json" or "yaml") asks, with a final newline. Exit status 0, or 1
// (an internal failure, said on stderr) when our own JSON does not convert.
inline int write_structured(std::string_view command, const std::string& json,
                            std::string_view output) {
  if (output != "yaml") {
    std::fwrite(json.data(), 1, json.size(), stdout);
    if (json.empty() || json.back() != '\n') std::fputc('\n', stdout);
    return 0;
  }
  auto yaml = model::json_to_yaml(json);
  if (!yaml) {
    std::fprintf(stderr, "hamisim %.*s: internal error: %s\n", static_cast<int>(command.size()),
                 command.data(), yaml.error().message.c_str());
    return 1;
  }
  std::fwrite(yaml->data(), 1, yaml->size(), stdout);
  return 0;
}

}  // namespace hamisim::cli

#pragma once
// Standard base64 with padding, as Go encodes []byte in JSON and YAML (kubeconfig and
// scheduler-config certificate data, the webhook's JSON Patch).

#include <string>
#include <string_view>

namespace hamisim::model {

// False when `in` is not valid padded base64; \r and \n are skipped (as Go decodes []byte
// in YAML).
bool decode_base64(std::string_view in, std::string& out);
std::string encode_base64(std::string_view in);

}  // namespace hamisim::model

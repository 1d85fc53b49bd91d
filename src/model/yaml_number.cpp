#include "model/yaml_number.h"

namespace hamisim::model {

YamlInteger parse_yaml_integer(std::string_view text, int64_t* out) {
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return YamlInteger::kNotInteger;
  for (const char c : s) {
    if (c < '0' || c > '9') return YamlInteger::kNotInteger;
  }
  if (s.size() > 1 && s[0] == '0') return YamlInteger::kLeadingZero;
  uint64_t magnitude = 0;
  for (const char c : s) {
    const auto digit = static_cast<uint64_t>(c - '0');
    if (magnitude > (uint64_t{1} << 63) / 10 ||
        magnitude * 10 + digit > (uint64_t{1} << 63) - (negative ? 0 : 1)) {
      return YamlInteger::kOutOfRange;
    }
    magnitude = magnitude * 10 + digit;
  }
  *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return YamlInteger::kOk;
}

std::string leading_zero_message(std::string_view text) {
  std::string_view digits = text;
  std::string sign;
  if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
    if (digits[0] == '-') sign = "-";
    digits.remove_prefix(1);
  }
  const size_t first = digits.find_first_not_of('0');
  const std::string_view decimal =
      first == std::string_view::npos ? std::string_view("0") : digits.substr(first);
  uint64_t octal = 0;
  bool is_octal = true;
  for (const char c : digits) {
    if (c > '7' || octal > (uint64_t{1} << 60)) {
      is_octal = false;
      break;
    }
    octal = octal * 8 + static_cast<uint64_t>(c - '0');
  }
  std::string message = "\"" + std::string(text) +
                        "\" has a leading zero (octal in YAML 1.1, decimal in YAML 1.2): write " +
                        sign + std::string(decimal);
  if (is_octal && octal != 0) message += ", or " + sign + std::to_string(octal) + " for octal";
  return message;
}

std::optional<bool> yaml11_bool(std::string_view plain) {
  for (std::string_view t :
       {"y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE"}) {
    if (plain == t) return true;
  }
  for (std::string_view f :
       {"n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE"}) {
    if (plain == f) return false;
  }
  return std::nullopt;
}

}  // namespace hamisim::model

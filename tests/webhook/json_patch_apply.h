#pragma once
// Test-only inverse of the webhook's answer: base64 decoding and an RFC 6902 applier for the
// add/remove/replace ops with RFC 6901 pointers. Throws std::runtime_error on anything a
// correct patch cannot contain (a missing path, a bad escape), so that tests and the fuzzer
// catch a patch that does not fit the document it was made from.

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hamisim::testing {

namespace json = boost::json;

inline std::string base64_decode(std::string_view in) {
  auto index = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    throw std::runtime_error("not base64");
  };
  if (in.size() % 4 != 0) throw std::runtime_error("base64 length");
  std::string out;
  for (size_t i = 0; i < in.size(); i += 4) {
    uint32_t n = 0;
    int pad = 0;
    for (size_t j = 0; j < 4; ++j) {
      n <<= 6;
      if (in[i + j] == '=') {
        ++pad;
      } else {
        n |= index(in[i + j]);
      }
    }
    out += char(n >> 16);
    if (pad < 2) out += char((n >> 8) & 0xff);
    if (pad < 1) out += char(n & 0xff);
  }
  return out;
}

// RFC 6902 add/remove/replace with RFC 6901 pointers: enough to check the webhook's patches.
inline std::vector<std::string> pointer_tokens(const std::string& path) {
  std::vector<std::string> out;
  if (path.empty()) return out;
  if (path[0] != '/') throw std::runtime_error("bad pointer " + path);
  size_t pos = 1;
  while (true) {
    const size_t next = path.find('/', pos);
    std::string raw = path.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    std::string token;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '~' && i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token += raw[i + 1] == '0' ? '~' : '/';
        ++i;
      } else if (raw[i] == '~') {
        throw std::runtime_error("bad escape in " + path);
      } else {
        token += raw[i];
      }
    }
    out.push_back(token);
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return out;
}

// An array index token: digits only, within `limit`.
inline size_t array_index(const std::string& token, size_t limit) {
  if (token.empty() || token.size() > 9 ||
      token.find_first_not_of("0123456789") != std::string::npos)
    throw std::runtime_error("bad array index " + token);
  const size_t i = std::stoul(token);
  if (i > limit) throw std::runtime_error("array index out of range " + token);
  return i;
}

inline json::value apply_patch(json::value doc, const json::array& ops) {
  for (const auto& op_v : ops) {
    const json::object& op = op_v.as_object();
    const std::string kind(op.at("op").as_string());
    const std::vector<std::string> tokens = pointer_tokens(std::string(op.at("path").as_string()));
    if (tokens.empty()) {
      if (kind == "remove") throw std::runtime_error("remove root");
      doc = op.at("value");
      continue;
    }
    json::value* parent = &doc;
    for (size_t i = 0; i + 1 < tokens.size(); ++i) {
      if (parent->is_object()) {
        parent = &parent->as_object().at(tokens[i]);
      } else {
        parent = &parent->as_array().at(array_index(tokens[i], parent->as_array().size()));
      }
    }
    const std::string& last = tokens.back();
    if (parent->is_object()) {
      json::object& o = parent->as_object();
      if (kind == "add") {
        o[last] = op.at("value");
      } else if (kind == "replace") {
        o.at(last) = op.at("value");
      } else if (kind == "remove") {
        if (!o.erase(last)) throw std::runtime_error("remove missing " + last);
      } else {
        throw std::runtime_error("unexpected op " + kind);
      }
    } else {
      json::array& a = parent->as_array();
      if (kind == "add" && last == "-") {
        a.push_back(op.at("value"));
      } else if (kind == "add") {
        a.insert(a.begin() + array_index(last, a.size()), op.at("value"));
      } else if (kind == "replace") {
        a.at(array_index(last, a.size())) = op.at("value");
      } else if (kind == "remove") {
        if (a.empty()) throw std::runtime_error("remove from an empty array");
        a.erase(a.begin() + array_index(last, a.size() - 1));
      } else {
        throw std::runtime_error("unexpected op " + kind);
      }
    }
  }
  return doc;
}

}  // namespace hamisim::testing

#pragma once
// One section of HAMi's device-config.yaml as a vendor backend reads it. yaml-cpp stays behind
// this class so that backends (and everything including their headers) do not pull it in.
// Type rules follow Go's YAML decoder: a key that is absent or null leaves the default, a
// value of the wrong type is an error naming the key path and its line.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "device/backend.h"
#include "model/result.h"

namespace YAML {
class Node;
}

namespace hamisim::device {

class ConfigSection {
 public:
  ConfigSection() = default;  // absent
  ConfigSection(const YAML::Node& node, std::string path);

  // The section exists in the file and is not null.
  bool present() const { return node_ != nullptr; }
  // "hygon", "iluvatars[1]": the prefix of every error.
  const std::string& path() const { return path_; }

  Status read(std::string_view key, std::string& out) const;
  Status read(std::string_view key, int32_t& out) const;
  Status read(std::string_view key, bool& out) const;
  Status read(std::string_view key, std::vector<std::string>& out) const;
  // A nested mapping (absent or null -> an absent section).
  Result<ConfigSection> mapping(std::string_view key) const;
  // A sequence of mappings (absent or null -> empty).
  Result<std::vector<ConfigSection>> list(std::string_view key) const;
  // The section itself as a sequence of mappings (HAMi's `iluvatars:` is a list).
  Result<std::vector<ConfigSection>> items() const;

 private:
  std::shared_ptr<const YAML::Node> node_;
  std::string path_;
};

}  // namespace hamisim::device

namespace hamisim::device {

using Backends = std::vector<std::shared_ptr<const DeviceBackend>>;

// Builds one vendor's backends from its device-config section. `section` is absent when the
// file has no such section (HAMi then leaves the resource names empty: the backend never sees
// a request); `chart_defaults` is true when no file was given at all, in which case HAMi's
// chart values apply.
using BackendFactory = Result<Backends> (*)(const ConfigSection& section, bool chart_defaults);

}  // namespace hamisim::device

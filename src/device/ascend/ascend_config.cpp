// The `vnpus:` section and HAMi's chart chip profiles (reference: hami-other-vendors.md B.2 §1).

#include <charconv>

#include "device/ascend/ascend_backend.h"

namespace hamisim::device::ascend {
namespace {

VnpuConfig chip(std::string common_word, std::string chip_name, int64_t allocatable,
                int64_t capacity, int32_t memory_factor, int32_t ai_core, int32_t ai_cpu,
                std::vector<VnpuTemplate> templates) {
  VnpuConfig c;
  c.resource_name = "huawei.com/" + common_word;
  c.resource_memory_name = c.resource_name + "-memory";
  c.resource_core_name = c.resource_name + "-core";
  c.common_word = std::move(common_word);
  c.chip_name = std::move(chip_name);
  c.memory_allocatable = allocatable;
  c.memory_capacity = capacity;
  c.memory_factor = memory_factor;
  c.ai_core = ai_core;
  c.ai_cpu = ai_cpu;
  c.templates = std::move(templates);
  return c;
}

// ConfigSection reads 32-bit integers; HAMi's memory sizes are int64. An integer beyond int32
// is read from its text; anything else keeps the int32 reader's error (key path and line).
Status read_int64(const ConfigSection& s, std::string_view key, int64_t& out) {
  int32_t small = 0;
  const Status as_int32 = s.read(key, small);
  std::string text;
  if (!s.read(key, text) || text.empty()) return as_int32;  // absent, null or not a scalar
  if (as_int32) {
    out = small;
    return as_int32;
  }
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || end != digits.data() + digits.size()) return as_int32;
  out = v;
  return ok_status();
}

Result<VnpuTemplate> read_template(const ConfigSection& s) {
  VnpuTemplate t;
  for (Status st : {s.read("name", t.name), read_int64(s, "memory", t.memory),
                    s.read("aiCore", t.ai_core), s.read("aiCPU", t.ai_cpu)}) {
    if (!st) return st.error();
  }
  return t;
}

Result<VnpuConfig> read_chip(const ConfigSection& s) {
  VnpuConfig c;
  for (Status st : {s.read("commonWord", c.common_word), s.read("chipName", c.chip_name),
                    s.read("resourceName", c.resource_name),
                    s.read("resourceMemoryName", c.resource_memory_name),
                    s.read("resourceCoreName", c.resource_core_name),
                    read_int64(s, "memoryAllocatable", c.memory_allocatable),
                    read_int64(s, "memoryCapacity", c.memory_capacity),
                    s.read("memoryFactor", c.memory_factor), s.read("aiCore", c.ai_core),
                    s.read("aiCPU", c.ai_cpu), s.read("runtimeClassName", c.runtime_class_name),
                    s.read("overwriteEnv", c.overwrite_env), s.read("superPod", c.super_pod)}) {
    if (!st) return st.error();
  }
  auto templates = s.list("templates");
  if (!templates) return templates.error();
  for (const ConfigSection& t : *templates) {
    auto read = read_template(t);
    if (!read) return read.error();
    c.templates.push_back(std::move(read).value());
  }
  return c;
}

}  // namespace

std::vector<VnpuConfig> chart_chips() {
  std::vector<VnpuConfig> chips;
  chips.push_back(chip("Ascend910A", "910A", 32768, 32768, 1, 30, 0,
                       {{"vir02", 2184, 2, 0},
                        {"vir04", 4369, 4, 0},
                        {"vir08", 8738, 8, 0},
                        {"vir16", 17476, 16, 0}}));
  chips.push_back(chip("Ascend910B2", "910B2", 65536, 65536, 1, 24, 6,
                       {{"vir03_1c_8g", 8192, 3, 1},
                        {"vir06_1c_16g", 16384, 6, 1},
                        {"vir12_3c_32g", 32768, 12, 3}}));
  for (const char* cw : {"Ascend910B3", "Ascend910B4-1"}) {
    const std::string_view name(cw);
    chips.push_back(chip(std::string(name), std::string(name.substr(6)), 65536, 65536, 1, 20, 7,
                         {{"vir05_1c_16g", 16384, 5, 1}, {"vir10_3c_32g", 32768, 10, 3}}));
  }
  chips.push_back(chip("Ascend910B4", "910B4", 32768, 32768, 1, 20, 7,
                       {{"vir05_1c_8g", 8192, 5, 1}, {"vir10_3c_16g", 16384, 10, 3}}));
  chips.push_back(chip("Ascend310P", "310P3", 21527, 24576, 1, 8, 7,
                       {{"vir01", 3072, 1, 1}, {"vir02", 6144, 2, 2}, {"vir04", 12288, 4, 4}}));
  // The chart gives 910C no memoryFactor (0) and marks it a super pod.
  VnpuConfig c910c = chip("Ascend910C", "Ascend910", 65536, 65536, 0, 20, 7,
                          {{"vir05_1c_16g", 16384, 5, 1}, {"vir10_3c_32g", 32768, 10, 3}});
  c910c.super_pod = true;
  chips.push_back(std::move(c910c));
  return chips;
}

Result<Backends> make_backends(const ConfigSection& section, bool chart_defaults) {
  Backends out;
  if (chart_defaults) {
    for (VnpuConfig& c : chart_chips()) {
      out.push_back(std::make_shared<AscendBackend>(std::move(c), false));
    }
    return out;
  }
  if (!section.present()) return out;
  // HAMi <= v2.8 had `vnpus:` as the list of chips; v2.10 cannot decode that layout and fails
  // to start, so it is an error here too rather than an Ascend-less scheduler.
  if (auto as_list = section.items()) {
    return make_error(section.path() +
                      ": expected a mapping {hamiVnpuCore, configs}, got a list (the layout "
                      "of HAMi <= v2.8)");
  }
  bool hami_vnpu_core = false;
  if (Status s = section.read("hamiVnpuCore", hami_vnpu_core); !s) return s.error();
  auto configs = section.list("configs");
  if (!configs) return configs.error();
  for (const ConfigSection& entry : *configs) {
    auto chip_config = read_chip(entry);
    if (!chip_config) return chip_config.error();
    out.push_back(std::make_shared<AscendBackend>(std::move(chip_config).value(), hami_vnpu_core));
  }
  return out;
}

}  // namespace hamisim::device::ascend

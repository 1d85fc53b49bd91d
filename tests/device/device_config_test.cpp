// HAMi's device-config.yaml: the keys hamisim reads, their defaults, and the errors for values
// of the wrong type.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/catalog/device_config.h"

namespace hamisim::device {
namespace device_config_test {

using ::testing::HasSubstr;

TEST(DeviceConfig, EmptyFileKeepsHamiChartDefaults) {
  auto config = parse_device_config("");
  ASSERT_TRUE(config) << config.error().message;
  const auto& c = config->nvidia;
  EXPECT_EQ(c.resource_count_name, "nvidia.com/gpu");
  EXPECT_EQ(c.resource_priority_name, "nvidia.com/priority");
  EXPECT_EQ(c.default_gpu_num, 1);
  EXPECT_EQ(c.gpu_core_policy, "");
  EXPECT_FALSE(c.overwrite_env);
  EXPECT_EQ(c.runtime_class_name, "");
}

TEST(DeviceConfig, ReadsEveryNvidiaKey) {
  auto config = parse_device_config(R"(nvidia:
  resourceCountName: example.com/vgpu
  resourceMemoryName: example.com/vmem
  resourceMemoryPercentageName: example.com/vmem-pct
  resourceCoreName: example.com/vcores
  resourcePriorityName: example.com/prio
  defaultMemory: 1024
  defaultCores: 10
  defaultGPUNum: 2
  memoryFactor: 4
  gpuCorePolicy: force
  overwriteEnv: true
  runtimeClassName: nvidia
)");
  ASSERT_TRUE(config) << config.error().message;
  const auto& c = config->nvidia;
  EXPECT_EQ(c.resource_count_name, "example.com/vgpu");
  EXPECT_EQ(c.resource_memory_name, "example.com/vmem");
  EXPECT_EQ(c.resource_memory_percentage_name, "example.com/vmem-pct");
  EXPECT_EQ(c.resource_core_name, "example.com/vcores");
  EXPECT_EQ(c.resource_priority_name, "example.com/prio");
  EXPECT_EQ(c.default_memory, 1024);
  EXPECT_EQ(c.default_cores, 10);
  EXPECT_EQ(c.default_gpu_num, 2);
  EXPECT_EQ(c.memory_factor, 4);
  EXPECT_EQ(c.gpu_core_policy, "force");
  EXPECT_TRUE(c.overwrite_env);
  EXPECT_EQ(c.runtime_class_name, "nvidia");
}

TEST(DeviceConfig, EveryGpuCorePolicyHamiCoreKnowsIsAccepted) {
  for (const char* policy : {"default", "force", "disable"}) {
    auto config = parse_device_config(std::string("nvidia:\n  gpuCorePolicy: ") + policy + "\n");
    ASSERT_TRUE(config) << policy << ": " << config.error().message;
    EXPECT_EQ(config->nvidia.gpu_core_policy, policy);
  }
}

TEST(DeviceConfig, UnknownGpuCorePolicyIsAnErrorNamingKeyAndLine) {
  auto config = parse_device_config("nvidia:\n  defaultGPUNum: 1\n  gpuCorePolicy: Force\n");
  ASSERT_FALSE(config);
  EXPECT_THAT(config.error().message, HasSubstr("nvidia.gpuCorePolicy"));
  EXPECT_THAT(config.error().message, HasSubstr("\"Force\""));
  EXPECT_THAT(config.error().message, HasSubstr("line 3"));
}

TEST(DeviceConfig, OverwriteEnvMustBeABoolean) {
  auto config = parse_device_config("nvidia:\n  overwriteEnv: maybe\n");
  ASSERT_FALSE(config);
  EXPECT_THAT(config.error().message, HasSubstr("nvidia.overwriteEnv: expected a boolean"));
  EXPECT_THAT(config.error().message, HasSubstr("line 2"));

  auto off = parse_device_config("nvidia:\n  overwriteEnv: false\n");
  ASSERT_TRUE(off) << off.error().message;
  EXPECT_FALSE(off->nvidia.overwrite_env);
}

// Issue #26: one number grammar for every file (yaml-cpp read 010 as octal 8 here).
TEST(DeviceConfig, IntegersWithALeadingZeroAreErrors) {
  auto nvidia = parse_device_config("nvidia:\n  defaultMemory: 010\n");
  ASSERT_FALSE(nvidia);
  EXPECT_EQ(nvidia.error().message,
            "nvidia.defaultMemory: \"010\" has a leading zero (octal in YAML 1.1, decimal in "
            "YAML 1.2): write 10, or 8 for octal at line 2");
  auto vendor = parse_device_config("hygon:\n  memoryFactor: 02\n");
  ASSERT_FALSE(vendor);
  EXPECT_THAT(vendor.error().message, HasSubstr("hygon.memoryFactor: \"02\" has a leading zero"));
  auto hex = parse_device_config("nvidia:\n  defaultCores: 0x10\n");
  ASSERT_FALSE(hex);
  EXPECT_THAT(hex.error().message, HasSubstr("nvidia.defaultCores: expected an integer at line 2"));
  auto fine = parse_device_config("nvidia:\n  defaultMemory: 0\n  defaultCores: +10\n");
  ASSERT_TRUE(fine) << fine.error().message;
  EXPECT_EQ(fine->nvidia.default_cores, 10);
}

TEST(DeviceConfig, StringKeysRefuseSequencesAndMappings) {
  for (const char* value : {"[nvidia]", "{name: nvidia}"}) {
    auto config = parse_device_config(std::string("nvidia:\n  runtimeClassName: ") + value + "\n");
    ASSERT_FALSE(config) << value;
    EXPECT_THAT(config.error().message, HasSubstr("nvidia.runtimeClassName: expected a string"));
  }
}

TEST(DeviceConfig, NullValuesKeepDefaults) {
  auto config = parse_device_config(
      "nvidia:\n  gpuCorePolicy: ~\n  overwriteEnv:\n  runtimeClassName: null\n");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->nvidia.gpu_core_policy, "");
  EXPECT_FALSE(config->nvidia.overwrite_env);
  EXPECT_EQ(config->nvidia.runtime_class_name, "");
}

TEST(DeviceConfig, IntegerKeysStillNameTheirType) {
  auto config = parse_device_config("nvidia:\n  defaultGPUNum: one\n");
  ASSERT_FALSE(config);
  EXPECT_THAT(config.error().message, HasSubstr("nvidia.defaultGPUNum: expected an integer"));
}

TEST(DeviceConfig, UnknownSectionsAreListedAsIgnored) {
  auto config = parse_device_config("nvidia: {}\nfuturevendor:\n  resourceCountName: x\n");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->ignored_sections, std::vector<std::string>{"futurevendor"});
}

TEST(DeviceConfig, EveryHamiSectionIsKnown) {
  auto config = parse_device_config(
      "nvidia: {}\ncambricon: {}\nhygon: {}\nmetax: {}\nmthreads: {}\niluvatars: []\n"
      "enflame: {}\nkunlun: {}\nawsneuron: {}\namd: {}\nvastai: {}\nbiren: {}\nvnpus: {}\n");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_TRUE(config->ignored_sections.empty())
      << ::testing::PrintToString(config->ignored_sections);
}

TEST(DeviceConfig, AVendorSectionOfTheWrongShapeIsAnError) {
  auto scalar = parse_device_config("nvidia: {}\nvnpus: 5\n");
  ASSERT_FALSE(scalar);
  EXPECT_THAT(scalar.error().message, HasSubstr("vnpus: expected a mapping at line 2"));
  auto mapping = parse_device_config("iluvatars: {commonWord: MR-V100}\n");
  ASSERT_FALSE(mapping);
  EXPECT_THAT(mapping.error().message, HasSubstr("iluvatars: expected a list at line 1"));
}

TEST(DeviceConfig, GatedFamiliesNeedTheirFlag) {
  DeviceConfig config;
  EXPECT_EQ(build_registry(config).find("MR-V100"), nullptr);
  config.enable_iluvatar = true;
  EXPECT_NE(build_registry(config).find("MR-V100"), nullptr);
}

}  // namespace device_config_test
}  // namespace hamisim::device

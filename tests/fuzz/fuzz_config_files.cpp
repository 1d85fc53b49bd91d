// libFuzzer target: every configuration file hamisim reads, from the same bytes —
// KubeSchedulerConfiguration, kubeconfig, device profiles, node groups and HAMi's device
// config, each also as a ConfigMap or List around it (model/input.h's unwrapping). Each either
// loads or is refused with a message naming what was wrong.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "device/catalog/device_config.h"
#include "extender/scheduler_config.h"
#include "kube/kube_config.h"
#include "model/input.h"
#include "planner/nodegroups/node_groups.h"
#include "profile/device_profiles.h"

namespace {

template <class R>
void expect_message(const R& r) {
  if (!r.ok() && r.error().message.empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hamisim;
  static const device::DeviceRegistry registry = device::build_registry({});
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  expect_message(extender::parse_scheduler_config(text, "fuzz"));
  // Relative paths in the kubeconfig resolve under a directory that does not exist.
  expect_message(kube::parse_kubeconfig(text, "/nonexistent/hamisim-fuzz/kubeconfig"));
  expect_message(profile::parse_device_profiles(text, "fuzz", registry));
  expect_message(planner::nodegroups::parse_node_groups(text, "fuzz"));
  expect_message(device::parse_device_config(text));

  // What a file flag does with the bytes first: unwrap a List or ConfigMap, check the kind.
  static const model::DocumentSpec kScheduler{"--scheduler-config",
                                              {"KubeSchedulerConfiguration"},
                                              "a KubeSchedulerConfiguration",
                                              {"scheduler-config.yaml", "config.yaml"}};
  static const model::DocumentSpec kPriorities{
      "--priority-config", {}, "priorities", {"priorities"}};
  static const model::DocumentSpec kNode{"--node", {"Node"}, "a Node", {}};
  for (const auto* spec : {&kScheduler, &kPriorities, &kNode}) {
    for (const char* key : {"", "config.yaml"}) {
      auto doc = model::unwrap_document(text, "fuzz", key, *spec);
      expect_message(doc);
      if (doc && spec == &kScheduler) {
        expect_message(extender::parse_scheduler_config(doc->text, doc->source));
      }
    }
  }
  return 0;
}

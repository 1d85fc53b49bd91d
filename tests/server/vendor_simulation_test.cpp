// Acceptance test of issue #10: every non-NVIDIA vendor through `POST /filter-simulation`
// (product spec §5.1–§5.3), request JSON in, response JSON out, with the registry
// `hamisim serve --enable-ascend --enable-iluvatar` builds (chart defaults, both gates on) and
// the engine serve uses (template nodes are normalized samples, spec §7.2).
//
// For each vendor backend a template node registers that vendor's devices the way its device
// plugin does (annotation or capacity), and a pod asks for a share:
//   1. it fits, with the Allocations HAMi's PatchAnnotations writes (time keys excepted: the
//      simulation answers the same request with the same bytes);
//   2. the caller packs it again and again through SimulatedPods until the template is full,
//      and the next pod fails with the reason string HAMi gives; dropping the last placed pod
//      (the caller's rollback) makes it fit again;
//   3. a constraint mismatch (UUID filter, type filter, mode, topology) fails with its reason.
// Then one template node registering NVIDIA GPUs and Ascend NPUs answers each pod by its own
// vendor, each vendor packing independently of the other.
//
// Every expected value below is derived from /work/shared/reference/hami-other-vendors.md
// (section named next to each case) and hami-device-model.md §3/§5 (Fit scans the
// policy-sorted list from its end; spread puts the idlest device last; ties keep the
// registration order), never from what the code prints.

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <cctype>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "device/catalog/device_config.h"
#include "extender_fixtures.h"
#include "server/extender_service.h"
#include "server/metrics.h"

namespace hamisim::server {
namespace {

namespace json = boost::json;
using Strings = std::map<std::string, std::string>;
using Limits = std::vector<std::pair<std::string, std::string>>;

// --- request builders --------------------------------------------------------------------------

struct Container {
  std::string name = "main";
  Limits limits;
};

struct PodSpec {
  std::vector<Container> containers;
  Strings annotations;
};

PodSpec one_container(Limits limits, Strings annotations = {}) {
  return PodSpec{{Container{"main", std::move(limits)}}, std::move(annotations)};
}

json::object string_map(const Strings& m) {
  json::object o;
  for (const auto& [k, v] : m) o[k] = v;
  return o;
}

// A pending pod (as CA hands it over: already through the admission webhook); `placed` adds
// the Allocations a previous answer gave it, which is how the caller records a placement.
std::string pod_json(const std::string& name, const PodSpec& spec, const Strings& placed = {}) {
  Strings annotations = spec.annotations;
  for (const auto& [k, v] : placed) annotations[k] = v;
  json::array containers;
  for (const Container& c : spec.containers) {
    json::object limits;
    for (const auto& [k, v] : c.limits) limits[k] = v;
    json::object resources;
    resources["limits"] = std::move(limits);
    json::object container;
    container["name"] = c.name;
    container["resources"] = std::move(resources);
    containers.push_back(std::move(container));
  }
  json::object metadata;
  metadata["name"] = name;
  metadata["namespace"] = "default";
  metadata["uid"] = "uid-" + name;
  metadata["annotations"] = string_map(annotations);
  json::object pod_spec;
  pod_spec["containers"] = std::move(containers);
  json::object pod;
  pod["metadata"] = std::move(metadata);
  pod["spec"] = std::move(pod_spec);
  return json::serialize(pod);
}

struct NodeSpec {
  std::string name;
  Strings annotations = {};
  Strings capacity = {};  // extended resources, on top of cpu/memory/pods
  Strings labels = {};
};

std::string node_json(const NodeSpec& n) {
  Strings capacity = {{"cpu", "64"}, {"memory", "512Gi"}, {"pods", "110"}};
  for (const auto& [k, v] : n.capacity) capacity[k] = v;
  json::object metadata;
  metadata["name"] = n.name;
  metadata["labels"] = string_map(n.labels);
  metadata["annotations"] = string_map(n.annotations);
  json::object status;
  status["capacity"] = string_map(capacity);
  status["allocatable"] = string_map(capacity);
  json::object node;
  node["metadata"] = std::move(metadata);
  node["spec"] = json::object();
  node["status"] = std::move(status);
  return json::serialize(node);
}

// CA's template node name for a node group: template-node-for-<group>-<random>.
std::string template_name(const std::string& group) {
  return "template-node-for-" + group + "-0";
}

// --- the service, as `hamisim serve --enable-ascend --enable-iluvatar` builds it ---------------

device::DeviceConfig serve_device_config() {
  device::DeviceConfig config;  // no --device-config-file: HAMi's chart defaults
  config.enable_ascend = true;
  config.enable_iluvatar = true;
  return config;
}

class Service {
 public:
  Service()
      : registry_(device::build_registry(serve_device_config())),
        profiles_(std::make_shared<profile::DeviceProfiles>()),
        engine_(registry_, profiles_, fit::FitPolicy{"spread", "binpack"}),
        service_(engine_, metrics_, {}) {}

  json::object post(const std::string& body) {
    HttpRequest request;
    request.method = "POST";
    request.target = "/filter-simulation";
    request.content_type = "application/json";
    request.body = body;
    HttpResponse response = service_.filter_simulation(request);
    EXPECT_EQ(response.status, 200);
    return json::parse(response.body).as_object();
  }

 private:
  device::DeviceRegistry registry_;
  std::shared_ptr<profile::DeviceProfiles> profiles_;
  engine::Engine engine_;
  MetricsRegistry metrics_;
  ExtenderService service_;
};

Service& service() {
  static Service s;
  return s;
}

// One node's answer, read from the response JSON.
struct Answer {
  std::string error;
  bool in_nodes = false;  // echoed in Nodes.items
  std::string failed;     // FailedNodes[node]
  std::string cls;        // Diagnostics[node].Class
  std::string reason;     // Diagnostics[node].Reason
  std::string source;     // Diagnostics[node].DeviceSource
  bool has_allocations = false;
  Strings allocations;  // Allocations[node]
};

Answer ask(const std::string& pod, const std::string& node, const std::string& node_name,
           const std::vector<std::string>& placed = {}) {
  testing::ArgsSpec spec;
  spec.pod = pod;
  spec.nodes = {node};
  if (!placed.empty()) spec.simulated_pods[node_name] = placed;
  const json::object r = service().post(testing::args_json(spec));
  Answer a;
  a.error = std::string(r.at("Error").as_string());
  if (!a.error.empty()) return a;
  for (const auto& item : r.at("Nodes").as_object().at("items").as_array()) {
    if (item.as_object().at("metadata").as_object().at("name").as_string() == node_name) {
      a.in_nodes = true;
    }
  }
  if (const auto* f = r.at("FailedNodes").as_object().if_contains(node_name)) {
    a.failed = std::string(f->as_string());
  }
  const auto& diag = r.at("Diagnostics").as_object().at(node_name).as_object();
  a.cls = std::string(diag.at("Class").as_string());
  a.reason = std::string(diag.at("Reason").as_string());
  a.source = std::string(diag.at("DeviceSource").as_string());
  if (const auto* alloc = r.at("Allocations").as_object().if_contains(node_name)) {
    a.has_allocations = true;
    for (const auto& [k, v] : alloc->as_object())
      a.allocations[std::string(k)] = std::string(v.as_string());
  }
  return a;
}

std::string describe(const Answer& a) {
  std::string s = "class=" + a.cls + " failed=\"" + a.failed + "\" error=\"" + a.error + "\"";
  for (const auto& [k, v] : a.allocations) s += "\n  " + k + " = " + v;
  return s;
}

// Packs copies of `pod` onto the template through SimulatedPods, starting from `placed`, until
// one does not fit (or `limit` pods were placed). Each placed pod is the pod itself carrying
// the Allocations it was given.
struct Packing {
  std::vector<Strings> allocations;  // one per pod that fitted, in order
  std::vector<std::string> placed;   // `placed` plus the pods that fitted
  Answer last;                       // the answer that ended the packing
};

Packing pack(const PodSpec& pod, const std::string& node, const std::string& node_name,
             std::vector<std::string> placed = {}, const std::string& prefix = "replica",
             int limit = 40) {
  Packing out;
  out.placed = std::move(placed);
  for (int i = 0; i < limit; ++i) {
    const std::string name = prefix + "-" + std::to_string(i);
    Answer a = ask(pod_json(name, pod), node, node_name, out.placed);
    out.last = a;
    if (!a.error.empty() || !a.in_nodes) break;
    out.allocations.push_back(a.allocations);
    out.placed.push_back(pod_json(name, pod, a.allocations));
  }
  return out;
}

// --- per-vendor cases --------------------------------------------------------------------------

struct Mismatch {
  std::string name;
  PodSpec pod;
  std::string reason;  // FailedNodes text; empty = the pod fits (the backend ignores it)
  std::string cls;     // Diagnostics class; empty = not checked
};

struct VendorCase {
  std::string name;
  NodeSpec node;
  PodSpec pod;
  // Allocations of the first pod on the empty template: keys HAMi writes from the device list
  // alone (exact values), and keys that need the pod or the chosen node (checked apart).
  Strings first;
  Strings context;
  int fits = 0;             // pods that fit before the template is full
  std::string full_reason;  // FailedNodes text for the next one
  std::string full_class;   // its Diagnostics class; empty = not checked
  std::vector<Mismatch> mismatches;
};

std::string join(const std::vector<std::string>& items, const std::string& sep = ",") {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

Strings both_keys(const std::string& to_allocate, const std::string& allocated,
                  const std::string& value) {
  return {{to_allocate, value}, {allocated, value}};
}

PodSpec with(PodSpec pod, Strings annotations) {
  for (auto& [k, v] : annotations) pod.annotations[k] = v;
  return pod;
}

// B.1 AMD: JSON registration typed with the product name, CUs as devcore; limits only; cores
// are a percentage converted to CUs (304 × 25 / 100 = 76); memory before CUs.
VendorCase amd() {
  VendorCase c;
  c.name = "Amd";
  auto gpu = [](int i) {
    return R"({"id":"GPU-)" + std::to_string(i) + R"(","index":)" + std::to_string(i) +
           R"(,"count":4,"devmem":196608,"devcore":304,"type":"AMD Instinct MI300X VF","mode":"hami-core","health":true})";
  };
  c.node = {template_name("amd-mi300x"),
            {{"hami.io/node-amd-register", "[" + gpu(0) + "," + gpu(1) + "]"}},
            {{"amd.com/gpu", "2"}}};
  c.pod = one_container(
      {{"amd.com/gpu", "1"}, {"amd.com/gpumem", "65536"}, {"amd.com/gpucores", "25"}});
  c.first = both_keys("hami.io/amd-devices-to-allocate", "hami.io/amd-devices-allocated",
                      "GPU-1,AMD Instinct MI300X VF,65536,76:;");
  // 3 × 65536 MiB per 196608 MiB GPU (228 of 304 CUs, 3 of 4 slots).
  c.fits = 6;
  c.full_reason = "2/2 CardInsufficientMemory";
  c.full_class = "InsufficientCapacity";
  c.mismatches = {
      {"UuidFilter", with(c.pod, {{"amd.com/use-gpu-uuid", "GPU-7"}}), "2/2 CardUuidMismatch",
       "ConstraintMismatch"},
      {"TypeFilter", with(c.pod, {{"amd.com/use-gputype", "MI250"}}), "2/2 CardTypeMismatch",
       "ConstraintMismatch"},
  };
  return c;
}

// B.2 Ascend, one case per chart chip: JSON registration `hami.io/node-register-<cw>` with
// NetworkID for 910 chips; the webhook has already written an explicit memory (template size,
// or memoryAllocatable for a whole card). Hard split: cores 0, slots = vNPUs per chip.
struct AscendChip {
  std::string cw;
  int npus;
  int count;
  int devmem;
  int devcore;
  int nums;                 // NPUs per pod
  int memory;               // per NPU, as the webhook wrote it
  std::string temp;         // trimMemory(memory).name, empty for a whole card
  std::vector<int> chosen;  // indexes of the first pod's NPUs, in selection order
  int fits;
  std::string full_reason;
  std::string uuid_reason;  // with hami.io/use-<cw>-uuid naming no NPU
};

std::string npu_id(const std::string& cw, int i) {
  return cw + "-npu-" + std::to_string(i);
}

VendorCase ascend(const AscendChip& a) {
  VendorCase c;
  std::string name = a.cw;
  for (char& ch : name) {
    if (ch == '-') ch = '_';
  }
  c.name = name;
  const bool network = a.cw.starts_with("Ascend910");
  std::vector<std::string> npus;
  for (int i = 0; i < a.npus; ++i) {
    std::string e = R"({"id":")" + npu_id(a.cw, i) + R"(","index":)" + std::to_string(i) +
                    R"(,"count":)" + std::to_string(a.count) + R"(,"devmem":)" +
                    std::to_string(a.devmem) + R"(,"devcore":)" + std::to_string(a.devcore) +
                    R"(,"type":")" + a.cw + R"(","health":true)";
    // The plugin's NetworkID rule: Ascend910C -> 0; otherwise index > 3 -> 1, else 0.
    if (network) {
      e += R"(,"custominfo":{"NetworkID":)" +
           std::string(i > 3 && a.cw != "Ascend910C" ? "1" : "0") + "}";
    }
    npus.push_back(e + "}");
  }
  std::string group = a.cw;
  for (char& ch : group) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  c.node = {
      template_name(group),
      {{"hami.io/node-register-" + a.cw, "[" + join(npus) + "]"}, {"hami-vnpu-core", "false"}}};
  const std::string count = "huawei.com/" + a.cw;
  c.pod = one_container(
      {{count, std::to_string(a.nums)}, {count + "-memory", std::to_string(a.memory)}});
  std::string value;
  std::vector<std::string> runtime;
  for (int i : a.chosen) {
    value += npu_id(a.cw, i) + "," + a.cw + "," + std::to_string(a.memory) + ",0:";
    std::string r = R"({"UUID":")" + npu_id(a.cw, i) + "\"";
    if (!a.temp.empty()) r += R"(,"temp":")" + a.temp + "\"";
    r += R"(,"memory":)" + std::to_string(a.memory) + "}";
    runtime.push_back(r);
  }
  c.first = both_keys("hami.io/" + a.cw + "-devices-to-allocate",
                      "hami.io/" + a.cw + "-devices-allocated", value + ";");
  c.first["huawei.com/" + a.cw] = "[" + join(runtime) + "]";
  c.fits = a.fits;
  c.full_reason = a.full_reason;
  c.full_class = "InsufficientCapacity";
  c.mismatches = {{"UuidFilter", with(c.pod, {{"hami.io/use-" + a.cw + "-uuid", "npu-none"}}),
                   a.uuid_reason, ""}};
  return c;
}

// clang-format off
std::vector<VendorCase> ascend_cases() {
  std::vector<VendorCase> out;
  // Ascend910A: vir08 = 8738 MiB; 3 fit in 32768 MiB per NPU (the 4th slot has 6554 MiB).
  out.push_back(ascend({"Ascend910A", 2, 4, 32768, 30, 1, 8738, "vir08", {1}, 6,
                        "2/2 CardInsufficientMemory", "2/2 CardUuidMismatch"}));
  // Ascend910B2: vir12_3c_32g = 32768 MiB; 2 fit in 65536 MiB.
  out.push_back(ascend({"Ascend910B2", 1, 4, 65536, 24, 1, 32768, "vir12_3c_32g", {0}, 2,
                        "1/1 CardInsufficientMemory", "1/1 CardUuidMismatch"}));
  // Ascend910B3: vir05_1c_16g; 4 slots and 4 × 16384 MiB per NPU: the slot check comes first.
  VendorCase b3 = ascend({"Ascend910B3", 2, 4, 65536, 20, 1, 16384, "vir05_1c_16g", {1}, 8,
                          "2/2 CardTimeSlicingExhausted", "2/2 CardUuidMismatch"});
  // A soft-split pod on a node without hami-vnpu-core: GenReason({ModeNotFit: 1}, 2).
  b3.mismatches.push_back({"SoftSplitOnHardSplitNode",
                           with(b3.pod, {{"huawei.com/vnpu-mode", "hami-core"}}), "1/2 ModeNotFit",
                           "ConstraintMismatch"});
  out.push_back(std::move(b3));
  // Ascend910B4-1: 2 vNPU slots per chip.
  out.push_back(ascend({"Ascend910B4-1", 1, 2, 65536, 20, 1, 16384, "vir05_1c_16g", {0}, 2,
                        "1/1 CardTimeSlicingExhausted", "1/1 CardUuidMismatch"}));
  // Ascend910B4: a whole card (memoryAllocatable 32768, no template name).
  out.push_back(ascend({"Ascend910B4", 1, 4, 32768, 20, 1, 32768, "", {0}, 1,
                        "1/1 CardInsufficientMemory", "1/1 CardUuidMismatch"}));
  // Ascend310P: vir02 = 6144 MiB; 3 fit in 21527 MiB (no NetworkID: not a 910 chip).
  out.push_back(ascend({"Ascend310P", 1, 7, 21527, 8, 1, 6144, "vir02", {0}, 3,
                        "1/1 CardInsufficientMemory", "1/1 CardUuidMismatch"}));
  // Ascend910C (superPod): the webhook turned `1` into `2`; modules are NPU pairs by Idx / 2.
  // NPUs 0, 1 (module 0, complete) and 2 (module 1, half). Each pod takes module 0; once its
  // slots are used only NPU 2 is collected, no complete module remains, and the failure's
  // denominator is the request (2), not the device count (3).
  VendorCase c = ascend({"Ascend910C", 3, 4, 65536, 20, 2, 16384, "vir05_1c_16g", {1, 0}, 4,
                         "0/2 AllocatedCardsInsufficientRequest, 2/2 CardTimeSlicingExhausted",
                          "2/2 CardUuidMismatch"});
  c.mismatches = {{"UuidFilter",
                   with(c.pod, {{"hami.io/use-Ascend910C-uuid", npu_id("Ascend910C", 2)}}),
                   "0/2 AllocatedCardsInsufficientRequest, 2/2 CardUuidMismatch", ""}};
  out.push_back(std::move(c));
  return out;
}
// clang-format on

// B.3 AWS Neuron: devices from capacity (2 cores each, mask 3) and the instance-type label;
// a one-core request takes one core mask (1, then the other core 2) of one device.
VendorCase aws_neuron() {
  VendorCase c;
  c.name = "AwsNeuron";
  const std::string node = template_name("trn1");
  c.node = {node,
            {},
            {{"aws.amazon.com/neuron", "2"}, {"aws.amazon.com/neuroncore", "4"}},
            {{"node.kubernetes.io/instance-type", "trn1.2xlarge"}}};
  c.pod = one_container({{"aws.amazon.com/neuroncore", "1"}});
  c.first = {{"hami.io/aws-neuron-devices-allocated", node + "-AWSNeuron-1,AWSNeuron,0,1:;"}};
  // Core request: coresPerAWSNeuron (2) × Idx (1), mask bit 1 -> "2".
  c.context = {{"AWS_NEURON_IDS", "2"},
               {"NEURON_RESOURCE_TYPE", "aws.amazon.com/neuroncore"},
               {"NEURON_ALLOCATED", "false"},
               {"aws.amazon.com/predicate-node", node}};
  // Two slots (cores) per device.
  c.fits = 4;
  c.full_reason = "2/2 CardTimeSlicingExhausted";
  c.full_class = "InsufficientCapacity";
  c.mismatches = {
      {"UuidFilter", with(c.pod, {{"aws.amazon.com/use-neuron-uuid", "nope"}}),
       "2/2 CardUuidMismatch", "ConstraintMismatch"},
      // Trainium windows are 1, 4, 8 or 16 devices: two whole devices have none.
      {"TrainiumWindow", one_container({{"aws.amazon.com/neuron", "2"}}), "1/2 NumaNotFit",
       "ConstraintMismatch"},
  };
  return c;
}

// B.4 Biren: JSON registration, whole devices shared only through `count` slots.
VendorCase biren() {
  VendorCase c;
  c.name = "Biren";
  c.node = {
      template_name("biren"),
      {{"hami.io/node-biren-register",
        R"([{"id":"biren-0","index":0,"count":2,"devmem":32768,"type":"Biren","health":true},)"
        R"({"id":"biren-1","index":1,"count":2,"devmem":32768,"type":"Biren","health":true}])"}}};
  c.pod = one_container({{"birentech.com/gpu", "1"}});
  c.first = both_keys("hami.io/Biren-devices-to-allocate", "hami.io/Biren-devices-allocated",
                      "biren-1,Biren,0,0:;");
  c.fits = 4;
  c.full_reason = "2/2 CardTimeSlicingExhausted";
  c.full_class = "InsufficientCapacity";
  c.mismatches = {{"UuidFilter", with(c.pod, {{"birentech.com/use-gpuuuid", "biren-7"}}),
                   "2/2 CardUuidMismatch", "ConstraintMismatch"}};
  return c;
}

// B.5 Cambricon: devices from capacity (vcore 200 -> 2 MLUs, 64 × 256 × 100 / 200 = 8192
// MiB each); memory in 256 MiB units; the DSMLU profile names the first device.
VendorCase cambricon() {
  VendorCase c;
  c.name = "Cambricon";
  const std::string node = template_name("mlu370");
  c.node = {node,
            {},
            {{"cambricon.com/mlu.smlu.vcore", "200"}, {"cambricon.com/mlu.smlu.vmemory", "64"}}};
  c.pod = one_container({{"cambricon.com/vmlu", "1"},
                         {"cambricon.com/mlu.smlu.vmemory", "8"},
                         {"cambricon.com/mlu.smlu.vcore", "30"}});
  c.first =
      both_keys("hami.io/cambricon-mlu-devices-to-allocate",
                "hami.io/cambricon-mlu-devices-allocated", node + "-cambricon-mlu-1,MLU,2048,30:;");
  c.first["CAMBRICON_DSMLU_ASSIGNED"] = "false";
  c.first["CAMBRICON_DSMLU_PROFILE"] = "1_30_8";  // Idx_Usedcores_Usedmem/256
  // 3 × 30 % per MLU; the 4th finds memory (2048 MiB left) but 10 % of the cores.
  c.fits = 6;
  c.full_reason = "2/2 CardInsufficientCore";
  c.full_class = "InsufficientCapacity";
  c.mismatches = {{"UuidFilter", with(c.pod, {{"cambricon.com/use-gpuuuid", "mlu-7"}}),
                   "2/2 CardUuidMismatch", "ConstraintMismatch"}};
  return c;
}

// B.6.a Enflame GCU: whole exclusive cards from capacity; reads no pod annotation.
VendorCase enflame_gcu() {
  VendorCase c;
  c.name = "EnflameGcu";
  const std::string node = template_name("gcu");
  c.node = {node, {}, {{"enflame.com/gcu", "2"}}};
  c.pod = one_container({{"enflame.com/gcu", "1"}});
  c.first = both_keys("hami.io/enflame-gcu-devices-to-allocate",
                      "hami.io/enflame-gcu-devices-allocated", node + "-GCU-1,GCU,100,100:;");
  c.fits = 2;
  c.full_reason = "2/2 ExclusiveDeviceAllocateConflict";
  c.full_class = "InsufficientCapacity";
  c.mismatches = {
      // No UUID or type filter exists for GCU: the DRS backend's UUID key changes nothing.
      {"UuidAnnotationIsNotRead", with(c.pod, {{"enflame.com/use-gpuuuid", "nope"}}), "", ""},
      {"MoreCardsThanRegistered", one_container({{"enflame.com/gcu", "3"}}),
       "NodeInsufficientDevice", "InsufficientCapacity"},
  };
  return c;
}

// B.6.b Enflame DRS: the gcu-drs-capacity annotation (maxSlice 6, 40 GiB); a request of 3
// slices is profile 3g.20gb (20480 MiB, ceil(3 × 100 / 6) = 50 %).
VendorCase enflame_drs() {
  VendorCase c;
  c.name = "EnflameDrs";
  const std::string node = template_name("drs");
  c.node = {
      node,
      {{"enflame.com/gcu-drs-capacity",
        R"({"devices":[{"index":"0","minor":"0","capacity":6},{"index":"1","minor":"1","capacity":6}],)"
        R"("profiles":{"1g.6gb":"0","3g.20gb":"1","6g.40gb":"2"}})"}}};
  c.pod = one_container({{"enflame.com/drs-gcu", "3"}});
  c.first = {{"hami.io/enflame-vgpu-devices-allocated", node + "-enflame-drs-1,Enflame,20480,50:;"},
             {"enflame.com/gcu-assigned", "false"},
             {"enflame.com/gcu-request-size", "3"}};
  c.context = {
      {"enflame.com/gcu-assigned-index", "1"},
      {"enflame.com/gcu-assigned-id", "1"},
      {"enflame.com/gcu-assigned-minor", "1"},
      {"assigned-containers",
       R"({"main":{"allocated":false,"request":3,"profileID":"1","profileName":"3g.20gb"}})"}};
  // Two 20 GiB partitions per 40 GiB card.
  c.fits = 4;
  c.full_reason = "2/2 CardInsufficientMemory";
  c.full_class = "InsufficientCapacity";
  c.mismatches = {
      {"UuidFilter", with(c.pod, {{"enflame.com/use-gpuuuid", "nope"}}), "2/2 CardUuidMismatch",
       "ConstraintMismatch"},
      // No profile has 4 slices: GenReason({ModeNotFit: 1}, 2).
      {"NoSuchProfile", one_container({{"enflame.com/drs-gcu", "4"}}), "1/2 ModeNotFit",
       "ConstraintMismatch"},
  };
  return c;
}

// B.7 Hygon: legacy colon registration; model and UUID filters; here under the mutex policy,
// which refuses any device that already has a task.
VendorCase hygon() {
  VendorCase c;
  c.name = "Hygon";
  c.node = {template_name("dcu"),
            {{"hami.io/node-dcu-register",
              "dcu-0,4,16384,100,DCU-K100_AI,0,true,0,hami-core:"
              "dcu-1,4,16384,100,DCU-K100_AI,0,true,1,hami-core:"}}};
  c.pod = one_container(
      {{"hygon.com/dcunum", "1"}, {"hygon.com/dcumem", "1024"}, {"hygon.com/dcucores", "10"}},
      {{"hami.io/gpu-scheduler-policy", "mutex"}});
  c.first = both_keys("hami.io/dcu-devices-to-allocate", "hami.io/dcu-devices-allocated",
                      "dcu-1,DCU,1024,10:;");
  c.fits = 2;
  c.full_reason = "2/2 ExclusiveDeviceAllocateConflict";
  c.full_class = "InsufficientCapacity";
  c.mismatches = {
      {"TypeFilter", with(c.pod, {{"hygon.com/use-dcutype", "Z100"}}), "2/2 CardTypeMismatch",
       "ConstraintMismatch"},
      {"UuidFilter", with(c.pod, {{"hygon.com/nouse-gpuuuid", "dcu-0,dcu-1"}}),
       "2/2 CardUuidMismatch", "ConstraintMismatch"},
  };
  return c;
}

// B.8 Iluvatar, one case per chart chip: colon registration `hami.io/node-<cw>-register`,
// memory in 256 MiB units, cores default 0.
struct IluvatarChip {
  std::string cw;
  std::string name;
  int gpus;
  int count;
  int devmem;
  std::string vmem;   // 256 MiB units
  std::string vcore;  // empty: not asked
  std::string first;
  int fits;
  std::string full_reason;
};

VendorCase iluvatar(const IluvatarChip& i) {
  VendorCase c;
  c.name = i.name;
  std::string lower = i.cw;
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  std::string reg;
  for (int g = 0; g < i.gpus; ++g) {
    reg += lower + "-" + std::to_string(g) + "," + std::to_string(i.count) + "," +
           std::to_string(i.devmem) + ",100," + i.cw + ",0,true," + std::to_string(g) +
           ",hami-core:";
  }
  c.node = {template_name(lower), {{"hami.io/node-" + i.cw + "-register", reg}}};
  Limits limits = {{"iluvatar.ai/" + i.cw + "-vgpu", "1"},
                   {"iluvatar.ai/" + i.cw + ".vMem", i.vmem}};
  if (!i.vcore.empty()) limits.emplace_back("iluvatar.ai/" + i.cw + ".vCore", i.vcore);
  c.pod = one_container(limits);
  c.first = both_keys("hami.io/" + i.cw + "-devices-to-allocate",
                      "hami.io/" + i.cw + "-devices-allocated", i.first);
  c.fits = i.fits;
  c.full_reason = i.full_reason;
  c.full_class = "InsufficientCapacity";
  const std::string n = std::to_string(i.gpus);
  c.mismatches = {{"UuidFilter", with(c.pod, {{"hami.io/use-" + i.cw + "-uuid", "none"}}),
                   n + "/" + n + " CardUuidMismatch", "ConstraintMismatch"}};
  return c;
}

// clang-format off
std::vector<VendorCase> iluvatar_cases() {
  return {
      // 4 × (2048 MiB, 25 %) per 8192 MiB GPU; memory is checked before cores.
      iluvatar({"MR-V100", "IluvatarMR_V100", 2, 10, 8192, "8", "25",
                "mr-v100-1,MR-V100,2048,25:;", 8, "2/2 CardInsufficientMemory"}),
      // 2 slots.
      iluvatar({"MR-V50", "IluvatarMR_V50", 1, 2, 16384, "4", "",
                "mr-v50-0,MR-V50,1024,0:;", 2, "1/1 CardTimeSlicingExhausted"}),
      // 2 × 40 % of the cores.
      iluvatar({"BI-V150", "IluvatarBI_V150", 1, 10, 32768, "16", "40",
                "bi-v150-0,BI-V150,4096,40:;", 2, "1/1 CardInsufficientCore"}),
      // A whole GPU's cores each.
      iluvatar({"BI-V100", "IluvatarBI_V100", 2, 10, 16384, "4", "100",
                "bi-v100-1,BI-V100,1024,100:;", 2, "2/2 CardInsufficientCore"}),
  };
}
// clang-format on

// B.9.a Kunlun whole cards: capacity, 8-XPU topology selector (an idle node's single card is
// index 0: the left wing has exactly 4 free); no UUID-free card -> CardUuidMismatch per card.
VendorCase kunlun() {
  VendorCase c;
  c.name = "KunlunXpu";
  const std::string node = template_name("p800");
  c.node = {node, {}, {{"kunlunxin.com/xpu", "8"}}};
  c.pod = one_container({{"kunlunxin.com/xpu", "1"}});
  c.first = {{"hami.io/kunlun-allocated", node + "-kunlun-0,kunlun,98304,100:;"},
             {"BAIDU_COM_DEVICE_IDX", "0"}};
  c.fits = 8;
  c.full_reason = "1/8 NumaNotFit";
  c.mismatches = {
      {"UuidFilter", with(c.pod, {{"hami.io/use-xpu-uuid", "none"}}), "8/8 CardUuidMismatch",
       "ConstraintMismatch"},
      {"BaiduUuidFilter", with(c.pod, {{"baidu.com/use-gpuuuid", "none"}}), "8/8 CardUuidMismatch",
       "ConstraintMismatch"},
      // Only 1, 2, 4 or 8 cards form a topology-valid selection.
      {"ThreeCards", one_container({{"kunlunxin.com/xpu", "3"}}), "1/8 NumaNotFit",
       "ConstraintMismatch"},
  };
  return c;
}

// B.9.b Kunlun vXPU: JSON registration; half cards (49152 MiB, 50 %) share a card only with
// half cards. Idle: left wing has 2 free = the "slots 3" size -> position 0.
VendorCase kunlun_vxpu() {
  VendorCase c;
  c.name = "KunlunVxpu";
  c.node = {
      template_name("vxpu"),
      {{"hami.io/node-register-xpu",
        R"([{"id":"xpu-0","index":0,"count":4,"devmem":98304,"devcore":100,"type":"XPU","health":true},)"
        R"({"id":"xpu-1","index":1,"count":4,"devmem":98304,"devcore":100,"type":"XPU","health":true}])"}}};
  c.pod = one_container({{"kunlunxin.com/vxpu", "1"}, {"kunlunxin.com/vxpu-memory", "49152"}});
  c.first = both_keys("hami.io/xpu-devices-to-allocate", "hami.io/xpu-devices-allocated",
                      "xpu-0,XPU,49152,50:;");
  c.fits = 4;
  c.full_reason = "1/2 NumaNotFit";
  c.mismatches = {{"UuidFilter", with(c.pod, {{"hami.io/use-xpu-uuid", "none"}}),
                   "2/2 CardUuidMismatch", "ConstraintMismatch"}};
  return c;
}

// B.10.a MetaX GPU: whole cards from capacity (Count 1); no UUID filters; custom rule: all
// containers of a pod on one card.
VendorCase metax_gpu() {
  VendorCase c;
  c.name = "MetaxGpu";
  const std::string node = template_name("c500");
  c.node = {node, {}, {{"metax-tech.com/gpu", "2"}}};
  c.pod = one_container({{"metax-tech.com/gpu", "1"}});
  c.first =
      both_keys("hami.io/metax-gpu-devices-to-allocate", "hami.io/metax-gpu-devices-allocated",
                node + "-metax-1,Metax-GPU,65536,100:;");
  c.fits = 2;
  c.full_reason = "2/2 CardTimeSlicingExhausted";
  c.full_class = "InsufficientCapacity";
  PodSpec two{{Container{"a", {{"metax-tech.com/gpu", "1"}}},
               Container{"b", {{"metax-tech.com/gpu", "1"}}}},
              {}};
  c.mismatches = {
      {"SecondContainerOnAnotherCard", two,
       "1/2 CardNotFoundCustomFilterRule, 1/2 CardTimeSlicingExhausted", ""},
      {"UuidAnnotationIsNotRead", with(c.pod, {{"metax-tech.com/use-gpuuuid", "nope"}}), "", ""},
  };
  return c;
}

std::string sgpu(const std::string& uuid, int index, int count, const std::string& qos) {
  return R"({"uuid":")" + uuid + R"(","bdf":"0000:3)" + std::to_string(index) +
         R"(:00.0","model":"MXC500","totalDevCount":)" + std::to_string(count) +
         R"(,"totalCompute":100,"totalVRam":65536,"numa":0,"healthy":true,"qosPolicy":")" + qos +
         R"(","linkZone":0})";
}

// B.10.b MetaX sGPU: own JSON schema; vmemory bare = GiB; the webhook wrote the default QoS
// best-effort, which the devices run.
VendorCase metax_sgpu() {
  VendorCase c;
  c.name = "MetaxSgpu";
  c.node = {template_name("sgpu"),
            {{"metax-tech.com/node-gpu-devices", "[" + sgpu("GPU-a", 0, 4, "best-effort") + "," +
                                                     sgpu("GPU-b", 1, 4, "best-effort") + "]"}}};
  c.pod = one_container({{"metax-tech.com/sgpu", "1"},
                         {"metax-tech.com/vcore", "30"},
                         {"metax-tech.com/vmemory", "16"}},
                        {{"metax-tech.com/sgpu-qos-policy", "best-effort"}});
  c.first = both_keys("hami.io/metax-sgpu-devices-to-allocate",
                      "hami.io/metax-sgpu-devices-allocated", "GPU-b,Metax-SGPU,16384,30:;");
  c.first["metax-tech.com/gpu-devices-allocated"] =
      R"([[{"uuid":"GPU-b","compute":30,"vRam":16384}]])";
  // 3 × 30 % per GPU (memory would take 4).
  c.fits = 6;
  c.full_reason = "2/2 CardInsufficientCore";
  c.full_class = "InsufficientCapacity";
  c.mismatches = {{"UuidFilter", with(c.pod, {{"metax-tech.com/use-gpuuuid", "GPU-z"}}),
                   "2/2 CardUuidMismatch", "ConstraintMismatch"}};
  return c;
}

// B.11 Moore Threads: capacity split into GPUs (32 core groups -> 2 GPUs of 16 groups and
// 192 × 512 × 16 / 32 = 49152 MiB); memory in 512 MiB units; UUID keys on mthreads.ai.
VendorCase mthreads() {
  VendorCase c;
  c.name = "Mthreads";
  const std::string node = template_name("s4000");
  c.node = {node, {}, {{"mthreads.com/sgpu-core", "32"}, {"mthreads.com/sgpu-memory", "192"}}};
  c.pod = one_container({{"mthreads.com/vgpu", "1"},
                         {"mthreads.com/sgpu-memory", "8"},
                         {"mthreads.com/sgpu-core", "4"}});
  // The to-allocate key is registered but never written.
  c.first = {{"hami.io/mthreads-vgpu-devices-allocated", node + "-mthreads-1,Mthreads,4096,4:;"},
             {"mthreads.com/gpu-index", "1"}};
  c.context = {{"mthreads.com/predicate-node", node}};
  // 4 × 4 of 16 core groups per GPU.
  c.fits = 8;
  c.full_reason = "2/2 CardInsufficientCore";
  c.full_class = "InsufficientCapacity";
  c.mismatches = {{"UuidFilter", with(c.pod, {{"mthreads.ai/use-gpuuuid", "nope"}}),
                   "2/2 CardUuidMismatch", "ConstraintMismatch"}};
  return c;
}

// B.12 Vastai in die mode: two cards (AIC 0 and 1) of two dies each, one slot per die; under
// mutex a card with a busy die is refused whole.
VendorCase vastai() {
  VendorCase c;
  c.name = "Vastai";
  auto die = [](int i) {
    return R"({"id":"va-)" + std::to_string(i) + R"(","index":)" + std::to_string(i) +
           R"(,"count":1,"devmem":16384,"type":"Vastai","health":true,"custominfo":{"AIC":")" +
           std::to_string(i / 2) + R"(","DeviceStrategy":"die"}})";
  };
  c.node = {template_name("va1"),
            {{"hami.io/node-va-register",
              "[" + die(0) + "," + die(1) + "," + die(2) + "," + die(3) + "]"}}};
  c.pod = one_container({{"vastaitech.com/va", "1"}}, {{"hami.io/gpu-scheduler-policy", "mutex"}});
  c.first = both_keys("hami.io/Vastai-devices-to-allocate", "hami.io/Vastai-devices-allocated",
                      "va-3,Vastai,0,0:;");
  // One pod per card: the busy dies have no slot, their siblings are on an occupied card.
  c.fits = 2;
  c.full_reason = "2/4 CardTimeSlicingExhausted, 2/4 ExclusiveDeviceAllocateConflict";
  c.full_class = "InsufficientCapacity";
  c.mismatches = {{"UuidFilter", with(c.pod, {{"vastaitech.com/use-gpuuuid", "va-9"}}),
                   "4/4 CardUuidMismatch", "ConstraintMismatch"}};
  return c;
}

std::vector<VendorCase> vendor_cases() {
  std::vector<VendorCase> out = {amd()};
  for (auto& c : ascend_cases()) out.push_back(std::move(c));
  out.push_back(aws_neuron());
  out.push_back(biren());
  out.push_back(cambricon());
  out.push_back(enflame_gcu());
  out.push_back(enflame_drs());
  out.push_back(hygon());
  for (auto& c : iluvatar_cases()) out.push_back(std::move(c));
  out.push_back(kunlun());
  out.push_back(kunlun_vxpu());
  out.push_back(metax_gpu());
  out.push_back(metax_sgpu());
  out.push_back(mthreads());
  out.push_back(vastai());
  return out;
}

std::vector<VendorCase> cases_with_context_keys() {
  std::vector<VendorCase> out;
  for (auto& c : vendor_cases()) {
    if (!c.context.empty()) out.push_back(std::move(c));
  }
  return out;
}

// --- the per-vendor tests ----------------------------------------------------------------------

class VendorSimulation : public ::testing::TestWithParam<VendorCase> {};

// (1) The pod fits the template with HAMi's allocation annotations.
TEST_P(VendorSimulation, FitsWithTheExpectedAllocations) {
  const VendorCase& c = GetParam();
  const Answer a = ask(pod_json("first", c.pod), node_json(c.node), c.node.name);
  ASSERT_EQ(a.error, "");
  ASSERT_TRUE(a.in_nodes) << describe(a);
  EXPECT_EQ(a.failed, "");
  EXPECT_EQ(a.cls, "Fits");
  EXPECT_EQ(a.source, "sample");  // a template's own registration (spec §5.3 step 3)
  ASSERT_TRUE(a.has_allocations);
  for (const auto& [key, value] : c.first) {
    auto it = a.allocations.find(key);
    if (it == a.allocations.end()) {
      ADD_FAILURE() << "Allocations lack " << key << "\n" << describe(a);
    } else {
      EXPECT_EQ(it->second, value) << key;
    }
  }
  // Nothing else: keys carrying the scheduling time are left out of simulation answers.
  for (const auto& [key, value] : a.allocations) {
    EXPECT_TRUE(c.first.contains(key) || c.context.contains(key))
        << "unexpected allocation annotation " << key << " = " << value;
  }
}

// (2) SimulatedPods pack the template until it is full; the next pod gets HAMi's reason, and
// the caller's rollback (dropping its last placed pod) makes room again.
TEST_P(VendorSimulation, PacksThroughSimulatedPodsUntilFull) {
  const VendorCase& c = GetParam();
  const std::string node = node_json(c.node);
  const Packing p = pack(c.pod, node, c.node.name);
  ASSERT_EQ(p.last.error, "");
  EXPECT_EQ(static_cast<int>(p.allocations.size()), c.fits) << describe(p.last);
  EXPECT_FALSE(p.last.in_nodes);
  EXPECT_EQ(p.last.failed, c.full_reason);
  EXPECT_EQ(p.last.reason, c.full_reason);
  if (!c.full_class.empty()) {
    EXPECT_EQ(p.last.cls, c.full_class);
  }
  EXPECT_FALSE(p.last.has_allocations);
  ASSERT_FALSE(p.allocations.empty());
  EXPECT_EQ(p.allocations.front(), ask(pod_json("first", c.pod), node, c.node.name).allocations);

  std::vector<std::string> rolled_back = p.placed;
  rolled_back.pop_back();
  const Answer again = ask(pod_json("retry", c.pod), node, c.node.name, rolled_back);
  EXPECT_TRUE(again.in_nodes) << describe(again);
  EXPECT_EQ(again.allocations, p.allocations.back());
}

// (3) A constraint the template cannot meet fails with its own reason.
TEST_P(VendorSimulation, ConstraintMismatchFailsWithItsReason) {
  const VendorCase& c = GetParam();
  ASSERT_FALSE(c.mismatches.empty());
  const std::string node = node_json(c.node);
  for (const Mismatch& m : c.mismatches) {
    SCOPED_TRACE(m.name);
    const Answer a = ask(pod_json("mismatch", m.pod), node, c.node.name);
    ASSERT_EQ(a.error, "");
    if (m.reason.empty()) {
      EXPECT_TRUE(a.in_nodes) << describe(a);
      EXPECT_EQ(a.cls, "Fits");
      continue;
    }
    EXPECT_FALSE(a.in_nodes);
    EXPECT_EQ(a.failed, m.reason);
    if (!m.cls.empty()) {
      EXPECT_EQ(a.cls, m.cls);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Issue10, VendorSimulation, ::testing::ValuesIn(vendor_cases()),
                         [](const auto& info) { return info.param.name; });

// The keys HAMi's PatchAnnotations derives from the pod (container names, which resource was
// asked) or the chosen node (its name, a card's index and minor): the live path writes them on
// the pod for that node, so the simulation's Allocations carry them too (spec §5.1).
class VendorContextKeys : public ::testing::TestWithParam<VendorCase> {};

TEST_P(VendorContextKeys, AllocationsCarryTheKeysThatNeedThePodOrTheNode) {
  const VendorCase& c = GetParam();
  const Answer a = ask(pod_json("first", c.pod), node_json(c.node), c.node.name);
  ASSERT_TRUE(a.in_nodes) << describe(a);
  for (const auto& [key, value] : c.context) {
    auto it = a.allocations.find(key);
    if (it == a.allocations.end()) {
      ADD_FAILURE() << "Allocations lack " << key << " (expected \"" << value << "\")";
    } else {
      EXPECT_EQ(it->second, value) << key;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Issue10, VendorContextKeys, ::testing::ValuesIn(cases_with_context_keys()),
                         [](const auto& info) { return info.param.name; });

// --- MetaX sGPU: the pods already on a device decide its class and QoS (B.10.b §4) ----------

NodeSpec one_sgpu_node(const std::string& qos) {
  return {template_name("sgpu-" + qos),
          {{"metax-tech.com/node-gpu-devices", "[" + sgpu("GPU-a", 0, 4, qos) + "]"}}};
}

// checkAppClass reads the pods on the device (DeviceUsage.PodInfos, rebuilt from the pods on
// the node): online pods share a device with online pods, never with unclassed ones.
TEST(MetaxSgpuSimulatedPods, OnlinePodsShareADeviceOnlyWithClassedPods) {
  const NodeSpec n = one_sgpu_node("best-effort");
  const std::string node = node_json(n);
  const PodSpec online =
      one_container({{"metax-tech.com/sgpu", "1"}, {"metax-tech.com/vmemory", "16"}},
                    {{"metax-tech.com/sgpu-app-class", "online"}});
  const Packing p = pack(online, node, n.name, {}, "online");
  ASSERT_FALSE(p.allocations.empty()) << describe(p.last);
  // Online pods reserve no cores.
  EXPECT_EQ(p.allocations[0].at("hami.io/metax-sgpu-devices-allocated"),
            "GPU-a,Metax-SGPU,16384,0:;");
  EXPECT_EQ(p.allocations[0].at("metax-tech.com/gpu-devices-allocated"),
            R"([[{"uuid":"GPU-a","vRam":16384}]])");
  // Four 16 GiB online pods in 4 slots / 64 GiB.
  EXPECT_EQ(p.allocations.size(), 4u);
  EXPECT_EQ(p.last.failed, "1/1 CardTimeSlicingExhausted");

  // An unclassed pod does not join a device running an online pod.
  const PodSpec unclassed = one_container({{"metax-tech.com/sgpu", "1"},
                                           {"metax-tech.com/vcore", "10"},
                                           {"metax-tech.com/vmemory", "1"}},
                                          {{"metax-tech.com/sgpu-qos-policy", "best-effort"}});
  const std::vector<std::string> one_online(p.placed.begin(), p.placed.begin() + 1);
  const Answer a = ask(pod_json("unclassed", unclassed), node, n.name, one_online);
  EXPECT_EQ(a.failed, "1/1 CardAppClassMismatch") << describe(a);
}

// checkDeviceQos: once a best-effort pod runs on the device, the device runs best-effort (HAMi's
// QoS cache until the device plugin reports it; hamisim derives it from the pods on the node,
// docs/deviations.md #25): best-effort pods keep packing, a fixed-share pod is refused.
TEST(MetaxSgpuSimulatedPods, APlacedPodsQosBecomesTheDevicesQos) {
  const NodeSpec n = one_sgpu_node("fixed-share");
  const std::string node = node_json(n);
  const PodSpec best_effort = one_container({{"metax-tech.com/sgpu", "1"},
                                             {"metax-tech.com/vcore", "30"},
                                             {"metax-tech.com/vmemory", "8"}},
                                            {{"metax-tech.com/sgpu-qos-policy", "best-effort"}});
  const Packing p = pack(best_effort, node, n.name, {}, "be");
  // 3 × 30 % of the cores.
  EXPECT_EQ(p.allocations.size(), 3u) << describe(p.last);
  EXPECT_EQ(p.last.failed, "1/1 CardInsufficientCore");

  ASSERT_FALSE(p.placed.empty());
  const PodSpec fixed_share =
      with(best_effort, {{"metax-tech.com/sgpu-qos-policy", "fixed-share"}});
  const Answer a = ask(pod_json("fixed", fixed_share), node, n.name, {p.placed.front()});
  EXPECT_EQ(a.failed, "1/1 CardQosPolicyMismatch") << describe(a);
}

// --- one node, two vendors ------------------------------------------------------------------

// A template registering two A100 40GB GPUs (NVIDIA spec §1.1) and two Ascend910B3 NPUs (B.2).
NodeSpec mixed_node() {
  auto gpu = [](int i) {
    return R"({"id":"GPU-)" + std::to_string(i) + R"(","index":)" + std::to_string(i) +
           R"(,"count":4,"devmem":40960,"devcore":100,"type":"NVIDIA-NVIDIA A100-SXM4-40GB","mode":"hami-core","health":true})";
  };
  auto npu = [](int i) {
    return R"({"id":"npu-)" + std::to_string(i) + R"(","index":)" + std::to_string(i) +
           R"(,"count":4,"devmem":65536,"devcore":20,"type":"Ascend910B3","health":true,"custominfo":{"NetworkID":0}})";
  };
  return {template_name("gpu-npu"),
          {{"hami.io/node-nvidia-register", "[" + gpu(0) + "," + gpu(1) + "]"},
           {"hami.io/node-register-Ascend910B3", "[" + npu(0) + "," + npu(1) + "]"},
           {"hami-vnpu-core", "false"}}};
}

const PodSpec kNvidiaPod = one_container(
    {{"nvidia.com/gpu", "1"}, {"nvidia.com/gpumem", "20000"}, {"nvidia.com/gpucores", "30"}});
const PodSpec kAscendPod =
    one_container({{"huawei.com/Ascend910B3", "1"}, {"huawei.com/Ascend910B3-memory", "32768"}});

const Strings kNvidiaFirst = both_keys("hami.io/vgpu-devices-to-allocate",
                                       "hami.io/vgpu-devices-allocated", "GPU-1,NVIDIA,20000,30:;");
Strings ascend_first() {
  Strings s = both_keys("hami.io/Ascend910B3-devices-to-allocate",
                        "hami.io/Ascend910B3-devices-allocated", "npu-1,Ascend910B3,32768,0:;");
  s["huawei.com/Ascend910B3"] = R"([{"UUID":"npu-1","temp":"vir10_3c_32g","memory":32768}])";
  return s;
}

bool mentions(const Strings& allocations, const std::string& what) {
  for (const auto& [k, v] : allocations) {
    if (v.find(what) != std::string::npos) return true;
  }
  return false;
}

TEST(MixedNvidiaAscendNode, EachPodIsAnsweredByItsOwnVendor) {
  const NodeSpec n = mixed_node();
  const std::string node = node_json(n);
  const Answer gpu = ask(pod_json("cuda", kNvidiaPod), node, n.name);
  ASSERT_TRUE(gpu.in_nodes) << describe(gpu);
  for (const auto& [k, v] : kNvidiaFirst) {
    EXPECT_TRUE(gpu.allocations.contains(k) && gpu.allocations.at(k) == v) << k;
  }
  EXPECT_FALSE(mentions(gpu.allocations, "npu-"));

  const Answer npu = ask(pod_json("cann", kAscendPod), node, n.name);
  ASSERT_TRUE(npu.in_nodes) << describe(npu);
  // The NVIDIA devices are typed with the model name, so no NVIDIA entry is padded in: the
  // Ascend pod's allocations are Ascend's alone.
  EXPECT_EQ(npu.allocations, ascend_first());
}

TEST(MixedNvidiaAscendNode, EachVendorPacksIndependently) {
  const NodeSpec n = mixed_node();
  const std::string node = node_json(n);
  // NVIDIA alone: 2 × 20000 MiB per 40960 MiB GPU.
  const Packing gpus = pack(kNvidiaPod, node, n.name, {}, "cuda");
  EXPECT_EQ(gpus.allocations.size(), 4u);
  EXPECT_EQ(gpus.last.failed, "2/2 CardInsufficientMemory");
  for (const Strings& a : gpus.allocations) EXPECT_FALSE(mentions(a, "npu-"));

  // The full GPUs change nothing for the NPUs: 2 × 32768 MiB per 65536 MiB NPU, first npu-1.
  const Packing npus = pack(kAscendPod, node, n.name, gpus.placed, "cann");
  ASSERT_FALSE(npus.allocations.empty()) << describe(npus.last);
  EXPECT_EQ(npus.allocations.front(), ascend_first());
  EXPECT_EQ(npus.allocations.size(), 4u);
  EXPECT_EQ(npus.last.failed, "2/2 CardInsufficientMemory");
  for (const Strings& a : npus.allocations) EXPECT_FALSE(mentions(a, "GPU-"));

  // Full NPUs change nothing for the GPUs.
  const Answer still_full = ask(pod_json("cuda-more", kNvidiaPod), node, n.name, npus.placed);
  EXPECT_EQ(still_full.failed, "2/2 CardInsufficientMemory");
  const std::vector<std::string> only_npus(
      npus.placed.begin() + static_cast<std::ptrdiff_t>(gpus.allocations.size()),
      npus.placed.end());
  ASSERT_EQ(only_npus.size(), 4u);
  const Packing gpus_again = pack(kNvidiaPod, node, n.name, only_npus, "cuda-again");
  EXPECT_EQ(gpus_again.allocations.size(), 4u);
  EXPECT_EQ(gpus_again.last.failed, "2/2 CardInsufficientMemory");
  ASSERT_FALSE(gpus_again.allocations.empty());
  EXPECT_EQ(gpus_again.allocations.front(), gpus.allocations.front());
}

// HAMi pads an all-empty list for a vendor the pod does not ask for whose devices are typed
// with its vendor key (reference A.5), so on this node its NVIDIA pod also carries
// `hami.io/Ascend910B3-devices-*: ;` and `huawei.com/Ascend910B3: null`. hamisim used to write
// only the requested vendors' annotations (the former deviation 23); since issue #22 it
// writes what HAMi writes, in the simulation's Allocations as on the live path.
TEST(MixedNvidiaAscendNode, UnrequestedVendorsWriteHamisEmptyAnnotations) {
  const NodeSpec n = mixed_node();
  const Answer gpu = ask(pod_json("cuda", kNvidiaPod), node_json(n), n.name);
  ASSERT_TRUE(gpu.in_nodes) << describe(gpu);
  Strings want = kNvidiaFirst;
  want.merge(both_keys("hami.io/Ascend910B3-devices-to-allocate",
                       "hami.io/Ascend910B3-devices-allocated", ";"));
  want["huawei.com/Ascend910B3"] = "null";
  EXPECT_EQ(gpu.allocations, want);
}

}  // namespace
}  // namespace hamisim::server

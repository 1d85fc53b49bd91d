#include "gen/generator.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <unordered_set>
#include <vector>

#include "device/catalog/device_config.h"
#include "device/codec.h"
#include "dra/capacity.h"
#include "dra/decode.h"
#include "engine/engine.h"
#include "fit/description.h"
#include "fit/node_fit.h"
#include "model/json_writer.h"

namespace hamisim::gen {
namespace {

// splitmix64: tiny, fast and specified bit for bit, so a seed means the same cluster
// everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // [0, n); the modulo bias is irrelevant at these sizes and keeps the rule obvious.
  uint64_t below(uint64_t n) { return n == 0 ? 0 : next() % n; }
  int range(int lo, int hi) {
    return lo + static_cast<int>(below(static_cast<uint64_t>(hi - lo + 1)));
  }
  bool percent(int p) { return below(100) < static_cast<uint64_t>(p); }
  template <class T, size_t N>
  const T& pick(const std::array<T, N>& a) {
    return a[below(N)];
  }
  std::string uuid() {
    const uint64_t a = next(), b = next();
    return fmt::format("{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}", a >> 32, (a >> 16) & 0xffff,
                       a & 0xfff, (b >> 48) & 0xfff, b & 0xffffffffffffULL);
  }
  std::string hex(int digits) {
    std::string s = fmt::format("{:016x}", next());
    while (static_cast<int>(s.size()) < digits) s += fmt::format("{:016x}", next());
    return s.substr(0, static_cast<size_t>(digits));
  }

 private:
  uint64_t state_;
};

struct GpuModel {
  std::string_view key;
  std::string_view type;  // as the device plugin registers it
  int32_t devmem;
  int32_t split;
  bool mig;
  std::string_view instance_type;
  int cpu;
  int memory_gi;
  double price;
  // What HAMi's k8s-dra-driver publishes from NVML (DRA form): product name, brand,
  // architecture, CUDA compute capability, driver and CUDA driver versions.
  std::string_view product;
  std::string_view brand;
  std::string_view architecture;
  std::string_view compute_capability;
  std::string_view driver_version;
  std::string_view cuda_driver_version;
};

// Five kinds of GPU node, one per node group in turn. (K80s need the 470 driver branch.)
constexpr std::array<GpuModel, 5> kModels = {{
    {"a100", "NVIDIA A100-SXM4-80GB", 81920, 10, false, "Standard_ND96amsr_A100_v4", 96, 1900,
     32.77, "NVIDIA A100-SXM4-80GB", "Nvidia", "Ampere", "8.0.0", "575.57.8", "12.9.0"},
    {"a100mig", "NVIDIA A100-SXM4-80GB", 81920, 7, true, "Standard_ND96amsr_A100_v4", 96, 1900,
     32.77, "NVIDIA A100-SXM4-80GB", "Nvidia", "Ampere", "8.0.0", "575.57.8", "12.9.0"},
    {"a10", "NVIDIA A10", 23028, 10, false, "Standard_NV72ads_A10_v5", 72, 880, 6.52, "NVIDIA A10",
     "Nvidia", "Ampere", "8.6.0", "575.57.8", "12.9.0"},
    {"t4", "NVIDIA-Tesla T4", 15360, 10, false, "Standard_NC64as_T4_v3", 64, 440, 4.35, "Tesla T4",
     "Tesla", "Turing", "7.5.0", "575.57.8", "12.9.0"},
    {"k80", "NVIDIA-Tesla K80", 11441, 10, false, "Standard_NC24", 24, 224, 3.6, "Tesla K80",
     "Tesla", "Kepler", "3.7.0", "470.256.2", "11.4.0"},
}};

// HAMi's DRA mode (reference dra.md §4.1, §4.2).
constexpr std::string_view kDraDriver = "hami-core-gpu.project-hami.io";
constexpr std::string_view kDraClass = "hami-gpu";
constexpr std::string_view kDraRequest = "gpu";  // the claim's request and the pod's claim name
constexpr int64_t kMi = 1048576;

// HAMi's A100-80GB MIG geometry (knownMigGeometries shape: memory, cores, slices, placements).
std::vector<device::MigProfile> a100_80g_mig_profiles() {
  auto profile = [](std::string name, int32_t mem, int32_t core, uint32_t slices,
                    std::vector<device::MigPlacement> placements) {
    device::MigProfile p;
    p.name = std::move(name);
    p.memory_mb = mem;
    p.core = core;
    p.slice_count = slices;
    p.placements = std::move(placements);
    p.placements_null = false;
    return p;
  };
  return {
      profile("1g.10gb", 10240, 14, 1, {{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}}),
      profile("2g.20gb", 20480, 28, 2, {{0, 2}, {2, 2}, {4, 2}}),
      profile("3g.40gb", 40960, 42, 3, {{0, 4}, {4, 4}}),
      profile("7g.80gb", 81920, 100, 7, {{0, 8}}),
  };
}

struct NodeGroup {
  std::string name;
  const GpuModel* model;
  bool cold;
  int members = 0;
};

std::string profile_name(const GpuModel& m, int gpus) {
  return fmt::format("{}-x{}", m.key, gpus);
}

// What a container of a generated pod asks for.
struct PodShape {
  int cpu_milli = 1000;
  int memory_mi = 4096;
  int gpus = 0;
  int gpumem = 0;
  int gpucores = 0;
};

struct PodSpecText {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::string app;
  std::string owner_kind;
  std::string owner_name;
  std::string owner_uid;
  std::string image;
  std::string node;  // empty: pending
  PodShape shape;
  std::map<std::string, std::string> annotations;
  std::string created;
  // DRA form: the ResourceClaim a running GPU pod holds, or the ResourceClaimTemplate a
  // pending one refers to.
  std::string claim;
  std::string claim_template;
};

model::Pod pod_for_fit(const PodSpecText& p) {
  model::Pod pod;
  pod.metadata.name = p.name;
  pod.metadata.namespace_ = p.namespace_;
  pod.metadata.uid = p.uid;
  model::Container c;
  c.name = "main";
  c.resources.requests.emplace("cpu", model::Quantity::from_milli(p.shape.cpu_milli));
  c.resources.limits.emplace("nvidia.com/gpu", model::Quantity::from_int(p.shape.gpus));
  c.resources.limits.emplace("nvidia.com/gpumem", model::Quantity::from_int(p.shape.gpumem));
  if (p.shape.gpucores > 0) {
    c.resources.limits.emplace("nvidia.com/gpucores", model::Quantity::from_int(p.shape.gpucores));
  }
  pod.spec.containers.push_back(std::move(c));
  return pod;
}

// In DRA form (`dra`) a GPU pod is what HAMi-DRA's webhook leaves: its HAMi limits moved into
// a claim the pod and its container refer to, label hami.io/dra, and the default scheduler.
void write_pod(model::JsonWriter& w, const PodSpecText& p, bool dra) {
  const bool running = !p.node.empty();
  const bool claims = dra && p.shape.gpus > 0;
  w.begin_object();
  w.key("apiVersion").string("v1").key("kind").string("Pod");
  w.key("metadata").begin_object();
  w.key("name").string(p.name).key("namespace").string(p.namespace_).key("uid").string(p.uid);
  w.key("resourceVersion").string("1").key("creationTimestamp").string(p.created);
  w.key("generateName").string(p.owner_name + "-");
  w.key("labels").begin_object();
  w.key("app").string(p.app).key("pod-template-hash").string(p.owner_uid.substr(0, 10));
  if (running && !dra) w.key("hami.io/vgpu-node").string(p.node);
  if (claims) w.key("hami.io/dra").string("true");
  w.end_object();
  if (!p.annotations.empty()) {
    w.key("annotations").begin_object();
    for (const auto& [k, v] : p.annotations) w.key(k).string(v);
    w.end_object();
  }
  w.key("ownerReferences").begin_array().begin_object();
  w.key("apiVersion").string("apps/v1").key("kind").string(p.owner_kind);
  w.key("name").string(p.owner_name).key("uid").string(p.owner_uid);
  w.key("controller").boolean(true).key("blockOwnerDeletion").boolean(true);
  w.end_object().end_array();
  w.end_object();

  w.key("spec").begin_object();
  if (running) w.key("nodeName").string(p.node);
  w.key("schedulerName").string(dra ? "default-scheduler" : "hami-scheduler");
  w.key("restartPolicy").string("Always").key("dnsPolicy").string("ClusterFirst");
  w.key("terminationGracePeriodSeconds").number(30);
  w.key("serviceAccountName").string("default");
  w.key("containers").begin_array().begin_object();
  w.key("name").string("main").key("image").string(p.image);
  w.key("command").begin_array().string("python").string("-m").string("serve").end_array();
  w.key("resources").begin_object();
  w.key("requests").begin_object();
  w.key("cpu").string(fmt::format("{}m", p.shape.cpu_milli));
  w.key("memory").string(fmt::format("{}Mi", p.shape.memory_mi));
  w.end_object();
  if (p.shape.gpus > 0 && !dra) {
    w.key("limits").begin_object();
    w.key("nvidia.com/gpu").string(std::to_string(p.shape.gpus));
    w.key("nvidia.com/gpumem").string(std::to_string(p.shape.gpumem));
    if (p.shape.gpucores > 0) w.key("nvidia.com/gpucores").string(std::to_string(p.shape.gpucores));
    w.end_object();
  }
  if (claims) {
    w.key("claims").begin_array().begin_object().key("name").string(kDraRequest);
    w.end_object().end_array();
  }
  w.end_object();
  w.key("volumeMounts").begin_array().begin_object();
  w.key("name")
      .string("kube-api-access")
      .key("mountPath")
      .string("/var/run/secrets/kubernetes.io/serviceaccount");
  w.key("readOnly").boolean(true).end_object().end_array();
  w.key("terminationMessagePath").string("/dev/termination-log");
  w.key("imagePullPolicy").string("IfNotPresent");
  w.end_object().end_array();
  if (p.shape.gpus > 0) {
    w.key("tolerations").begin_array();
    w.begin_object().key("key").string("nvidia.com/gpu").key("operator").string("Exists");
    w.key("effect").string("NoSchedule").end_object();
    w.end_array();
  }
  if (claims) {
    w.key("resourceClaims").begin_array().begin_object().key("name").string(kDraRequest);
    if (running) {
      w.key("resourceClaimName").string(p.claim);
    } else {
      w.key("resourceClaimTemplateName").string(p.claim_template);
    }
    w.end_object().end_array();
  }
  w.end_object();

  w.key("status").begin_object();
  if (running) {
    w.key("phase").string("Running");
    w.key("conditions").begin_array();
    for (std::string_view t : {"Initialized", "Ready", "ContainersReady", "PodScheduled"}) {
      w.begin_object().key("type").string(t).key("status").string("True");
      w.key("lastTransitionTime").string(p.created).end_object();
    }
    w.end_array();
    w.key("startTime").string(p.created);
  } else {
    w.key("phase").string("Pending");
    w.key("conditions").begin_array().begin_object();
    w.key("type").string("PodScheduled").key("status").string("False");
    w.key("reason").string("Unschedulable");
    w.key("message").string(dra ? "0/1 nodes are available: 1 cannot allocate all claims."
                                : "0/1 nodes are available: 1 Insufficient nvidia.com/gpumem.");
    w.end_object().end_array();
  }
  w.end_object();
  w.end_object();
}

// A Node as the API server returns it, with the bulk a real one carries (images and
// managedFields are most of its bytes; the extender's decoder must skip them). In DRA form
// (`dra`) its GPUs are in its ResourceSlice: no HAMi registration, no nvidia.com/gpu, and a
// kubelet that serves resource.k8s.io/v1 (1.34+).
void write_node(model::JsonWriter& w, const std::string& name, const std::string& uid,
                const NodeGroup& g, int index, int gpus, const std::string& registration, Rng& rng,
                bool dra) {
  const GpuModel& m = *g.model;
  const std::string created = "2026-11-20T08:00:00Z";
  const std::string zone = fmt::format("eastus-{}", 1 + index % 3);
  w.begin_object();
  w.key("apiVersion").string("v1").key("kind").string("Node");
  w.key("metadata").begin_object();
  w.key("name").string(name).key("uid").string(uid);
  w.key("resourceVersion").string(std::to_string(100000 + index));
  w.key("creationTimestamp").string(created);
  w.key("labels").begin_object();
  w.key("agentpool").string(g.name);
  w.key("beta.kubernetes.io/arch").string("amd64");
  w.key("beta.kubernetes.io/instance-type").string(m.instance_type);
  w.key("beta.kubernetes.io/os").string("linux");
  w.key("failure-domain.beta.kubernetes.io/region").string("eastus");
  w.key("failure-domain.beta.kubernetes.io/zone").string(zone);
  w.key("gpu").string("on");
  w.key("kubernetes.azure.com/agentpool").string(g.name);
  w.key("kubernetes.azure.com/cluster").string("MC_rg-ml_aks-ml_eastus");
  w.key("kubernetes.azure.com/mode").string("user");
  w.key("kubernetes.azure.com/node-image-version")
      .string("AKSUbuntu-2204gen2containerd-202611.14.0");
  w.key("kubernetes.azure.com/os-sku").string("Ubuntu");
  w.key("kubernetes.io/arch").string("amd64");
  w.key("kubernetes.io/hostname").string(name);
  w.key("kubernetes.io/os").string("linux");
  w.key("node.kubernetes.io/instance-type").string(m.instance_type);
  // GPU feature discovery's label value: the model with spaces as dashes (a label value
  // cannot hold a space).
  std::string product(m.type);
  std::replace(product.begin(), product.end(), ' ', '-');
  w.key("nvidia.com/gpu.product").string(product);
  w.key("topology.kubernetes.io/region").string("eastus");
  w.key("topology.kubernetes.io/zone").string(zone);
  w.end_object();
  w.key("annotations").begin_object();
  w.key("csi.volume.kubernetes.io/nodeid")
      .string(fmt::format(R"({{"disk.csi.azure.com":"{0}","file.csi.azure.com":"{0}"}})", name));
  if (!dra) {
    w.key("hami.io/node-handshake").string("Reported 2026-12-03 08:00:00.000000000 +0000 UTC");
    w.key(device::kNvidiaRegisterAnnotation).string(registration);
  }
  w.key("node.alpha.kubernetes.io/ttl").string("0");
  w.key("volumes.kubernetes.io/controller-managed-attach-detach").string("true");
  w.end_object();
  // managedFields: field sets of the usual writers (kubelet, the controller manager, the
  // device plugin).
  w.key("managedFields").begin_array();
  auto fields = [&](std::string_view manager, std::string_view subresource,
                    std::initializer_list<std::string_view> paths) {
    w.begin_object().key("manager").string(manager).key("operation").string("Update");
    w.key("apiVersion").string("v1").key("time").string(created);
    w.key("fieldsType").string("FieldsV1");
    w.key("fieldsV1").begin_object();
    for (std::string_view top : paths) {
      w.key(top).begin_object();
      for (int j = 0; j < 8; ++j) {
        w.key(fmt::format("f:{}-{}", top.substr(2), j)).begin_object();
        w.key(".").begin_object().end_object();
        w.end_object();
      }
      w.end_object();
    }
    w.end_object();
    if (!subresource.empty()) w.key("subresource").string(subresource);
    w.end_object();
  };
  fields("kubelet", "", {"f:metadata", "f:spec"});
  fields("kube-controller-manager", "", {"f:metadata", "f:spec"});
  fields(dra ? "gpu-feature-discovery" : "hami-device-plugin", "", {"f:metadata"});
  fields("kubelet", "status", {"f:status"});
  fields("cloud-node-manager", "status", {"f:status"});
  w.end_array();
  w.end_object();

  w.key("spec").begin_object();
  w.key("podCIDR").string(fmt::format("10.{}.{}.0/24", 100 + index / 256 % 100, index % 256));
  w.key("providerID")
      .string(fmt::format(
          "azure:///subscriptions/{}/resourceGroups/mc_rg-ml_aks-ml_eastus/providers/"
          "Microsoft.Compute/virtualMachineScaleSets/aks-{}-31415926-vmss/virtualMachines/{}",
          "6f1a2b3c-0000-4000-8000-000000000001", g.name, index));
  w.key("taints").begin_array().begin_object();
  w.key("key").string("nvidia.com/gpu").key("value").string("present");
  w.key("effect").string("NoSchedule").end_object().end_array();
  w.end_object();

  w.key("status").begin_object();
  const std::string gpu_slots = std::to_string(gpus * m.split);
  w.key("capacity").begin_object();
  w.key("cpu").string(std::to_string(m.cpu));
  w.key("ephemeral-storage").string("260450164Ki");
  w.key("hugepages-1Gi").string("0").key("hugepages-2Mi").string("0");
  w.key("memory").string(fmt::format("{}Gi", m.memory_gi));
  if (!dra) w.key("nvidia.com/gpu").string(gpu_slots);
  w.key("pods").string("250");
  w.end_object();
  w.key("allocatable").begin_object();
  w.key("cpu").string(fmt::format("{}m", m.cpu * 1000 - 260));
  w.key("ephemeral-storage").string("240029838116");
  w.key("hugepages-1Gi").string("0").key("hugepages-2Mi").string("0");
  w.key("memory").string(fmt::format("{}Gi", m.memory_gi - m.memory_gi / 20));
  if (!dra) w.key("nvidia.com/gpu").string(gpu_slots);
  w.key("pods").string("250");
  w.end_object();
  w.key("conditions").begin_array();
  for (auto [type, status, reason, message] :
       std::initializer_list<std::array<std::string_view, 4>>{
           {"MemoryPressure", "False", "KubeletHasSufficientMemory",
            "kubelet has sufficient memory available"},
           {"DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
           {"PIDPressure", "False", "KubeletHasSufficientPID",
            "kubelet has sufficient PID available"},
           {"Ready", "True", "KubeletReady", "kubelet is posting ready status"}}) {
    w.begin_object().key("type").string(type).key("status").string(status);
    w.key("lastHeartbeatTime").string("2026-12-03T08:59:00Z");
    w.key("lastTransitionTime").string(created);
    w.key("reason").string(reason).key("message").string(message).end_object();
  }
  w.end_array();
  w.key("addresses").begin_array();
  w.begin_object().key("type").string("InternalIP");
  w.key("address").string(fmt::format("10.224.{}.{}", index / 250 % 250, 4 + index % 250));
  w.end_object();
  w.begin_object().key("type").string("Hostname").key("address").string(name).end_object();
  w.end_array();
  w.key("daemonEndpoints").begin_object().key("kubeletEndpoint").begin_object();
  w.key("Port").number(10250).end_object().end_object();
  w.key("nodeInfo").begin_object();
  w.key("machineID").string(rng.hex(32)).key("systemUUID").string(rng.uuid());
  w.key("bootID").string(rng.uuid());
  w.key("kernelVersion").string("5.15.0-1075-azure");
  w.key("osImage").string("Ubuntu 22.04.5 LTS");
  w.key("containerRuntimeVersion").string("containerd://1.7.23-1");
  const std::string_view version = dra ? "v1.34.2" : "v1.30.6";
  w.key("kubeletVersion").string(version).key("kubeProxyVersion").string(version);
  w.key("operatingSystem").string("linux").key("architecture").string("amd64");
  w.end_object();
  // A GPU node's image cache: CUDA bases, frameworks, system DaemonSets.
  static constexpr std::array<std::string_view, 12> kImages = {
      "nvcr.io/nvidia/pytorch",
      "nvcr.io/nvidia/tritonserver",
      "nvcr.io/nvidia/cuda",
      "docker.io/projecthami/hami",
      "mcr.microsoft.com/oss/kubernetes/kube-proxy",
      "mcr.microsoft.com/aks/ip-masq-agent-v2",
      "mcr.microsoft.com/oss/kubernetes-csi/azuredisk-csi",
      "mcr.microsoft.com/oss/kubernetes-csi/azurefile-csi",
      "registry.example.com/ml/trainer",
      "registry.example.com/ml/inference",
      "nvcr.io/nvidia/k8s-device-plugin",
      "ghcr.io/prometheus/node-exporter"};
  w.key("images").begin_array();
  for (int i = 0; i < 20; ++i) {
    const std::string_view repo = kImages[static_cast<size_t>(i) % kImages.size()];
    w.begin_object().key("names").begin_array();
    w.string(fmt::format("{}@sha256:{}", repo, rng.hex(64)));
    w.string(fmt::format("{}:v{}.{}.{}", repo, 1 + i % 3, i, i % 7));
    w.end_array();
    w.key("sizeBytes").number(static_cast<int64_t>(50000000 + rng.below(9000000000ULL)));
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.end_object();
}

// ---- DRA form (reference dra.md §4.1, §4.2) ------------------------------------------------

// Bytes as the API server prints a BinarySI quantity: whole GiB as Gi, else Mi.
std::string mib_quantity(int64_t mib) {
  return mib % 1024 == 0 ? fmt::format("{}Gi", mib / 1024) : fmt::format("{}Mi", mib);
}

void write_meta(model::JsonWriter& w, std::string_view name, std::string_view namespace_,
                Rng& dra_rng, std::string_view created) {
  w.key("name").string(name);
  if (!namespace_.empty()) w.key("namespace").string(namespace_);
  w.key("uid").string(dra_rng.uuid()).key("resourceVersion").string("1");
  w.key("creationTimestamp").string(created);
}

// The node's one ResourceSlice as HAMi's k8s-dra-driver publishes it with HAMiCoreSupport:
// one pool named after the node holding one slice, one shareable `hami-gpu-<minor>` per GPU
// with `cores` 100 and `memory` = the GPU's memory, each with the driver's request policy.
// Devices in minor order (the driver appends them from a Go map, in no stable order).
std::string hami_slice_json(const std::string& node, const std::string& node_uid, const GpuModel& m,
                            const std::vector<device::DeviceInfo>& gpus, Rng& dra_rng) {
  model::JsonWriter w;
  w.begin_object();
  w.key("apiVersion").string("resource.k8s.io/v1").key("kind").string("ResourceSlice");
  w.key("metadata").begin_object();
  write_meta(w, fmt::format("{}-{}-{}", node, kDraDriver, dra_rng.hex(5)), "", dra_rng,
             "2026-11-20T08:01:00Z");
  w.key("ownerReferences").begin_array().begin_object();
  w.key("apiVersion").string("v1").key("kind").string("Node");
  w.key("name").string(node).key("uid").string(node_uid).key("controller").boolean(true);
  w.end_object().end_array();
  w.end_object();
  w.key("spec").begin_object();
  w.key("driver").string(kDraDriver).key("nodeName").string(node);
  w.key("pool").begin_object().key("name").string(node);
  w.key("generation").number(1).key("resourceSliceCount").number(1).end_object();
  const std::string memory = mib_quantity(m.devmem);
  auto typed = [&](std::string_view name, std::string_view type, std::string_view value) {
    w.key(name).begin_object().key(type).string(value).end_object();
  };
  auto capacity = [&](std::string_view name, std::string_view value, std::string_view min,
                      std::string_view step) {
    w.key(name).begin_object().key("value").string(value);
    w.key("requestPolicy").begin_object().key("default").string(value);
    w.key("validRange").begin_object().key("min").string(min).key("max").string(value);
    w.key("step").string(step).end_object();
    w.end_object().end_object();
  };
  w.key("devices").begin_array();
  for (const device::DeviceInfo& gpu : gpus) {
    const int minor = static_cast<int>(gpu.index);
    const int root = 0x10 + minor / 2 * 0x20;  // two GPUs behind each PCIe switch
    w.begin_object().key("name").string(fmt::format("hami-gpu-{}", minor));
    w.key("allowMultipleAllocations").boolean(true);
    w.key("attributes").begin_object();
    typed("type", "string", "hami-gpu");
    typed("uuid", "string", gpu.id);
    w.key("minor").begin_object().key("int").number(minor).end_object();
    typed("productName", "string", m.product);
    typed("brand", "string", m.brand);
    typed("architecture", "string", m.architecture);
    typed("cudaComputeCapability", "version", m.compute_capability);
    typed("driverVersion", "version", m.driver_version);
    typed("cudaDriverVersion", "version", m.cuda_driver_version);
    typed("pcieBusID", "string", fmt::format("0000:{:02x}:00.0", root + 0x0b + minor % 2 * 4));
    typed("resource.kubernetes.io/pcieRoot", "string", fmt::format("pci0000:{:02x}", root));
    w.end_object();
    w.key("capacity").begin_object();
    capacity("cores", "100", "0", "1");
    capacity("memory", memory, "1Mi", "1Mi");
    w.end_object();
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.end_object();
  return w.take();
}

void write_device_class(model::JsonWriter& w, Rng& dra_rng) {
  w.begin_object();
  w.key("apiVersion").string("resource.k8s.io/v1").key("kind").string("DeviceClass");
  w.key("metadata").begin_object();
  write_meta(w, kDraClass, "", dra_rng, "2026-11-20T07:50:00Z");
  w.end_object();
  w.key("spec").begin_object().key("selectors").begin_array().begin_object();
  w.key("cel").begin_object().key("expression");
  w.string(fmt::format("device.driver == '{0}' && device.attributes['{0}'].type == 'hami-gpu'",
                       kDraDriver));
  w.end_object().end_object().end_array().end_object();
  w.end_object();
}

// What HAMi-DRA's webhook asks per device for a container's gpumem (MiB, as bytes) and
// gpucores (0 when the pod sets none: HAMi's default cores; see generator.h).
dra::Amounts claim_requests(const PodShape& s) {
  dra::Amounts a;
  a.emplace("memory", model::Quantity::from_int(int64_t{s.gpumem} * kMi));
  a.emplace("cores", model::Quantity::from_int(s.gpucores));
  return a;
}

// The claim spec HAMi-DRA's webhook writes for one container: one request `gpu` of
// `gpus` devices of the class, each with the capacity above.
void write_claim_spec(model::JsonWriter& w, const PodShape& s) {
  w.key("devices").begin_object().key("requests").begin_array().begin_object();
  w.key("name").string(kDraRequest);
  w.key("exactly").begin_object();
  w.key("deviceClassName").string(kDraClass).key("allocationMode").string("ExactCount");
  w.key("count").number(s.gpus);
  w.key("capacity").begin_object().key("requests").begin_object();
  for (const auto& [name, q] : claim_requests(s)) w.key(name).string(q.to_string());
  w.end_object().end_object();
  w.end_object().end_object().end_array().end_object();
}

void write_claim_template(model::JsonWriter& w, const std::string& name, const PodSpecText& p,
                          Rng& dra_rng) {
  w.begin_object();
  w.key("apiVersion").string("resource.k8s.io/v1").key("kind").string("ResourceClaimTemplate");
  w.key("metadata").begin_object();
  write_meta(w, name, p.namespace_, dra_rng, p.created);
  w.end_object();
  w.key("spec").begin_object().key("spec").begin_object();
  write_claim_spec(w, p.shape);
  w.end_object().end_object();
  w.end_object();
}

// One device of a running pod's allocation in DRA form.
struct DraResult {
  int minor = 0;
  std::string share_id;
  dra::Amounts consumed;
};

// A running pod's claim, allocated on its node's devices and reserved for the pod, as the
// scheduler leaves it (node-local devices: the allocation names the node).
void write_allocated_claim(model::JsonWriter& w, const PodSpecText& p,
                           const std::vector<DraResult>& results, Rng& dra_rng) {
  w.begin_object();
  w.key("apiVersion").string("resource.k8s.io/v1").key("kind").string("ResourceClaim");
  w.key("metadata").begin_object();
  write_meta(w, p.claim, p.namespace_, dra_rng, p.created);
  w.end_object();
  w.key("spec").begin_object();
  write_claim_spec(w, p.shape);
  w.end_object();
  w.key("status").begin_object();
  w.key("allocation").begin_object();
  w.key("devices").begin_object().key("results").begin_array();
  for (const DraResult& r : results) {
    w.begin_object().key("request").string(kDraRequest).key("driver").string(kDraDriver);
    w.key("pool").string(p.node).key("device").string(fmt::format("hami-gpu-{}", r.minor));
    w.key("shareID").string(r.share_id);
    w.key("consumedCapacity").begin_object();
    for (const auto& [name, q] : r.consumed) w.key(name).string(q.to_string());
    w.end_object().end_object();
  }
  w.end_array().end_object();
  w.key("nodeSelector").begin_object().key("nodeSelectorTerms").begin_array().begin_object();
  w.key("matchFields").begin_array().begin_object();
  w.key("key").string("metadata.name").key("operator").string("In");
  w.key("values").begin_array().string(p.node).end_array();
  w.end_object().end_array().end_object().end_array().end_object();
  w.key("allocationTimestamp").string(p.created);
  w.end_object();
  w.key("reservedFor").begin_array().begin_object();
  w.key("resource").string("pods").key("name").string(p.name).key("uid").string(p.uid);
  w.end_object().end_array();
  w.end_object();
  w.end_object();
}

std::string yaml_quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string node_groups_yaml(const std::vector<NodeGroup>& groups, int gpus) {
  std::string y =
      "# Generated by `hamisim gen`: warm groups have member nodes in cluster.json; every fourth\n"
      "# group is cold-zero (no node) and takes its devices from device-profiles.yaml.\n"
      "apiVersion: hamisim.io/v1\nkind: NodeGroups\nnodeGroups:\n";
  for (const auto& g : groups) {
    const GpuModel& m = *g.model;
    y += fmt::format("  - name: {}\n    minSize: {}\n    maxSize: {}\n", g.name,
                     g.cold ? 0 : std::min(g.members, 1), g.members + 1000);
    y += fmt::format("    members: {{agentpool: {}}}\n", g.name);
    y += fmt::format("    price: {}\n", m.price);
    if (g.cold) {
      y += "    template:\n      metadata:\n        labels:\n";
      y += fmt::format("          agentpool: {}\n", g.name);
      y += fmt::format("          node.kubernetes.io/instance-type: {}\n", m.instance_type);
      y += "          kubernetes.io/os: linux\n";
      y += "      spec:\n        taints:\n";
      y += "          - {key: nvidia.com/gpu, value: present, effect: NoSchedule}\n";
      y += "      status:\n";
      for (std::string_view which : {"capacity", "allocatable"}) {
        y += fmt::format(
            "        {}: {{cpu: \"{}\", memory: {}Gi, pods: \"250\", nvidia.com/gpu: \"{}\"}}\n",
            which, m.cpu, m.memory_gi, gpus * m.split);
      }
      y += fmt::format("    deviceProfile: {}\n", profile_name(m, gpus));
    }
  }
  return y;
}

// `dra`: the devices are published to DRA as HAMi's k8s-dra-driver does (`dra: {hamiDriver:
// true}`), so cold-zero groups take claim pods and no group gets a device-plugin registration.
std::string device_profiles_yaml(const std::vector<NodeGroup>& groups, int gpus, bool dra) {
  std::string y =
      "# Generated by `hamisim gen`: what a fresh node of each GPU model registers.\n"
      "apiVersion: hamisim.io/v1\nkind: DeviceProfiles\nprofiles:\n";
  for (const GpuModel& m : kModels) {
    std::vector<std::string> names;
    for (const auto& g : groups) {
      if (g.model == &m) names.push_back(g.name);
    }
    if (names.empty()) continue;
    y += fmt::format("  - name: {}\n", profile_name(m, gpus));
    y += fmt::format("    match:\n      nodeGroups: [{}]\n      nodeGroupLabel: agentpool\n",
                     fmt::join(names, ", "));
    y += "    onMismatch: warn\n    devices:\n";
    y += fmt::format("      - vendor: nvidia\n        count: {}\n        split: {}\n", gpus,
                     m.split);
    y += fmt::format("        devmem: {}\n        devcore: 100\n        type: {}\n", m.devmem,
                     yaml_quote(m.type));
    std::vector<int> numa;
    for (int d = 0; d < gpus; ++d) numa.push_back(d < gpus / 2 || gpus == 1 ? 0 : 1);
    y += fmt::format("        numa: [{}]\n", fmt::join(numa, ", "));
    y += fmt::format("        mode: {}\n", m.mig ? "mig" : "hami-core");
    if (m.mig) {
      y += "        migProfiles:\n";
      for (const auto& p : a100_80g_mig_profiles()) {
        std::vector<std::string> pl;
        for (const auto& x : p.placements)
          pl.push_back(fmt::format("{{start: {}, size: {}}}", x.start, x.size));
        y += fmt::format(
            "          - {{name: {}, memoryMB: {}, core: {}, sliceCount: {}, placements: [{}]}}\n",
            p.name, p.memory_mb, p.core, p.slice_count, fmt::join(pl, ", "));
      }
    }
    if (dra) y += "    dra: {hamiDriver: true}\n";
  }
  return y;
}

}  // namespace

Result<GeneratedCluster> generate(const GenOptions& o) {
  if (o.nodes < 0 || o.nodes > 100000) return make_error("--nodes: must be within [0, 100000]");
  if (o.pods_per_node < 0 || o.pods_per_node > 240) {
    return make_error("--pods-per-node: must be within [0, 240]");
  }
  if (o.pending < 0 || o.pending > 1000000) {
    return make_error("--pending: must be within [0, 1000000]");
  }
  if (o.groups < 1 || o.groups > 100000) return make_error("--groups: must be within [1, 100000]");
  if (o.node_groups < 1 || o.node_groups > 1000) {
    return make_error("--node-groups: must be within [1, 1000]");
  }
  if (o.gpus_per_node < 1 || o.gpus_per_node > 16) {
    return make_error("--gpus-per-node: must be within [1, 16]");
  }

  Rng rng(o.seed);
  // What only the DRA form has (slice names, claim UIDs, share IDs) comes from a stream of its
  // own, drawn the same way in both forms, so the two forms share every other byte's source.
  Rng dra_rng(o.seed ^ 0x6472612d666f726dULL);
  GeneratedCluster out;
  std::vector<NodeGroup> groups;
  for (int i = 0; i < o.node_groups; ++i) {
    const bool cold = o.node_groups > 1 && i % 4 == 3;
    groups.push_back(
        {fmt::format("gpu-{}-{}", kModels[static_cast<size_t>(i) % kModels.size()].key, i),
         &kModels[static_cast<size_t>(i) % kModels.size()], cold});
  }
  std::vector<NodeGroup*> warm;
  for (auto& g : groups) {
    if (!g.cold) warm.push_back(&g);
  }

  const device::DeviceRegistry registry = device::build_registry({});
  // The simulation engine places the running pods, with HAMi's default policy (spread devices,
  // binpack nodes) and no profiles: every generated node is described by its registration.
  const engine::Engine engine(registry, nullptr);

  model::JsonWriter w;
  // Bytes per node, per running pod (a claim of ~800 more in DRA form) and per pending pod.
  const size_t per_running = o.dra ? 3100 : 2300;
  w.reserve(static_cast<size_t>(o.nodes) *
                (14000 + static_cast<size_t>(o.pods_per_node) * per_running) +
            static_cast<size_t>(o.pending) * 1800);
  w.begin_object().key("apiVersion").string("v1").key("kind").string("List");
  w.key("metadata").begin_object().key("resourceVersion").string("").end_object();
  w.key("items").begin_array();

  // Running workloads: a few hundred Deployments whose pods are spread over the nodes.
  const int workloads = std::max(1, std::min(400, o.nodes * o.pods_per_node / 25));
  std::vector<std::string> workload_uids;
  for (int k = 0; k < workloads; ++k) workload_uids.push_back(rng.uuid());

  std::vector<std::string> pods_json;  // written after the nodes, as kubectl lists them
  std::vector<std::string> slices_json, claims_json, templates_json;  // DRA form
  // A ReplicaSet names its pods <owner>-<5 random characters>; with hundreds of pods per owner
  // the suffixes collide, and the API server (and our snapshot source) refuse a duplicate name.
  std::unordered_set<std::string> pod_names;
  auto unique_pod_name = [&](const std::string& owner) {
    std::string name;
    do {
      name = fmt::format("{}-{}", owner, rng.hex(5));
    } while (!pod_names.insert(name).second);
    return name;
  };
  for (int n = 0; n < o.nodes; ++n) {
    NodeGroup& g = *warm[static_cast<size_t>(n) % warm.size()];
    ++g.members;
    const GpuModel& m = *g.model;
    const std::string name = fmt::format("aks-{}-31415926-vmss{:06x}", g.name, n);
    std::vector<device::DeviceInfo> devices;
    for (int d = 0; d < o.gpus_per_node; ++d) {
      device::DeviceInfo info;
      info.id = "GPU-" + rng.uuid();
      info.index = static_cast<uint64_t>(d);
      info.count = m.split;
      info.devmem = m.devmem;
      info.devcore = 100;
      info.type = std::string(m.type);
      info.numa = d < o.gpus_per_node / 2 || o.gpus_per_node == 1 ? 0 : 1;
      info.mode = m.mig ? "mig" : "hami-core";
      if (m.mig) info.mig_profiles = a100_80g_mig_profiles();
      info.health = true;
      devices.push_back(std::move(info));
    }
    const std::string registration = device::encode_register_json(devices);
    const std::string node_uid = rng.uuid();
    {
      const size_t before = w.str().size();
      write_node(w, name, node_uid, g, n, o.gpus_per_node, registration, rng, o.dra);
      out.stats.largest_node_bytes =
          std::max(out.stats.largest_node_bytes, w.str().size() - before);
    }

    // Place this node's running pods with the Fit engine: what fits gets exactly the
    // annotations the live filter would write; what no longer fits runs without devices.
    model::Node node;
    node.metadata.name = name;
    node.metadata.annotations[std::string(device::kNvidiaRegisterAnnotation)] = registration;
    const std::shared_ptr<const fit::DescriptionResult> described = engine.describe(node);
    if (described->state != fit::DescriptionResult::State::kOk) {
      return make_error("internal: generated registration does not decode: " + described->message);
    }
    fit::NodeUsage usage = fit::fresh_usage(described->description);
    // The same GPUs in DRA form, read back by the strict decoder, and what the claims of the
    // node's pods consume of each (by minor): a placement must fit both forms.
    std::string slice_json = hami_slice_json(name, node_uid, m, devices, dra_rng);
    auto slice = dra::decode_resource_slice(slice_json);
    if (!slice) return make_error("internal: generated ResourceSlice: " + slice.error().message);
    std::vector<dra::Amounts> dra_used(slice->devices.size());
    if (o.dra) {
      slices_json.push_back(std::move(slice_json));
      ++out.stats.resource_slices;
    }
    // Aim at ~90 % of the node's device memory over its pods: a busy cluster, where most
    // pending pods need a new node.
    const int64_t share = o.pods_per_node > 0 ? static_cast<int64_t>(m.devmem) * o.gpus_per_node *
                                                    9 / 10 / o.pods_per_node
                                              : 0;
    const int cpu_share = o.pods_per_node > 0 ? m.cpu * 600 / o.pods_per_node : 0;
    const int mem_share = o.pods_per_node > 0 ? m.memory_gi * 614 / o.pods_per_node : 0;
    for (int p = 0; p < o.pods_per_node; ++p) {
      PodSpecText pod;
      const int k = static_cast<int>(rng.below(static_cast<uint64_t>(workloads)));
      pod.app = fmt::format("svc-{}", k);
      pod.owner_kind = "ReplicaSet";
      pod.owner_name =
          fmt::format("svc-{}-{}", k, workload_uids[static_cast<size_t>(k)].substr(0, 10));
      pod.owner_uid = workload_uids[static_cast<size_t>(k)];
      pod.namespace_ = fmt::format("team-{}", k % 12);
      pod.name = unique_pod_name(pod.owner_name);
      pod.uid = rng.uuid();
      pod.image = fmt::format("registry.example.com/ml/svc-{}:1.{}", k, k % 9);
      pod.node = name;
      pod.created = "2026-12-02T10:00:00Z";
      // CPU and memory within ~60 % of the node, so that nodes are full on devices first.
      pod.shape.cpu_milli = std::max(50, cpu_share * rng.range(50, 150) / 100 / 50 * 50);
      pod.shape.memory_mi = std::max(128, mem_share * rng.range(50, 150) / 100 / 128 * 128);
      pod.shape.gpus = o.gpus_per_node >= 2 && rng.percent(15) ? 2 : 1;
      pod.shape.gpumem = static_cast<int>(
          std::max<int64_t>(256, share / pod.shape.gpus * rng.range(50, 150) / 100 / 256 * 256));
      pod.shape.gpucores = static_cast<int>(rng.below(4)) * 10;
      bool placed = false;
      std::vector<DraResult> dra_results;
      for (int attempt = 0; attempt < 2 && !placed; ++attempt) {
        const model::Pod fit_pod = pod_for_fit(pod);
        auto prepared = engine.prepare(fit_pod, "generated pod");
        if (!prepared) return make_error("internal: " + prepared.error().message);
        if (!prepared->requests_devices()) return make_error("internal: a pod without devices");
        fit::NodeFit f = engine.decide(*prepared, node, described, usage).fit;
        // The devices HAMi chose, with what the claim would consume of each, as the allocator
        // computes it. This can fail where HAMi fits on MIG GPUs: HAMi charges an instance the
        // profile's cores while the claim asks the pod's, and it may give one container two
        // instances of one GPU where a claim's devices are distinct.
        dra_results.clear();
        if (f.fits) {
          const dra::Amounts requests = claim_requests(pod.shape);
          for (const device::ContainerDevice& cd :
               f.devices.at(std::string(device::kNvidiaVendor)).at(0)) {
            auto it = std::find_if(devices.begin(), devices.end(),
                                   [&](const device::DeviceInfo& d) { return d.id == cd.uuid; });
            if (it == devices.end()) return make_error("internal: unknown device " + cd.uuid);
            const auto minor = static_cast<size_t>(it - devices.begin());
            const dra::Device& device = slice->devices[minor];
            const bool repeated =
                std::any_of(dra_results.begin(), dra_results.end(),
                            [&](const DraResult& r) { return r.minor == static_cast<int>(minor); });
            if (repeated || !dra::capacity_fits(device, requests, &dra_used[minor], nullptr)) {
              f.fits = false;
              break;
            }
            dra_results.push_back({static_cast<int>(minor), dra_rng.uuid(),
                                   dra::consumed_capacity(device, requests)});
          }
        }
        if (f.fits) {
          for (const DraResult& r : dra_results) {
            for (const auto& [cap, q] : r.consumed)
              dra_used[static_cast<size_t>(r.minor)][cap] += q;
          }
          pod.annotations = f.annotations;
          pod.annotations[std::string(device::kAssignedNodeAnnotation)] = name;
          pod.annotations[std::string(device::kAssignedTimeAnnotation)] = "1764748800";
          pod.annotations[std::string(device::kBindPhaseAnnotation)] = "success";
          pod.annotations[std::string(device::kBindTimeAnnotation)] = "1764748801";
          model::Pod placed_pod = fit_pod;
          for (const auto& [k2, v] : pod.annotations) placed_pod.metadata.annotations[k2] = v;
          auto alloc = engine.allocation(placed_pod);
          if (!alloc) return make_error("internal: " + alloc.error().message);
          fit::add_pod_usage(usage, *alloc);
          placed = true;
          if (o.dra) {
            pod.annotations.clear();  // the allocation is the claim's
            pod.claim = pod.name + "-" + std::string(kDraRequest);
            model::JsonWriter cw;
            write_allocated_claim(cw, pod, dra_results, dra_rng);
            claims_json.push_back(cw.take());
            ++out.stats.resource_claims;
          }
        } else {
          pod.shape.gpus = 1;  // a smaller ask, then none
          pod.shape.gpumem = std::max(256, pod.shape.gpumem / 4 / 256 * 256);
          pod.shape.gpucores = 0;
        }
      }
      if (!placed) pod.shape = {pod.shape.cpu_milli, pod.shape.memory_mi, 0, 0, 0};
      if (placed) ++out.stats.running_device_pods;
      model::JsonWriter pw;
      write_pod(pw, pod, o.dra);
      pods_json.push_back(pw.take());
      ++out.stats.running_pods;
    }
  }

  // Pending pods: `groups` ReplicaSets, each one spec (one CA equivalence group).
  static constexpr std::array<int, 7> kGpuMem = {4096, 8192, 12288, 16384, 20480, 30720, 40960};
  static constexpr std::array<int, 4> kGpuCores = {0, 20, 30, 50};
  for (int g = 0; g < o.groups; ++g) {
    const int size = o.pending / o.groups + (g < o.pending % o.groups ? 1 : 0);
    if (size == 0) continue;
    PodSpecText tpl;
    tpl.app = fmt::format("batch-{}", g);
    tpl.owner_kind = "ReplicaSet";
    tpl.owner_uid = rng.uuid();
    tpl.owner_name = fmt::format("batch-{}-{}", g, tpl.owner_uid.substr(0, 10));
    tpl.namespace_ = fmt::format("ml-{}", g % 5);
    tpl.image = fmt::format("registry.example.com/ml/batch-{}:2.{}", g, g % 7);
    tpl.created = "2026-12-03T08:55:00Z";
    tpl.shape.cpu_milli = 500 * rng.range(1, 8);
    tpl.shape.memory_mi = 2048 * rng.range(1, 8);
    tpl.shape.gpus = o.gpus_per_node >= 2 && rng.percent(20) ? 2 : 1;
    tpl.shape.gpumem = rng.pick(kGpuMem);
    tpl.shape.gpucores = rng.pick(kGpuCores);
    if (o.dra) {
      tpl.claim_template = fmt::format("batch-{}-{}", g, kDraRequest);
      model::JsonWriter tw;
      write_claim_template(tw, tpl.claim_template, tpl, dra_rng);
      templates_json.push_back(tw.take());
      ++out.stats.claim_templates;
    }
    for (int i = 0; i < size; ++i) {
      PodSpecText pod = tpl;
      pod.name = unique_pod_name(tpl.owner_name);
      pod.uid = rng.uuid();
      model::JsonWriter pw;
      write_pod(pw, pod, o.dra);
      pods_json.push_back(pw.take());
      ++out.stats.pending_pods;
    }
  }
  if (o.dra) {
    for (const auto& s : slices_json) w.raw(s);
    write_device_class(w, dra_rng);
    for (const auto& t : templates_json) w.raw(t);
    for (const auto& c : claims_json) w.raw(c);
  }
  for (const auto& p : pods_json) w.raw(p);
  w.end_array().end_object();

  out.cluster_json = w.take();
  out.cluster_json += '\n';
  out.node_groups_yaml = node_groups_yaml(groups, o.gpus_per_node);
  out.device_profiles_yaml = device_profiles_yaml(groups, o.gpus_per_node, o.dra);
  out.stats.nodes = o.nodes;
  out.stats.node_groups = o.node_groups;
  out.stats.cluster_bytes = out.cluster_json.size();
  return out;
}

Status write_cluster(const GeneratedCluster& cluster, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return make_error(dir + ": " + ec.message());
  for (auto [file, text] : {std::pair{"cluster.json", &cluster.cluster_json},
                            std::pair{"node-groups.yaml", &cluster.node_groups_yaml},
                            std::pair{"device-profiles.yaml", &cluster.device_profiles_yaml}}) {
    const std::string path = (std::filesystem::path(dir) / file).string();
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(text->data(), static_cast<std::streamsize>(text->size()));
    f.close();
    if (!f) return make_error(path + ": write failed");
  }
  return ok_status();
}

}  // namespace hamisim::gen

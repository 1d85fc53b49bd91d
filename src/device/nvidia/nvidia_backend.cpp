#include "device/nvidia/nvidia_backend.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "device/allocation.h"
#include "device/codec.h"
#include "device/common/device_checks.h"
#include "device/common/standard_backend.h"
#include "device/nvidia/mig.h"
#include "device/selection.h"

namespace hamisim::device::nvidia {
namespace {

using namespace check;  // the shared reason names

// NVIDIA's own reason names (HAMi pkg/device/common; reference §3.3).
constexpr Reason kCardCordoned = Reason::kCardCordoned;
constexpr Reason kCardMigTopologyInfeasible = Reason::kCardMigTopologyInfeasible;

// Enumerating every combination for topology-aware selection is exponential; HAMi does it
// unbounded. Above this many combinations we switch to a deterministic greedy choice
// (docs/deviations.md) so that no pod can stall the scheduler.
constexpr uint64_t kMaxTopologyCombinations = 1'000'000;
// A MIG device is revisited while it keeps accepting instances; bound it so that a
// registration with zero-size placements cannot loop forever.
constexpr int kMaxMigRevisits = 64;

struct NvidiaPreparedPod final : PreparedPod {
  TypeSelection types;
  UuidSelection uuids;
  std::optional<std::string> vgpu_mode;
  std::string namespace_;
};

bool type_allowed(const NvidiaPreparedPod& p, const DeviceUsage& d) {
  if (!p.types.allows(d.type)) return false;
  // vgpu-mode: the annotation must contain the device mode (an empty mode always matches).
  if (p.vgpu_mode && p.vgpu_mode->find(d.mode) == std::string::npos) return false;
  return true;
}

int64_t pair_score(const DeviceUsage& from, const DeviceUsage& to) {
  if (!from.pair_scores) return 0;
  auto it = from.pair_scores->find(to.id);
  return it == from.pair_scores->end() ? 0 : it->second;
}

// The worst-connected single card: lowest summed pair score to the other candidates.
size_t worst_single_card(const std::vector<DeviceUsage*>& candidates) {
  size_t best = 0;
  int64_t best_sum = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < candidates.size(); ++i) {
    int64_t sum = 0;
    for (size_t j = 0; j < candidates.size(); ++j) {
      if (i != j) sum += pair_score(*candidates[i], *candidates[j]);
    }
    if (sum < best_sum) {
      best_sum = sum;
      best = i;
    }
  }
  return best;
}

uint64_t combinations_count(uint64_t n, uint64_t k) {
  uint64_t result = 1;
  for (uint64_t i = 1; i <= k; ++i) {
    result = result * (n - k + i) / i;
    if (result > kMaxTopologyCombinations) return result;
  }
  return result;
}

int64_t combination_score(const std::vector<DeviceUsage*>& candidates,
                          const std::vector<size_t>& combo) {
  int64_t sum = 0;
  for (size_t a = 0; a < combo.size(); ++a) {
    for (size_t b = a + 1; b < combo.size(); ++b) {
      sum += pair_score(*candidates[combo[a]], *candidates[combo[b]]);
    }
  }
  return sum;
}

// The best-connected set of `k` cards: every combination in lexicographic index order, the
// first with the highest summed pair score wins.
std::vector<size_t> best_connected_set(const std::vector<DeviceUsage*>& candidates, size_t k) {
  const size_t n = candidates.size();
  if (combinations_count(n, k) <= kMaxTopologyCombinations) {
    std::vector<size_t> combo(k);
    for (size_t i = 0; i < k; ++i) combo[i] = i;
    std::vector<size_t> best = combo;
    int64_t best_score = combination_score(candidates, combo);
    while (true) {
      size_t i = k;
      while (i > 0 && combo[i - 1] == n - k + (i - 1)) --i;
      if (i == 0) break;
      ++combo[i - 1];
      for (size_t j = i; j < k; ++j) combo[j] = combo[j - 1] + 1;
      const int64_t s = combination_score(candidates, combo);
      if (s > best_score) {
        best_score = s;
        best = combo;
      }
    }
    return best;
  }
  // Greedy fallback: grow from the first candidate, each time adding the candidate that adds
  // the most pair score (first on ties), then keep index order.
  std::vector<size_t> chosen{0};
  std::vector<bool> used(n, false);
  used[0] = true;
  while (chosen.size() < k) {
    size_t pick = n;
    int64_t pick_gain = std::numeric_limits<int64_t>::min();
    for (size_t c = 0; c < n; ++c) {
      if (used[c]) continue;
      int64_t gain = 0;
      for (size_t s : chosen)
        gain += pair_score(*candidates[std::min(s, c)], *candidates[std::max(s, c)]);
      if (gain > pick_gain) {
        pick_gain = gain;
        pick = c;
      }
    }
    used[pick] = true;
    chosen.push_back(pick);
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

const std::vector<MigProfile>& mig_profiles_of(const DeviceUsage& d) {
  static const std::vector<MigProfile> kNone;
  return d.mig_profiles != nullptr ? *d.mig_profiles : kNone;
}

// The MIG custom rule (reference §3.7 "Fit check"): replay this container's instances already
// selected on the same GPU, then the new request must still find a free placement.
bool mig_fits(const DeviceUsage& d, const ContainerDevices& selected, int64_t memreq) {
  std::vector<MigPlacement> occupied;
  occupied.reserve(d.mig_in_use.size() + selected.size());
  for (const MigInUse& m : d.mig_in_use) occupied.push_back(m.placement);
  for (const ContainerDevice& s : selected) {
    if (s.uuid != d.id) continue;
    auto c = select_mig_candidate(mig_profiles_of(d), occupied, s.usedmem);
    if (!c) return false;
    occupied.push_back(c->placement);
  }
  return select_mig_candidate(mig_profiles_of(d), occupied, memreq).has_value();
}

}  // namespace

NvidiaBackend::NvidiaBackend(NvidiaConfig config) : config_(std::move(config)) {
  names_.count = config_.resource_count_name;
  names_.memory = config_.resource_memory_name;
  names_.memory_percentage = config_.resource_memory_percentage_name;
  names_.cores = config_.resource_core_name;
  names_.memory_factor = config_.memory_factor;
}

std::string_view NvidiaBackend::to_allocate_annotation() const {
  return kNvidiaToAllocateAnnotation;
}
std::string_view NvidiaBackend::allocated_annotation() const {
  return kNvidiaAllocatedAnnotation;
}
std::string_view NvidiaBackend::handshake_annotation() const {
  return kNvidiaHandshakeAnnotation;
}
std::vector<std::string> NvidiaBackend::managed_resources() const {
  std::vector<std::string> out = DeviceBackend::managed_resources();
  if (!config_.resource_priority_name.empty()) out.push_back(config_.resource_priority_name);
  return out;
}

// HAMi GenerateResourceRequests (reference §2.3).
ContainerDeviceRequest NvidiaBackend::request_for(const model::Container& c) const {
  const model::Quantity* count_q = find_resource(c, config_.resource_count_name);
  if (!count_q) return {};
  const std::optional<int64_t> count = count_q->as_int64();
  // Go converts with int32(n); a count outside int32 or below 1 is no NVIDIA request at all.
  if (!count || *count <= 0 || *count > std::numeric_limits<int32_t>::max()) return {};

  const int64_t factor = std::max<int32_t>(config_.memory_factor, 1);
  int64_t mem = 0;
  if (const model::Quantity* mem_q = find_resource(c, config_.resource_memory_name)) {
    const std::optional<int64_t> v = mem_q->as_int64();
    if (!v || *v < 0 || *v > std::numeric_limits<int32_t>::max() / factor) return {};
    mem = config_.memory_factor > 1 ? *v * config_.memory_factor : *v;
  }

  int32_t pct = kNoMemPercentage;
  if (const model::Quantity* pct_q = find_resource(c, config_.resource_memory_percentage_name)) {
    if (const std::optional<int64_t> v = pct_q->as_int64()) {
      if (*v >= 1) pct = static_cast<int32_t>(std::min<int64_t>(*v, 100));
    }
  }
  if (pct == kNoMemPercentage && mem == 0) {
    if (config_.default_memory != 0) {
      mem = config_.default_memory;
    } else {
      pct = 100;
    }
  }

  int32_t cores = config_.default_cores;
  if (const model::Quantity* cores_q = find_resource(c, config_.resource_core_name)) {
    if (const std::optional<int64_t> v = cores_q->as_int64()) cores = saturate_int32(*v);
  }
  return ContainerDeviceRequest{static_cast<int32_t>(*count), std::string(kNvidiaVendor),
                                static_cast<int32_t>(mem), pct, cores};
}

NodeDevices NvidiaBackend::node_devices(const model::Node& node) const {
  NodeDevices out;
  auto decoded = read_registration(node, kNvidiaRegisterAnnotation, "no gpu found on node", out,
                                   [](const std::string& v) { return decode_register_json(v); });
  if (!decoded) return out;
  out.devices = std::move(*decoded);
  if (const std::string* score = model::find_annotation(node.metadata, kNvidiaScoreAnnotation)) {
    auto scores = decode_pair_scores(*score);
    if (!scores) {
      out.state = NodeDevices::State::kMalformed;
      out.message = std::string(kNvidiaScoreAnnotation) + ": " + scores.error().message;
      out.devices.clear();
      return out;
    }
    for (DeviceInfo& d : out.devices) {
      for (const DevicePairScore& s : *scores) {
        if (s.uuid == d.id) d.pair_scores = s.scores;
      }
    }
  }
  for (DeviceInfo& d : out.devices) d.device_vendor = std::string(kNvidiaVendor);
  out.state = NodeDevices::State::kOk;
  return out;
}

std::unique_ptr<PreparedPod> NvidiaBackend::prepare(const model::Pod& pod) const {
  auto p = std::make_unique<NvidiaPreparedPod>();
  p->types = TypeSelection::read(pod.metadata, kUseGpuTypeAnnotation, kNoUseGpuTypeAnnotation);
  p->uuids = UuidSelection::read(pod.metadata, kUseGpuUuidAnnotation, kNoUseGpuUuidAnnotation);
  if (const std::string* mode = model::find_annotation(pod.metadata, kVgpuModeAnnotation)) {
    p->vgpu_mode = *mode;
  }
  p->namespace_ = pod.metadata.namespace_;
  return p;
}

bool NvidiaBackend::is_mig_request(const PreparedPod& prepared,
                                   std::span<DeviceUsage* const> devices) const {
  const auto& p = static_cast<const NvidiaPreparedPod&>(prepared);
  if (p.vgpu_mode && p.vgpu_mode->find("mig") == std::string::npos) return false;
  return std::any_of(devices.begin(), devices.end(),
                     [](const DeviceUsage* d) { return d->mode == "mig"; });
}

// HAMi NvidiaGPUDevices.Fit, check for check (reference §3.2).
FitOutcome NvidiaBackend::fit(std::span<DeviceUsage* const> devices,
                              const ContainerDeviceRequest& request, const FitContext& ctx) const {
  const auto& pod = static_cast<const NvidiaPreparedPod&>(*ctx.prepared);
  FitOutcome out;
  ContainerDeviceRequest k = request;
  const int32_t origin_nums = request.nums;
  int64_t prev_numa = -1;
  const bool need_topology = policy_has_token(ctx.gpu_policy, "topology-aware");
  const bool is_mutex = policy_has_token(ctx.gpu_policy, "mutex");
  ContainerDevices& selected = out.devices;
  std::vector<DeviceUsage*> selected_usage;  // parallel to `selected` (topology choice)
  // Verdict texts only when someone will read them (hamisim fit), never on the hot path.
  const check::Failures failures(out, ctx.explain);

  ptrdiff_t revisit_index = -1;
  int revisits = 0;
  for (ptrdiff_t i = static_cast<ptrdiff_t>(devices.size()) - 1; i >= 0; --i) {
    const DeviceUsage& d = *devices[i];
    const auto fail = failures.on(d);
    if (!d.health) {
      fail(kCardNotHealth, "");
      continue;
    }
    if (ctx.cordoned && ctx.cordoned->count(d.id)) {
      fail(kCardCordoned, "");
      continue;
    }
    if (k.type != kNvidiaVendor || !type_allowed(pod, d)) {
      fail(kCardTypeMismatch, [&] {
        return "type \"" + d.type + "\" mode \"" + d.mode + "\" not selected by the pod";
      });
      continue;
    }
    if (ctx.numa_bind && d.numa != prev_numa) {
      if (k.nums != origin_nums) out.reasons[kNumaNotFit] += static_cast<int>(selected.size());
      k.nums = origin_nums;
      prev_numa = d.numa;
      selected.clear();
      selected_usage.clear();
    }
    if (!pod.uuids.allows(d.id)) {
      fail(kCardUuidMismatch, "");
      continue;
    }
    if (!slots_free(d, is_mutex, kGpuWording, fail)) continue;
    if (k.coresreq > 100) k.coresreq = 100;
    int64_t memreq = k.memreq > 0 ? k.memreq : 0;
    if (k.mem_percentagereq != kNoMemPercentage && k.memreq == 0) {
      memreq = int64_t{d.totalmem} * k.mem_percentagereq / 100;
    }
    // Built only when needed (quota check, selection): most devices are rejected below, and
    // copying the UUID for each was a tenth of a live filter's fits.
    auto make_candidate = [&] {
      return check::taken(d, std::string(kNvidiaVendor), saturate_int32(memreq), k.coresreq);
    };
    if (ctx.quota && !namespace_quota_allows(ctx, kNvidiaVendor, selected, make_candidate())) {
      fail(kResourceQuotaNotFit, "");
      continue;
    }
    if (!memory_free(d, memreq, fail)) continue;
    if (!cores_free(d, d.totalcore, k.coresreq, kGpuWording, fail)) continue;
    if (d.mode == "mig" && !mig_fits(d, selected, memreq)) {
      fail(kCardMigTopologyInfeasible, "");
      continue;
    }

    if (k.nums > 0) {
      if (!need_topology) --k.nums;
      selected.push_back(make_candidate());
      selected_usage.push_back(devices[i]);
    }
    if (k.nums == 0 && !need_topology) {
      out.fits = true;
      return out;
    }
    if (d.mode == "mig") {
      if (revisit_index != i) {
        revisit_index = i;
        revisits = 0;
      }
      if (++revisits <= kMaxMigRevisits) ++i;  // try the same GPU again for another instance
    }
  }

  if (need_topology) {
    const size_t want = static_cast<size_t>(std::max(origin_nums, 0));
    if (selected.size() == want) {
      out.fits = true;
      return out;
    }
    if (selected.size() > want) {
      ContainerDevices chosen;
      if (want == 1) {
        chosen.push_back(selected[worst_single_card(selected_usage)]);
      } else {
        for (size_t idx : best_connected_set(selected_usage, want)) chosen.push_back(selected[idx]);
      }
      out.devices = std::move(chosen);
      out.fits = true;
      return out;
    }
  }
  if (!selected.empty()) {
    out.reasons[kAllocatedCardsInsufficientRequest] = static_cast<int>(selected.size());
  }
  return out;
}

// HAMi AddResourceUsage (reference §4.2, MIG commit §3.7).
Status NvidiaBackend::add_usage(DeviceUsage& usage, ContainerDevice& chosen) const {
  if (usage.mode == "mig") {
    std::vector<MigPlacement> occupied;
    occupied.reserve(usage.mig_in_use.size());
    for (const MigInUse& m : usage.mig_in_use) occupied.push_back(m.placement);
    auto c = select_mig_candidate(mig_profiles_of(usage), occupied, chosen.usedmem);
    if (!c) return make_error("MIG profile and placement allocation failed");
    chosen.usedmem = c->profile->memory_mb;
    chosen.usedcores = c->profile->core;
    chosen.mig_profile = c->profile->name;
    chosen.mig_placement = c->placement;
    usage.mig_in_use.push_back(MigInUse{c->profile->name, c->placement, false});
  }
  usage.used += 1;
  usage.usedcores += chosen.usedcores;
  usage.usedmem += chosen.usedmem;
  return ok_status();
}

void NvidiaBackend::annotate_allocation(const PodSingleDevice& devices,
                                        const AnnotationContext& context,
                                        std::map<std::string, std::string>& annotations) const {
  const std::string encoded = encode_pod_devices(devices);
  annotations[std::string(kNvidiaToAllocateAnnotation)] = encoded;
  annotations[std::string(kNvidiaAllocatedAnnotation)] = encoded;
  std::vector<MigAllocation> mig;
  for (size_t ci = 0; ci < devices.size(); ++ci) {
    for (size_t di = 0; di < devices[ci].size(); ++di) {
      const ContainerDevice& d = devices[ci][di];
      if (!d.mig_profile || !d.mig_placement) continue;
      mig.push_back(MigAllocation{static_cast<int64_t>(ci), static_cast<int64_t>(di), d.uuid,
                                  *d.mig_profile, *d.mig_placement, std::nullopt, std::nullopt,
                                  std::nullopt});
    }
  }
  if (!mig.empty())
    annotations[std::string(kMigAllocationsAnnotation)] = encode_mig_allocations(mig);
}

}  // namespace hamisim::device::nvidia

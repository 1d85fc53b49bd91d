#include "dra/allocator/allocator.h"

#include <fmt/format.h>

#include <algorithm>
#include <type_traits>
#include <utility>

namespace hamisim::dra {

// ---- allocated state ----------------------------------------------------------------------

void AllocatedState::add(const AllocationResult& allocation) {
  for (const auto& r : allocation.results) {
    if (r.admin_access) continue;  // never blocks anything (kube-scheduler; CA differs)
    const DeviceRef ref{r.driver, r.pool, r.device};
    if (!r.share_id) {
      auto it = whole_.find(ref);
      if (it == whole_.end()) it = whole_.emplace(DeviceId{r.driver, r.pool, r.device}, 0).first;
      ++it->second;
      continue;
    }
    auto it = shares_.find(ref);
    if (it == shares_.end()) {
      it = shares_.emplace(DeviceId{r.driver, r.pool, r.device}, Shares{}).first;
    }
    it->second.ids.insert(*r.share_id);
    for (const auto& [name, amount] : r.consumed_capacity) it->second.consumed[name] += amount;
    if (!r.consumed_capacity.empty()) ++it->second.consuming;
  }
}

void AllocatedState::remove(const AllocationResult& allocation) {
  for (const auto& r : allocation.results) {
    if (r.admin_access) continue;
    const DeviceRef ref{r.driver, r.pool, r.device};
    if (!r.share_id) {
      const auto it = whole_.find(ref);
      if (it != whole_.end() && --it->second == 0) whole_.erase(it);
      continue;
    }
    const auto it = shares_.find(ref);
    if (it == shares_.end()) continue;
    it->second.ids.erase(*r.share_id);
    for (const auto& [name, amount] : r.consumed_capacity) it->second.consumed[name] -= amount;
    if (!r.consumed_capacity.empty()) --it->second.consuming;
    if (it->second.ids.empty()) shares_.erase(it);
  }
}

AllocatedState AllocatedState::of(const std::vector<ResourceClaim>& claims) {
  AllocatedState state;
  for (const auto& claim : claims) {
    if (claim.status.allocation) state.add(*claim.status.allocation);
  }
  return state;
}

bool AllocatedState::held_whole(DeviceRef device) const {
  return whole_.contains(device);
}

bool AllocatedState::has_share(DeviceRef device, std::string_view share_id) const {
  const auto it = shares_.find(device);
  return it != shares_.end() && it->second.ids.contains(share_id);
}

const Amounts* AllocatedState::consumed(DeviceRef device) const {
  const auto it = shares_.find(device);
  return it != shares_.end() && it->second.consuming > 0 ? &it->second.consumed : nullptr;
}

bool AllocatedState::in_use(DeviceRef device) const {
  return whole_.contains(device) || shares_.contains(device);
}

std::string ShareIds::next(const AllocatedState& committed, DeviceRef device) {
  for (;;) {
    std::string id = fmt::format("00000000-0000-4000-8000-{:012x}", next_++ & 0xffffffffffffULL);
    if (!committed.has_share(device, id)) return id;
  }
}

const Result<cel::Selector>& SelectorCache::get(std::string_view expression) {
  auto it = compiled_.find(expression);
  if (it == compiled_.end()) {
    it = compiled_.emplace(std::string(expression), cel::Selector::compile(expression)).first;
  }
  return it->second;
}

namespace {

constexpr std::string_view kCannotAllocate = "cannot allocate all claims";
constexpr std::string_view kInvalidPools = "invalid resource pools were encountered";
constexpr std::string_view kTimedOut = "timed out trying to allocate devices";
// Claims of one pod allocated at once: bounds the search's recursion (at most 32 results and
// 32 requests per claim, one frame each).
constexpr size_t kMaxClaimsPerPod = 128;

// An attribute or capacity by domain and identifier: written qualified ("domain/id"), or bare
// when the domain is the device's driver (reference §2.10, §3.1).
template <class V>
const V* find_qualified(const NameMap<V>& map, std::string_view driver, std::string_view domain,
                        std::string_view id) {
  for (const auto& [key, value] : map) {
    const std::string_view k = key;
    const size_t slash = k.find('/');
    if (slash == std::string_view::npos) {
      if (domain == driver && k == id) return &value;
    } else if (k.substr(0, slash) == domain && k.substr(slash + 1) == id) {
      return &value;
    }
  }
  return nullptr;
}

// The `device` variable of a selector, over one device of a slice.
class CelDevice final : public cel::Device {
 public:
  CelDevice(std::string_view driver, const dra::Device& device)
      : driver_(driver), device_(device) {}
  std::string_view driver() const override { return driver_; }
  bool allow_multiple_allocations() const override { return device_.allow_multiple_allocations; }
  const cel::Attribute* attribute(std::string_view domain, std::string_view id) const override {
    return find_qualified(device_.attributes, driver_, domain, id);
  }
  const model::Quantity* capacity(std::string_view domain, std::string_view id) const override {
    const DeviceCapacity* c = find_qualified(device_.capacity, driver_, domain, id);
    return c ? &c->value : nullptr;
  }
  Names attribute_names() const override { return qualified_names(device_.attributes); }
  Names capacity_names() const override { return qualified_names(device_.capacity); }

 private:
  template <class V>
  Names qualified_names(const NameMap<V>& map) const {
    Names out;
    for (const auto& [key, value] : map) {
      const std::string_view k = key;
      const size_t slash = k.find('/');
      if (slash == std::string_view::npos) {
        out.emplace_back(driver_, k);
      } else {
        out.emplace_back(k.substr(0, slash), k.substr(slash + 1));
      }
    }
    return out;
  }

  std::string_view driver_;
  const dra::Device& device_;
};

// Go compares version attributes as their canonical strings: build metadata counts.
bool same_value(const cel::Attribute& a, const cel::Attribute& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        const T& w = std::get<T>(b);
        if constexpr (std::is_same_v<T, cel::Semver>) {
          return v.major == w.major && v.minor == w.minor && v.patch == w.patch &&
                 v.prerelease == w.prerelease && v.build == w.build;
        } else {
          return v == w;
        }
      },
      a);
}

// Only NoSchedule and NoExecute taints block, unless a toleration matches (reference §2.14).
bool tolerated(const std::vector<DeviceTaint>& taints,
               const std::vector<DeviceToleration>& tolerations) {
  for (const auto& taint : taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    const bool ok = std::any_of(tolerations.begin(), tolerations.end(), [&](const auto& t) {
      if (!t.effect.empty() && t.effect != taint.effect) return false;
      if (!t.key.empty() && t.key != taint.key) return false;
      if (t.op == "Exists") return true;
      return t.value == taint.value;  // Equal, the default
    });
    if (!ok) return false;
  }
  return true;
}

// A device of a complete, valid pool, in first-fit order, with what the cluster already holds
// of it.
struct Candidate {
  size_t pool;  // index into the pools given
  const ResourceSlice* slice;
  const dra::Device* device;
  DeviceRef id;
  bool held_whole;           // a committed allocation holds it whole
  const Amounts* committed;  // what committed shares consume; nullptr: nothing recorded
  bool committed_in_use;     // held whole or shared by a committed allocation
};

// One way a request can be satisfied: the request itself, or one of its firstAvailable
// alternatives.
struct Alternative {
  const ExactDeviceRequest* spec;
  std::string_view request;     // the request's name
  std::string_view subrequest;  // empty unless an alternative
  std::string name;             // "<request>" or "<request>/<subrequest>"
  const DeviceClass* device_class;
  std::vector<const cel::Selector*> class_selectors;
  std::vector<const cel::Selector*> selectors;
  int64_t devices = 0;
  bool all = false;
  std::vector<size_t> all_devices;  // `All`: the candidates, fixed before the search
  std::vector<int8_t> selectable;   // per candidate: -1 not evaluated yet, 0 or 1
};

struct Request {
  std::vector<Alternative> alternatives;
  bool first_available = false;
};

// matchAttribute or distinctAttribute over the results of the requests it names (reference
// §2.10), reproducing the scheduler's bookkeeping: distinct values are kept per request name,
// so two devices of one request replace each other's value.
class Constraint {
 public:
  explicit Constraint(const DeviceConstraint& c)
      : requests_(c.requests),
        distinct_(c.distinct_attribute.has_value()),
        attribute_(distinct_ ? *c.distinct_attribute : c.match_attribute.value_or("")),
        slash_(attribute_.find('/')) {}

  bool add(const Alternative& alt, const Candidate& d) {
    if (!applies(alt)) return true;
    // The name is qualified (the decoder checks it): domain/identifier.
    const std::string_view name = attribute_;
    const cel::Attribute* value = find_qualified(d.device->attributes, d.slice->driver,
                                                 name.substr(0, slash_), name.substr(slash_ + 1));
    if (value == nullptr) return false;
    if (distinct_) {
      for (const auto& [request, other] : values_) {
        if (same_value(*value, *other)) return false;
      }
      auto it = std::find_if(values_.begin(), values_.end(),
                             [&](const auto& e) { return e.first == alt.request; });
      if (it == values_.end()) {
        values_.emplace_back(alt.request, value);
      } else {
        it->second = value;
      }
      return true;
    }
    if (devices_ > 0 && !same_value(*value, *match_)) return false;
    if (devices_ == 0) match_ = value;
    ++devices_;
    return true;
  }

  void remove(const Alternative& alt) {
    if (!applies(alt)) return;
    if (distinct_) {
      std::erase_if(values_, [&](const auto& e) { return e.first == alt.request; });
    } else {
      --devices_;
    }
  }

 private:
  // "req" names the request and each of its alternatives; "req/sub" one alternative.
  bool applies(const Alternative& alt) const {
    if (requests_.empty()) return true;
    for (const std::string_view r : requests_) {
      if (r == alt.request) return true;
      if (!alt.subrequest.empty() && r.size() == alt.request.size() + 1 + alt.subrequest.size() &&
          r.starts_with(alt.request) && r[alt.request.size()] == '/' &&
          r.ends_with(alt.subrequest)) {
        return true;
      }
    }
    return false;
  }

  std::vector<std::string> requests_;
  bool distinct_;
  std::string attribute_;
  size_t slash_;
  const cel::Attribute* match_ = nullptr;
  int64_t devices_ = 0;
  std::vector<std::pair<std::string_view, const cel::Attribute*>> values_;
};

struct Claim {
  const ResourceClaim* claim;
  std::string name;  // namespace/name, for errors
  std::vector<Request> requests;
  std::vector<Constraint> constraints;
};

struct Chosen {
  size_t candidate;
  const Alternative* alternative;
  Amounts consumed;  // multi-allocatable devices only
  bool counters_taken = false;
};

// Counters of one pool: what its counter sets hold minus what committed devices of the pool
// (on any node) consume, and what devices chosen in this allocation consume.
struct PoolCounters {
  bool known = false;
  NameMap<Counters> available;
  NameMap<Counters> consumed;
};

enum class Outcome { kSuccess, kFail, kTooManyResults, kError, kTimedOut };
enum class Try { kAllocated, kSkip, kError };

std::string claim_name(const ResourceClaim& claim) {
  return claim.metadata.namespace_.empty()
             ? claim.metadata.name
             : fmt::format("{}/{}", claim.metadata.namespace_, claim.metadata.name);
}

std::string device_name(DeviceRef d) {
  return fmt::format("{}/{}/{}", d.driver, d.pool, d.device);
}

class Search {
 public:
  Search(const std::vector<Pool>& pools, std::string_view node_name,
         const NodeSelectorMatch& matches_node, const AllocatedState& committed,
         const NameMap<const DeviceClass*>& classes, SelectorCache& selectors, ShareIds& share_ids,
         int64_t budget, const std::function<bool()>& stop)
      : pools_(pools),
        node_name_(node_name),
        matches_node_(matches_node),
        committed_(committed),
        classes_(classes),
        selectors_(selectors),
        share_ids_(share_ids),
        budget_(budget),
        stop_(stop),
        counters_(pools.size()) {
    for (size_t p = 0; p < pools.size(); ++p) {
      const Pool& pool = pools[p];
      if (pool.incomplete) continue;
      if (!pool.invalid.empty()) {
        invalid_pools_ = true;
        continue;
      }
      for (const ResourceSlice* slice : pool.slices) {
        for (const dra::Device& device : slice->devices) {
          const DeviceRef id{slice->driver, slice->pool.name, device.name};
          candidates_.push_back({p, slice, &device, id, committed.held_whole(id),
                                 committed.consumed(id), committed.in_use(id)});
        }
      }
    }
    holders_.resize(candidates_.size());
    allocating_.resize(candidates_.size());
    shares_in_call_.resize(candidates_.size());
  }

  Status prepare(const std::vector<const ResourceClaim*>& claims) {
    if (claims.size() > kMaxClaimsPerPod) {
      return make_error(
          fmt::format("the pod has {} claims to allocate; hamisim allocates at most {}",
                      claims.size(), kMaxClaimsPerPod));
    }
    claims_.reserve(claims.size());
    for (const ResourceClaim* c : claims) {
      Claim& claim = claims_.emplace_back(Claim{c, claim_name(*c), {}, {}});
      const std::string& name = claim.name;
      int64_t min_devices = 0;
      for (const DeviceRequest& r : c->spec.requests) {
        Request& request = claim.requests.emplace_back();
        request.first_available = !r.exactly;
        int64_t fewest = INT64_MAX;
        if (r.exactly) {
          auto alt = prepare_alternative(name, r.name, "", *r.exactly);
          if (!alt.ok()) return alt.error();
          request.alternatives.push_back(std::move(*alt));
          fewest = request.alternatives.back().devices;
        }
        for (const DeviceSubRequest& s : r.first_available) {
          auto alt = prepare_alternative(name, r.name, s.name, s.request);
          if (!alt.ok()) return alt.error();
          request.alternatives.push_back(std::move(*alt));
          fewest = std::min(fewest, request.alternatives.back().devices);
        }
        if (fewest != INT64_MAX) min_devices += fewest;
      }
      if (min_devices > Allocator::kMaxResultsPerClaim) {
        return make_error(
            fmt::format("claim {}: number of requested devices {} exceeds the claim limit of {}",
                        name, min_devices, Allocator::kMaxResultsPerClaim));
      }
      for (const DeviceConstraint& k : c->spec.constraints) claim.constraints.emplace_back(k);
    }
    results_.resize(claims_.size());
    return ok_status();
  }

  Result<NodeAllocation> run() {
    switch (solve(0, 0, 0, false, 0, 0)) {
      case Outcome::kSuccess:
        return build();
      case Outcome::kError:
        return make_error(error_);
      case Outcome::kTimedOut:
        return NodeAllocation{{}, std::string(kTimedOut)};
      case Outcome::kFail:
      case Outcome::kTooManyResults:
        break;
    }
    return NodeAllocation{{}, std::string(invalid_pools_ ? kInvalidPools : kCannotAllocate)};
  }

 private:
  Result<Alternative> prepare_alternative(const std::string& claim, std::string_view request,
                                          std::string_view subrequest,
                                          const ExactDeviceRequest& spec) {
    Alternative alt;
    alt.spec = &spec;
    alt.request = request;
    alt.subrequest = subrequest;
    alt.name =
        subrequest.empty() ? std::string(request) : fmt::format("{}/{}", request, subrequest);
    const auto cls = classes_.find(spec.device_class_name);
    if (cls == classes_.end()) {
      return make_error(fmt::format("claim {}, request {}: device class {} does not exist", claim,
                                    alt.name, spec.device_class_name));
    }
    alt.device_class = cls->second;
    for (size_t i = 0; i < alt.device_class->selectors.size(); ++i) {
      const auto& s = selectors_.get(alt.device_class->selectors[i]);
      if (!s.ok()) {
        return make_error(fmt::format("device class {}: selector #{}: {}",
                                      alt.device_class->metadata.name, i, s.error().message));
      }
      alt.class_selectors.push_back(&*s);
    }
    for (size_t i = 0; i < spec.selectors.size(); ++i) {
      const auto& s = selectors_.get(spec.selectors[i]);
      if (!s.ok()) {
        return make_error(fmt::format("claim {}, request {}: selector #{}: {}", claim, alt.name, i,
                                      s.error().message));
      }
      alt.selectors.push_back(&*s);
    }
    alt.selectable.assign(candidates_.size(), -1);
    alt.all = spec.allocation_mode == AllocationMode::kAll;
    if (!alt.all) {
      alt.devices = spec.count;
      return alt;
    }
    // `All`: every selectable device of the node whose capacity (not what is left of it) can
    // take the request, fixed now. Devices other claims hold or whose capacity they consume stay
    // in the set and make the request fail later (Kubernetes 1.37's incubating allocator).
    for (const Pool& pool : pools_) {
      if (pool.incomplete || !pool.invalid.empty()) {
        return make_error(fmt::format(
            "claim {}, request {}: asks for all devices, but resource pool {}/{} is currently {}",
            claim, alt.name, pool.driver, pool.name,
            pool.incomplete ? "being updated" : "invalid"));
      }
    }
    for (size_t d = 0; d < candidates_.size(); ++d) {
      if (d % Allocator::kStopCheckSteps == 0 && stop_ && stop_()) {
        return make_error("cancelled: the allocation was stopped");
      }
      const int selectable = is_selectable(claim, alt, d);
      if (selectable < 0) return make_error(error_);
      const Candidate& c = candidates_[d];
      if (selectable && capacity_fits(*c.device, spec.capacity_requests, nullptr, nullptr)) {
        alt.all_devices.push_back(d);
      }
    }
    alt.devices = static_cast<int64_t>(alt.all_devices.size());
    return alt;
  }

  // The search (reference §2.6). A slot is (claim, request, alternative, device number);
  // `start` is where the next device of the same request is looked for: combinations only.
  Outcome solve(size_t c, size_t r, size_t a, bool in_alternative, int64_t device, size_t start) {
    if (c == claims_.size()) return Outcome::kSuccess;
    Claim& claim = claims_[c];
    if (r == claim.requests.size()) {
      const Outcome next = solve(c + 1, 0, 0, false, 0, 0);
      return next == Outcome::kTooManyResults ? Outcome::kFail : next;
    }
    Request& request = claim.requests[r];
    if (request.first_available && !in_alternative) {
      bool all_too_many = true;
      for (size_t s = 0; s < request.alternatives.size(); ++s) {
        const Outcome o = solve(c, r, s, true, 0, 0);
        if (o == Outcome::kTooManyResults) continue;
        all_too_many = false;
        if (o != Outcome::kFail) return o;
      }
      return all_too_many ? Outcome::kTooManyResults : Outcome::kFail;
    }
    Alternative& alt = request.alternatives[a];
    if (alt.all && alt.all_devices.empty()) return Outcome::kFail;
    if (device == alt.devices) return solve(c, r + 1, 0, false, 0, 0);
    if (static_cast<int64_t>(results_[c].size()) + (alt.devices - device) >
        Allocator::kMaxResultsPerClaim) {
      return Outcome::kTooManyResults;
    }
    if (alt.all) {
      if (out_of_steps()) return Outcome::kTimedOut;
      const size_t d = alt.all_devices[static_cast<size_t>(device)];
      const Try t = try_allocate(c, alt, d, true);
      if (t == Try::kError) return Outcome::kError;
      if (t == Try::kSkip) return Outcome::kFail;
      const Outcome o = solve(c, r, a, in_alternative, device + 1, 0);
      if (o != Outcome::kSuccess) undo(c);
      return o;
    }
    for (size_t d = start; d < candidates_.size(); ++d) {
      if (out_of_steps()) return Outcome::kTimedOut;
      if (in_use(c, alt, d)) continue;
      const int selectable = is_selectable(claim.name, alt, d);
      if (selectable < 0) return Outcome::kError;
      if (!selectable) continue;
      const Candidate& cand = candidates_[d];
      if (!capacity_fits(*cand.device, alt.spec->capacity_requests, cand.committed,
                         &allocating_[d])) {
        continue;
      }
      const Try t = try_allocate(c, alt, d, false);
      if (t == Try::kError) return Outcome::kError;
      if (t == Try::kSkip) continue;
      const Outcome o = solve(c, r, a, in_alternative, device + 1, d + 1);
      if (o == Outcome::kSuccess) return o;
      undo(c);
      if (o != Outcome::kFail) return o;
    }
    return Outcome::kFail;
  }

  // One more step: false while the budget lasts and the caller has not stopped the search.
  bool out_of_steps() {
    if (++steps_ > budget_) return true;
    return steps_ % Allocator::kStopCheckSteps == 0 && stop_ && stop_();
  }

  // Step 1 of the checks: held whole by a committed claim or by a claim of this allocation.
  // An admin-access request only avoids devices its own claim holds.
  bool in_use(size_t c, const Alternative& alt, size_t d) const {
    const auto& holders = holders_[d];
    if (alt.spec->admin_access) {
      return std::find(holders.begin(), holders.end(), c) != holders.end();
    }
    return candidates_[d].held_whole || !holders.empty();
  }

  // Steps 3–4: class selectors, then the request's, then per-device node selection; cached.
  // -1: a selector failed at run time (error_ says where).
  int is_selectable(const std::string& claim, Alternative& alt, size_t d) {
    int8_t& cached = alt.selectable[d];
    if (cached >= 0) return cached;
    const Candidate& c = candidates_[d];
    const CelDevice device(c.slice->driver, *c.device);
    for (size_t i = 0; i < alt.class_selectors.size(); ++i) {
      const auto matched = alt.class_selectors[i]->matches(device);
      if (!matched.ok()) {
        error_ = fmt::format("device class {}: selector #{}: CEL runtime error on device {}: {}",
                             alt.device_class->metadata.name, i, device_name(c.id),
                             matched.error().message);
        return -1;
      }
      if (!*matched) return cached = 0;
    }
    for (size_t i = 0; i < alt.selectors.size(); ++i) {
      const auto matched = alt.selectors[i]->matches(device);
      if (!matched.ok()) {
        error_ =
            fmt::format("claim {}, request {}: selector #{}: CEL runtime error on device {}: {}",
                        claim, alt.name, i, device_name(c.id), matched.error().message);
        return -1;
      }
      if (!*matched) return cached = 0;
    }
    if (c.slice->per_device_node_selection &&
        !device_on_node(*c.slice, *c.device, node_name_, matches_node_)) {
      return cached = 0;
    }
    return cached = 1;
  }

  // Step 6 (allocateDevice): counters, taints, constraints, then record the device.
  Try try_allocate(size_t c, const Alternative& alt, size_t d, bool must) {
    const Candidate& cand = candidates_[d];
    const bool shared = cand.device->allow_multiple_allocations;
    if (in_use(c, alt, d)) return Try::kSkip;
    // A shared device takes its counters once, at its first share: one made earlier in this
    // allocation, or a committed one (Kubernetes 1.37's deviceCapacityInUse also counts a
    // committed share that recorded no consumed capacity, which 1.36 missed).
    bool counters_taken = false;
    if (!cand.device->consumes_counters.empty()) {
      const bool capacity_in_use =
          shared && (cand.committed_in_use || cand.committed != nullptr || shares_in_call_[d] > 0);
      if (!capacity_in_use) {
        if (!take_counters(cand)) return Try::kSkip;
        counters_taken = true;
      }
    }
    if (!tolerated(cand.device->taints, alt.spec->tolerations)) {
      if (counters_taken) release_counters(cand);
      return Try::kSkip;
    }
    auto& constraints = claims_[c].constraints;
    size_t added = 0;
    while (added < constraints.size() && constraints[added].add(alt, cand)) ++added;
    if (added < constraints.size()) {
      for (size_t k = 0; k < added; ++k) constraints[k].remove(alt);
      if (counters_taken) release_counters(cand);
      if (must) {
        error_ = fmt::format(
            "claim {}, request {}: cannot add device {} because a claim constraint would not be "
            "satisfied",
            claims_[c].name, alt.name, device_name(cand.id));
        return Try::kError;
      }
      return Try::kSkip;
    }
    if (!capacity_fits(*cand.device, alt.spec->capacity_requests, cand.committed,
                       &allocating_[d])) {
      for (auto& k : constraints) k.remove(alt);
      if (counters_taken) release_counters(cand);
      return Try::kSkip;
    }
    Chosen chosen{d, &alt, {}, counters_taken};
    if (shared) {
      chosen.consumed = consumed_capacity(*cand.device, alt.spec->capacity_requests);
      for (const auto& [name, amount] : chosen.consumed) allocating_[d][name] += amount;
      ++shares_in_call_[d];
    } else {
      holders_[d].push_back(c);
    }
    results_[c].push_back(std::move(chosen));
    return Try::kAllocated;
  }

  // Reverses the claim's last device, counters included: Kubernetes 1.37's rollbackDevice
  // gives back the counters a shared device took at its first share too (1.36 kept them, the
  // quirk of reference §2.9; found by the differential test).
  void undo(size_t c) {
    Chosen chosen = std::move(results_[c].back());
    results_[c].pop_back();
    const Candidate& cand = candidates_[chosen.candidate];
    for (auto& k : claims_[c].constraints) k.remove(*chosen.alternative);
    if (cand.device->allow_multiple_allocations) {
      for (const auto& [name, amount] : chosen.consumed)
        allocating_[chosen.candidate][name] -= amount;
      --shares_in_call_[chosen.candidate];
    } else {
      auto& holders = holders_[chosen.candidate];
      holders.erase(std::find(holders.begin(), holders.end(), c));
    }
    if (chosen.counters_taken) release_counters(cand);
  }

  PoolCounters& pool_counters(size_t p) {
    PoolCounters& pc = counters_[p];
    if (pc.known) return pc;
    pc.known = true;
    const Pool& pool = pools_[p];
    for (const auto* list : {&pool.slices, &pool.other_slices}) {
      for (const ResourceSlice* s : *list) {
        for (const CounterSet& set : s->shared_counters) pc.available[set.name] = set.counters;
      }
    }
    for (const auto* list : {&pool.slices, &pool.other_slices}) {
      for (const ResourceSlice* s : *list) {
        for (const dra::Device& d : s->devices) {
          if (d.consumes_counters.empty()) continue;
          if (!committed_.in_use({s->driver, s->pool.name, d.name})) continue;
          for (const auto& use : d.consumes_counters) {
            for (const auto& [counter, amount] : use.counters) {
              pc.available[use.counter_set][counter] -= amount;
            }
          }
        }
      }
    }
    return pc;
  }

  // Adds the device's counters to what this allocation consumes of its pool; false (and
  // nothing added) when any counter of the pool would then be short, as the scheduler checks
  // every counter of the pool, not only the device's.
  bool take_counters(const Candidate& cand) {
    PoolCounters& pc = pool_counters(cand.pool);
    for (const auto& use : cand.device->consumes_counters) {
      for (const auto& [counter, amount] : use.counters)
        pc.consumed[use.counter_set][counter] += amount;
    }
    for (const auto& [set, counters] : pc.available) {
      const auto consumed = pc.consumed.find(set);
      for (const auto& [counter, available] : counters) {
        Quantity used;
        if (consumed != pc.consumed.end()) {
          const auto it = consumed->second.find(counter);
          if (it != consumed->second.end()) used = it->second;
        }
        if (available < used) {
          release_counters(cand);
          return false;
        }
      }
    }
    return true;
  }

  void release_counters(const Candidate& cand) {
    PoolCounters& pc = counters_[cand.pool];
    for (const auto& use : cand.device->consumes_counters) {
      for (const auto& [counter, amount] : use.counters)
        pc.consumed[use.counter_set][counter] -= amount;
    }
  }

  // The allocation results (reference §2.15): results in the order chosen, share IDs for
  // shares, and the node selector that says where the claim can be used.
  Result<NodeAllocation> build() {
    NodeAllocation out;
    for (size_t c = 0; c < claims_.size(); ++c) {
      AllocationResult& allocation = out.claims.emplace_back();
      bool node_local = false;
      model::NodeSelectorTerm term;
      for (const Chosen& chosen : results_[c]) {
        const Candidate& cand = candidates_[chosen.candidate];
        const Alternative& alt = *chosen.alternative;
        auto& r = allocation.results.emplace_back();
        r.request = alt.name;
        r.driver = cand.id.driver;
        r.pool = cand.id.pool;
        r.device = cand.id.device;
        r.admin_access = alt.spec->admin_access;
        r.tolerations = alt.spec->tolerations;
        if (cand.device->allow_multiple_allocations) {
          r.share_id = share_ids_.next(committed_, cand.id);
          r.consumed_capacity = chosen.consumed;
        }
        const NodeScope& scope = cand.slice->per_device_node_selection && cand.device->node_scope
                                     ? *cand.device->node_scope
                                     : cand.slice->scope;
        if (scope.node_name || cand.device->binds_to_node) {
          node_local = true;
        } else if (scope.node_selector) {
          if (scope.node_selector->terms.size() != 1) {
            return make_error(fmt::format(
                "resource slice {}: a node selector with {} terms is not supported (one is)",
                cand.slice->metadata.name, scope.node_selector->terms.size()));
          }
          merge(scope.node_selector->terms[0].match_expressions, term.match_expressions);
          merge(scope.node_selector->terms[0].match_fields, term.match_fields);
        }
      }
      if (node_local) {
        model::NodeSelector selector;
        selector.terms.push_back(
            {{},
             {model::NodeSelectorRequirement{"metadata.name", "In", {std::string(node_name_)}}}});
        allocation.node_selector = std::move(selector);
      } else if (!term.match_expressions.empty() || !term.match_fields.empty()) {
        allocation.node_selector = model::NodeSelector{{std::move(term)}};
      }
    }
    return out;
  }

  static void merge(const std::vector<model::NodeSelectorRequirement>& from,
                    std::vector<model::NodeSelectorRequirement>& into) {
    for (const auto& r : from) {
      const bool known = std::any_of(into.begin(), into.end(), [&](const auto& e) {
        return e.key == r.key && e.op == r.op && e.values == r.values;
      });
      if (!known) into.push_back(r);
    }
  }

 private:
  const std::vector<Pool>& pools_;
  std::string_view node_name_;
  const NodeSelectorMatch& matches_node_;
  const AllocatedState& committed_;
  const NameMap<const DeviceClass*>& classes_;
  SelectorCache& selectors_;
  ShareIds& share_ids_;
  int64_t budget_;
  const std::function<bool()>& stop_;
  int64_t steps_ = 0;
  bool invalid_pools_ = false;
  std::string error_;
  std::vector<Candidate> candidates_;
  std::vector<Claim> claims_;
  std::vector<std::vector<Chosen>> results_;
  std::vector<std::vector<size_t>> holders_;  // per candidate: claims holding it whole
  std::vector<Amounts> allocating_;           // per candidate: what this allocation's shares take
  std::vector<int> shares_in_call_;           // per candidate: shares made in this allocation
  std::vector<PoolCounters> counters_;        // per pool
};

}  // namespace

Allocator::Allocator(const std::vector<DeviceClass>& classes, SelectorCache& selectors,
                     ShareIds& share_ids, int64_t step_budget)
    : selectors_(selectors), share_ids_(share_ids), step_budget_(step_budget) {
  for (const auto& c : classes) classes_.emplace(c.metadata.name, &c);
}

std::optional<std::string> Allocator::missing_device_class(const ResourceClaim& claim) const {
  for (const auto& r : claim.spec.requests) {
    if (r.exactly && !classes_.contains(r.exactly->device_class_name)) {
      return fmt::format("request {}: device class {} does not exist", r.name,
                         r.exactly->device_class_name);
    }
    for (const auto& s : r.first_available) {
      if (!classes_.contains(s.request.device_class_name)) {
        return fmt::format("request {}/{}: device class {} does not exist", r.name, s.name,
                           s.request.device_class_name);
      }
    }
  }
  return std::nullopt;
}

Result<NodeAllocation> Allocator::allocate(const std::vector<Pool>& pools,
                                           std::string_view node_name,
                                           const NodeSelectorMatch& matches_node,
                                           const std::vector<const ResourceClaim*>& claims,
                                           const AllocatedState& committed) {
  Search search(pools, node_name, matches_node, committed, classes_, selectors_, share_ids_,
                step_budget_, stop_);
  if (Status s = search.prepare(claims); !s.ok()) return s.error();
  return search.run();
}

}  // namespace hamisim::dra

#include "live/live_scheduler.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <bit>
#include <set>

#include "device/allocation.h"
#include "device/codec.h"
#include "go/duration.h"
#include "live/time_format.h"

namespace hamisim::live {
namespace {

constexpr std::string_view kNotReady = "not ready: ";
constexpr std::string_view kInvalid = "invalid request: ";
constexpr std::string_view kInternal = "internal: ";
constexpr std::string_view kPodGroupLabel = "scheduling.x-k8s.io/pod-group";

int64_t allocatable_count(const model::Node& node, const std::string& resource) {
  auto it = node.status.allocatable.find(resource);
  return it == node.status.allocatable.end() ? 0 : it->second.value();
}

// Capacity-based health: the count resource's capacity is an integer above zero.
bool capacity_positive(const model::Node& node, const std::string& resource) {
  auto it = node.status.capacity.find(resource);
  if (it == node.status.capacity.end()) return false;
  const std::optional<int64_t> n = it->second.as_int64();
  return n && *n > 0;
}

std::string annotation_or_empty(const model::ObjectMeta& meta, std::string_view key) {
  const std::string* v = model::find_annotation(meta, key);
  return v ? *v : std::string();
}

}  // namespace

LiveScheduler::LiveScheduler(const device::DeviceRegistry& registry, state::ClusterSource& source,
                             LiveOptions options)
    : registry_(registry),
      source_(source),
      options_(std::move(options)),
      quota_(registry),
      pods_(registry, quota_),
      leader_(options_.leader),
      node_lock_(
          source,
          NodeLock::Options{
              .timeout = options_.node_lock_timeout,
              .now = options_.wall_now,
              .sleep = [this](std::chrono::milliseconds d) { return sleep_unless_stopping(d); },
              .jitter_seed = 0,
          }) {
  pods_.on_bad_pod = [](const model::Pod& pod, const std::string& error) {
    spdlog::warn("pod {}/{} ignored: its device annotations do not decode: {}",
                 pod.metadata.namespace_, pod.metadata.name, error);
  };
}

LiveScheduler::~LiveScheduler() {
  stop();
}

void LiveScheduler::start() {
  started_ = true;
  registration_thread_ = std::thread([this] { registration_loop(); });
  source_.start(*this);
}

void LiveScheduler::stop() {
  {
    std::lock_guard lock(wake_mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (started_) source_.stop();
  if (registration_thread_.joinable()) registration_thread_.join();
}

bool LiveScheduler::sleep_unless_stopping(std::chrono::milliseconds d) {
  std::unique_lock lock(wake_mutex_);
  return !wake_.wait_for(lock, d, [this] { return stopping_; });
}

void LiveScheduler::notify_registration() {
  {
    std::lock_guard lock(wake_mutex_);
    wake_pending_ = true;
  }
  wake_.notify_all();
}

void LiveScheduler::registration_loop() {
  while (true) {
    {
      std::unique_lock lock(wake_mutex_);
      wake_.wait_for(lock, options_.register_interval,
                     [this] { return stopping_ || wake_pending_; });
      if (stopping_) return;
      wake_pending_ = false;
    }
    if (source_synced_) register_pass();
  }
}

void LiveScheduler::register_now() {
  register_pass();
}

// --- ClusterHandler --------------------------------------------------------------------------

void LiveScheduler::on_node(state::EventType type, const model::Node& node) {
  const std::string& name = node.metadata.name;
  if (type == state::EventType::kDeleted) {
    {
      // Under observed_mutex_ so that a registration pass cannot re-add it (see there).
      std::lock_guard lock(observed_mutex_);
      observed_.erase(name);
      nodes_.remove_node(name);
    }
    node_lock_.forget(name);
    {
      std::lock_guard lock(reported_mutex_);
      reported_.erase(name);
    }
    notify_registration();
    return;
  }
  {
    std::lock_guard lock(observed_mutex_);
    observed_[name] = std::make_shared<const model::Node>(node);
  }
  // Per-GPU cordon is always current (spec §3); everything else waits for a pass.
  const std::string* cordon =
      model::find_annotation(node.metadata, device::kDeviceCordonAnnotation);
  nodes_.set_cordon(name,
                    cordon ? device::parse_cordon(*cordon) : std::set<std::string, std::less<>>{});
  if (type == state::EventType::kAdded) notify_registration();
}

namespace {
constexpr std::string_view kRoleLabel = "hami.io/scheduler-role";
constexpr std::string_view kComponentLabel = "app.kubernetes.io/component";
constexpr std::string_view kSchedulerComponent = "hami-scheduler";
}  // namespace

void LiveScheduler::on_pod(state::EventType type, const model::Pod& pod) {
  pods_.on_pod(type, pod);
  const auto& roles = options_.role_labels;
  if (roles.pod_name.empty()) return;
  if (!roles.pod_namespace.empty() && pod.metadata.namespace_ != roles.pod_namespace) return;
  const std::string key = pod.metadata.namespace_ + "/" + pod.metadata.name;
  const std::string* component = model::find_label(pod.metadata, kComponentLabel);
  std::lock_guard lock(role_mutex_);
  if (type == state::EventType::kDeleted || component == nullptr ||
      *component != kSchedulerComponent) {
    scheduler_pods_.erase(key);
    return;
  }
  const std::string* role = model::find_label(pod.metadata, kRoleLabel);
  scheduler_pods_[key] = {pod.metadata.namespace_, pod.metadata.name, role ? *role : ""};
}

void LiveScheduler::label_scheduler_pods() {
  std::vector<SchedulerPod> wrong;
  {
    std::lock_guard lock(role_mutex_);
    for (const auto& [key, p] : scheduler_pods_) {
      const bool self = p.name == options_.role_labels.pod_name;
      if (p.role != (self ? "leader" : "follower")) wrong.push_back(p);
    }
  }
  for (const SchedulerPod& p : wrong) {
    const bool self = p.name == options_.role_labels.pod_name;
    const std::string role = self ? "leader" : "follower";
    auto st =
        source_.patch_pod_metadata(p.namespace_, p.name, {}, {{std::string(kRoleLabel), role}});
    if (!st) {
      spdlog::error("Failed to patch the {} label to hami scheduler pod {}/{}: {}", role,
                    p.namespace_, p.name, st.error().message);
      continue;
    }
    spdlog::info("Successfully patched {} label to hami scheduler pod {}/{}", role, p.namespace_,
                 p.name);
    std::lock_guard lock(role_mutex_);
    auto it = scheduler_pods_.find(p.namespace_ + "/" + p.name);
    if (it != scheduler_pods_.end()) it->second.role = role;
  }
}

bool LiveScheduler::selected(const model::Node& node) const {
  for (const auto& [key, value] : options_.node_selector) {
    const std::string* label = model::find_label(node.metadata, key);
    if (label == nullptr || *label != value) return false;
  }
  return true;
}

void LiveScheduler::on_quota(state::EventType type, const model::ResourceQuota& quota) {
  quota_.on_quota(type, quota);
}

void LiveScheduler::on_lease(state::EventType type, const state::Lease& lease) {
  const int change = leader_.on_lease(type, lease, options_.steady_now());
  if (change != 0) {
    // A new term: a pass still running from the old one must not mark this one registered.
    std::lock_guard lock(term_mutex_);
    ++term_;
    registered_ = false;
  }
  if (change > 0) {
    started_leading_.fetch_add(1, std::memory_order_relaxed);
    spdlog::info("started leading: {}", leader_.describe(options_.steady_now()));
    notify_registration();
  } else if (change < 0) {
    stopped_leading_.fetch_add(1, std::memory_order_relaxed);
    spdlog::info("stopped leading: {}", leader_.describe(options_.steady_now()));
  }
}

void LiveScheduler::on_synced() {
  source_synced_ = true;
  notify_registration();
}

// --- Registration ----------------------------------------------------------------------------

LiveScheduler::Health LiveScheduler::handshake(const device::DeviceBackend& backend,
                                               const model::Node& node,
                                               state::MetadataPatch& requests) {
  const std::string_view key = backend.handshake_annotation();
  if (key.empty()) return {true, true};
  const std::string* value = model::find_annotation(node.metadata, key);
  const WallTime now = options_.wall_now();
  if (value != nullptr && value->find("Requesting") != std::string::npos) {
    const size_t sep = value->find('_');
    if (sep == std::string::npos) return {true, false};
    auto asked = parse_handshake_time(std::string_view(*value).substr(sep + 1));
    if (!asked) return {true, false};
    if (now < *asked + options_.handshake_grace) return {true, false};
    // The device plugin did not answer in time; a node still advertising devices is alive.
    if (allocatable_count(node, backend.resource_names().count) > 0) return {true, false};
    return {false, false};
  }
  requests.emplace_back(std::string(key), "Requesting_" + format_handshake_time(now));
  return {true, true};
}

LiveScheduler::Health LiveScheduler::check_health(const device::DeviceBackend& backend,
                                                  const model::Node& node,
                                                  const device::NodeDevices& found,
                                                  state::MetadataPatch& handshakes) {
  switch (backend.health_check()) {
    case device::HealthCheck::kAlways:
      return {true, true};
    case device::HealthCheck::kCapacity:
      return {capacity_positive(node, backend.resource_names().count), true};
    case device::HealthCheck::kRegistered:
      return {!found.devices.empty(), true};
    case device::HealthCheck::kHandshake:
      break;
  }
  const Health generic = handshake(backend, node, handshakes);
  if (backend.vendor() != device::kNvidiaVendor) return generic;
  // NVIDIA also watches the advertised GPU count and the registration text.
  const int64_t current = allocatable_count(node, backend.resource_names().count);
  std::lock_guard lock(reported_mutex_);
  Reported& r = reported_[node.metadata.name];
  if (current == 0) {
    if (r.gpu_count == 0) return generic;
    r.gpu_count = 0;
    return {false, generic.need_update};
  }
  if (r.gpu_count != current) {
    r.gpu_count = current;
    return {true, true};
  }
  std::string registration = annotation_or_empty(node.metadata, device::kNvidiaRegisterAnnotation);
  if (registration != r.register_annotation) {
    r.register_annotation = std::move(registration);
    return {generic.healthy, true};
  }
  return generic;
}

void LiveScheduler::node_cleanup(const std::string& node, const device::DeviceBackend& backend) {
  if (backend.vendor() == device::kNvidiaVendor) {
    std::lock_guard lock(reported_mutex_);
    reported_.erase(node);
  }
  const std::string_view key = backend.cleanup_annotation();
  if (key.empty()) return;
  auto patched = source_.patch_node_annotations(node, {{std::string(key), std::nullopt}}, "");
  if (!patched && patched.code() != state::ApiCode::kNotFound) {
    spdlog::warn("cleaning up node {}: {}", node, patched.error().message);
  }
}

void LiveScheduler::register_pass() {
  // Leadership is read after the pass lock: a pass queued behind a slow one must not run
  // (and write handshakes) in a term that lost the Lease while it waited.
  std::lock_guard pass(register_mutex_);
  uint64_t term;
  {
    std::lock_guard lock(term_mutex_);
    term = term_;
  }
  if (!leader_.is_leader(options_.steady_now())) return;
  label_scheduler_pods();
  std::vector<std::shared_ptr<const model::Node>> nodes;
  {
    std::lock_guard lock(observed_mutex_);
    nodes.reserve(observed_.size());
    for (const auto& [name, node] : observed_) nodes.push_back(node);
  }
  for (const auto& node : nodes) {
    const std::string& name = node->metadata.name;
    if (!selected(*node)) {
      // Outside --node-label-selector: HAMi's pass never lists it, so it has no devices.
      for (const auto& backend : registry_.backends()) {
        if (nodes_.has_vendor(name, backend->vendor())) {
          nodes_.remove_vendor(name, backend->vendor());
        }
      }
      continue;
    }
    // The handshake requests of every vendor go out in one patch per node: HAMi sends one per
    // vendor, five times the API requests, and at serve's default --kube-qps 300 the first pass
    // over 5,000 nodes (before which /filter cannot answer) took at least 83 s for them.
    state::MetadataPatch handshakes;
    for (const auto& backend : registry_.backends()) {
      const std::string_view vendor = backend->vendor();
      device::NodeDevices found = backend->node_devices(*node);
      const Health health = check_health(*backend, *node, found, handshakes);
      if (!health.healthy) {
        if (nodes_.has_vendor(name, vendor)) {
          spdlog::warn(
              "node {}: {} devices unhealthy (handshake unanswered or no devices "
              "advertised); removed until they register again",
              name, vendor);
          node_cleanup(name, *backend);
          nodes_.remove_vendor(name, vendor);
        }
        continue;
      }
      if (found.state == device::NodeDevices::State::kMalformed) {
        // A transient decode failure keeps what was registered before (HAMi does the same).
        spdlog::warn("node {}: {} registration does not decode: {}", name, vendor, found.message);
        continue;
      }
      if (found.devices.empty()) {
        if (nodes_.has_vendor(name, vendor)) nodes_.remove_vendor(name, vendor);
        continue;
      }
      if (!health.need_update) continue;
      const std::string* cordon =
          model::find_annotation(node->metadata, device::kDeviceCordonAnnotation);
      // A node deleted while this pass ran must not come back from the pass's copy.
      std::lock_guard lock(observed_mutex_);
      if (!observed_.contains(name)) break;
      nodes_.set_vendor_devices(
          name, vendor, std::move(found.devices),
          cordon ? device::parse_cordon(*cordon) : std::set<std::string, std::less<>>{});
    }
    if (handshakes.empty()) continue;
    auto patched = source_.patch_node_annotations(name, handshakes, "");
    if (!patched && patched.code() != state::ApiCode::kNotFound) {
      spdlog::warn("handshake with node {}: {}", name, patched.error().message);
    }
  }
  release_vanished_reservations();
  ++passes_;
  std::lock_guard lock(term_mutex_);
  if (term_ == term) registered_ = true;
}

void LiveScheduler::release_vanished_reservations() {
  // A reservation is confirmed when the filter's patch comes back through the source. One
  // still unconfirmed a pass later is checked against the API: a pod that was created,
  // filtered and deleted while the source's watch was down (and never bound) has no delete
  // event coming, so its reservation would otherwise hold its devices and quota for good.
  std::unordered_set<std::string> still;
  for (const PodManager::Reservation& r : pods_.unconfirmed()) {
    if (unconfirmed_seen_.contains(r.uid)) {
      auto current = source_.get_pod(r.namespace_, r.name);
      const bool gone =
          current ? current->metadata.uid != r.uid : current.code() == state::ApiCode::kNotFound;
      if (gone) {
        spdlog::info("pod {}/{} ({}) is gone: its reservation on {} is released", r.namespace_,
                     r.name, r.uid, r.node);
        pods_.evict(r.uid);
        continue;
      }
    }
    still.insert(r.uid);
  }
  unconfirmed_seen_ = std::move(still);
}

// --- Filter ----------------------------------------------------------------------------------

std::optional<std::string> LiveScheduler::not_ready_reason() const {
  if (!source_synced_) return "the cluster source has not delivered its initial lists yet";
  if (!leader_.is_leader(options_.steady_now())) {
    return "not the leader (" + leader_.describe(options_.steady_now()) + ")";
  }
  if (!registered_) return "no registration pass has finished since this replica became leader";
  return std::nullopt;
}

LiveStats LiveScheduler::stats() const {
  return {lock_contention_.load(std::memory_order_relaxed),
          lock_retries_.load(std::memory_order_relaxed),
          started_leading_.load(std::memory_order_relaxed),
          stopped_leading_.load(std::memory_order_relaxed), passes_.load()};
}

LiveReadiness LiveScheduler::readiness() const {
  LiveReadiness r;
  if (!source_synced_) {
    r.detail = "the cluster source has not delivered its initial lists yet";
    return r;
  }
  r.ready = true;
  r.leading = leader_.is_leader(options_.steady_now());
  r.filtering = !not_ready_reason().has_value();
  const std::string role = !r.leading ? "follower (not the leader), /filter answers on the leader"
                           : r.filtering ? "leader"
                                         : "leader, first registration pass not finished";
  r.detail = fmt::format("{}; {}; {} registered node(s), {} pod allocation(s); {}", role,
                         source_.describe(), nodes_.snapshot()->size(), pods_.size(),
                         leader_.describe(options_.steady_now()));
  return r;
}

void LiveScheduler::event(const model::Pod& pod, std::string type, std::string reason,
                          std::string message) {
  source_.record_event(state::PodEvent{pod.metadata.namespace_, pod.metadata.name, pod.metadata.uid,
                                       std::move(type), std::move(reason), std::move(message)});
}

namespace {

// A node score as the Events print it ("8.00"). Nodes share a few distinct scores, and
// formatting a float was most of building the Event that lists every fitting node: the text
// of each distinct score (by its bits) is made once.
class ScoreTexts {
 public:
  std::string_view format(float score) {
    const auto bits = std::bit_cast<uint32_t>(score);
    for (const auto& [b, text] : texts_) {
      if (b == bits) return text;
    }
    if (texts_.size() == kMax) texts_.clear();
    return texts_.emplace_back(bits, fmt::format("{:.2f}", score)).second;
  }

 private:
  static constexpr size_t kMax = 32;
  std::vector<std::pair<uint32_t, std::string>> texts_;
};

}  // namespace

void LiveScheduler::record_no_fit_events(const model::Pod& pod, const FailedNodes& failed_nodes,
                                         size_t node_count) {
  // One Warning per reason type, naming the nodes (HAMi calcScore), then the summary. Nodes
  // mostly fail for one of a few identical texts, so each distinct text is parsed once.
  std::map<std::string, std::vector<const std::string*>, std::less<>> by_reason;
  std::vector<std::vector<std::vector<const std::string*>*>> per_text(
      failed_nodes.reasons().size());  // per distinct text: into by_reason
  std::vector<bool> parsed(per_text.size(), false);
  size_t entry = 0;
  for (const auto& [node, reason] : failed_nodes) {
    const size_t t = failed_nodes.reason_index(entry++);
    if (!parsed[t]) {
      parsed[t] = true;
      const auto names = device::parse_reasons(reason);
      if (names.empty()) per_text[t].push_back(&by_reason[reason]);
      for (const auto& [r, count] : names) per_text[t].push_back(&by_reason[r]);
    }
    for (auto* nodes : per_text[t]) nodes->push_back(&node);
  }
  for (const auto& [reason, nodes] : by_reason) {
    std::string message = fmt::format("{} nodes {}(", nodes.size(), reason);
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (i) message += ',';
      message += *nodes[i];
    }
    message += ')';
    event(pod, "Warning", "FilteringFailed", std::move(message));
  }
  event(pod, "Warning", "FilteringFailed",
        fmt::format("no available node, {} nodes do not meet", node_count));
}

LiveFilterResult LiveScheduler::filter(const fit::PreparedPod& prepared,
                                       const std::vector<std::string>& node_names) {
  LiveFilterResult out;
  if (auto why = not_ready_reason()) {
    out.error = std::string(kNotReady) + *why;
    return out;
  }
  const model::Pod& pod = *prepared.pod;
  if (pod.metadata.uid.empty() || pod.metadata.name.empty()) {
    // Reservations are kept by uid; kube-scheduler always sends the whole pod.
    out.error = std::string(kInvalid) + "Pod: metadata.name and metadata.uid are required";
    return out;
  }
  // From the usage read to the reservation, one filter at a time: two filters that both read
  // a device's usage before either reserves would both fit on it (HAMi relies on
  // kube-scheduler filtering one pod at a time; concurrent callers must not over-commit).
  std::unique_lock reserving(filter_mutex_);
  // A reservation left by an earlier filter whose bind failed (HAMi f852784d).
  pods_.evict(pod.metadata.uid);

  const auto table = nodes_.snapshot();
  // Without a limit in the namespace every quota check passes: skip them all.
  const device::QuotaView* quota = quota_.has_limits(pod.metadata.namespace_) ? &quota_ : nullptr;
  // Every fitting node's name and score (for the Event), and the fit of the node chosen so
  // far: keeping each fitting node's whole fit (its devices, per vendor) was a tenth of a
  // filter that chose a node.
  struct Candidate {
    const std::string* name;
    float score;
  };
  std::vector<Candidate> fits;
  fit::NodeFit chosen;
  const std::string* chosen_name = nullptr;
  const fit::DeviceDescription* chosen_description = nullptr;  // kept alive by `table`
  // The scheduling time some vendors write into their annotations (HAMi time.Now()).
  const int64_t now_nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(options_.wall_now().time_since_epoch())
          .count();
  // Nodes mostly fail alike: the text of a backend's failure is rendered when its counts differ
  // from the previous failure's.
  std::string failure_text;
  device::ReasonCounts failure_reasons;
  size_t failure_cards = 0;
  bool rendered = false;
  for (const std::string& name : node_names) {
    auto it = table->find(name);
    if (it == table->end()) {
      out.failed_nodes.add(name, fit::kNodeUnregistered);
      continue;
    }
    const fit::DeviceDescription& description = it->second->description;
    // Reused while neither the node's registered description (a new LiveNode) nor its pods (the
    // pod manager's version) changed.
    FilterUsage& cached = it->second->filter_usage;
    if (cached.version_slot == nullptr) cached.version_slot = &pods_.version_slot(name);
    if (cached.version != cached.version_slot->load(std::memory_order_acquire)) {
      cached.usage = fit::fresh_usage(description);
      cached.version = pods_.add_node_usage(name, cached.usage);
    }
    // Every node is fitted, one is patched: only its annotations are written (below). The Fit
    // is called here rather than through engine::Engine because the live decision reads state
    // only the live managers own (each node's registration as last watched, the usage kept per
    // pod version, the quotas, the reservation taken under filter_mutex_), while the engine
    // decides on what it is given and holds no cluster state.
    fit::NodeFit f = fit::fit_pod(prepared, cached.usage, description, registry_, quota,
                                  fit::AllocationSite{name, now_nanos},
                                  /*with_annotations=*/false, /*with_reason_text=*/false);
    if (!f.fits) {
      if (!f.reason.empty()) {
        out.failed_nodes.add(name, f.reason);
        continue;
      }
      if (!rendered || f.reasons != failure_reasons || f.reason_cards != failure_cards) {
        failure_text = device::format_reasons(f.reasons, f.reason_cards);
        failure_reasons = f.reasons;
        failure_cards = f.reason_cards;
        rendered = true;
      }
      out.failed_nodes.add(name, failure_text);
      continue;
    }
    fits.push_back({&name, f.node_score});
    if (chosen_name == nullptr ||
        fit::better_node_score(f.node_score, chosen.node_score, prepared.node_policy)) {
      chosen = std::move(f);
      chosen_name = &name;
      chosen_description = &description;
    }
  }

  out.failed_nodes.finish();
  if (fits.empty()) {
    reserving.unlock();
    record_no_fit_events(pod, out.failed_nodes, node_names.size());
    out.kind = LiveFilterResult::Kind::kNoFit;
    return out;
  }

  const std::string& node = *chosen_name;
  fit::annotate(chosen, prepared, *chosen_description, registry_,
                fit::AllocationSite{node, now_nanos});

  std::map<std::string, std::string> annotations = chosen.annotations;
  annotations[std::string(device::kAssignedNodeAnnotation)] = node;
  annotations[std::string(device::kAssignedTimeAnnotation)] = unix_seconds(options_.wall_now());

  model::Pod reserved = pod;
  for (const auto& [k, v] : annotations) reserved.metadata.annotations[k] = v;
  Status reserved_status = pods_.reserve(reserved);
  reserving.unlock();
  if (!reserved_status) {
    out.error =
        std::string(kInternal) + "recording the allocation: " + reserved_status.error().message;
    return out;
  }
  state::MetadataPatch annotation_patch;
  for (auto& [k, v] : annotations) annotation_patch.emplace_back(k, v);
  auto patched =
      source_.patch_pod_metadata(pod.metadata.namespace_, pod.metadata.name, annotation_patch,
                                 {{std::string(device::kAssignedNodeAnnotation), node}});
  if (!patched) {
    pods_.evict(pod.metadata.uid);  // HAMi 4098c5b2: no leak when the patch fails
    if (patched.code() == state::ApiCode::kNotFound) {
      // The pod in the request is not (or no longer) in the cluster: the caller's mistake or a
      // deletion racing the filter, not ours. Worded as /bind words it.
      out.error = fmt::format("{}pod \"{}/{}\" not found", kInvalid, pod.metadata.namespace_,
                              pod.metadata.name);
      return out;
    }
    event(pod, "Warning", "FilteringFailed", patched.error().message);
    out.error = std::string(kInternal) +
                "patching the pod's allocation annotations: " + patched.error().message;
    return out;
  }

  // "find fit node(n2), 1 nodes not fit, 2 nodes fit(n1:3.00,n2:8.00)", in policy order.
  ScoreTexts scores;
  const bool spread = prepared.node_policy == "spread";
  std::stable_sort(fits.begin(), fits.end(), [&](const Candidate& a, const Candidate& b) {
    return spread ? a.score > b.score : a.score < b.score;
  });
  std::string fitted;
  for (const Candidate& c : fits) {
    if (!fitted.empty()) fitted += ',';
    fitted += *c.name;
    fitted += ':';
    fitted += scores.format(c.score);
  }
  event(pod, "Normal", "FilteringSucceed",
        fmt::format("find fit node({}), {} nodes not fit, {} nodes fit({})", node,
                    node_names.size() - fits.size(), fits.size(), fitted));
  out.kind = LiveFilterResult::Kind::kChosen;
  out.node = node;
  return out;
}

// --- Bind ------------------------------------------------------------------------------------

LockStatus LiveScheduler::lock_with_pod_group_retry(const model::Pod& pod,
                                                    const std::string& node) {
  const std::string& ns = pod.metadata.namespace_;
  const std::string& name = pod.metadata.name;
  LockStatus status = node_lock_.lock(node, ns, name);
  if (status.contention) lock_contention_.fetch_add(1, std::memory_order_relaxed);
  const bool pod_group = pod.metadata.labels.contains(kPodGroupLabel) ||
                         !pod.spec.scheduling_group_pod_group_name.empty();
  if (status.ok || !status.contention || !pod_group ||
      options_.node_lock_retry_timeout.count() <= 0) {
    return status;
  }
  // Gang members wait for each other's Allocate instead of failing at once (HAMi 52e4e7a9).
  const auto deadline = std::chrono::steady_clock::now() + options_.node_lock_retry_timeout;
  while (!status.ok && status.contention) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return LockStatus::failure(
          fmt::format("timed out after {} waiting for node {} to be unlocked: {}",
                      go::format_duration(options_.node_lock_retry_timeout), node,
                      kNodeLockContention),
          true);
    }
    if (!sleep_unless_stopping(std::chrono::milliseconds(100))) {
      return LockStatus::failure(
          fmt::format("scheduler shutting down while waiting for node lock: {}",
                      kNodeLockContention),
          true);
    }
    lock_retries_.fetch_add(1, std::memory_order_relaxed);
    status = node_lock_.lock(node, ns, name);
    if (status.contention) lock_contention_.fetch_add(1, std::memory_order_relaxed);
  }
  return status;
}

std::string LiveScheduler::bind(const LiveBindRequest& request) {
  if (!source_synced_) {
    return std::string(kNotReady) + "the cluster source has not delivered its initial lists yet";
  }
  // One bind of a pod at a time. Two at once both take the pod's node lock (the second finds
  // it already the pod's), and the one whose Binding loses could release the lock the
  // winner's device plugin still needs. The second is answered at once (kube-scheduler
  // retries, and then finds the pod bound or the lock free), so no thread waits here.
  const std::string pod_key = request.pod_namespace + "/" + request.pod_name;
  {
    std::lock_guard lock(binding_mutex_);
    if (!binding_.insert(pod_key).second) {
      return fmt::format("{}another /bind of pod {} is in progress", kNotReady, pod_key);
    }
  }
  struct BindingDone {
    LiveScheduler& self;
    const std::string& key;
    ~BindingDone() {
      std::lock_guard lock(self.binding_mutex_);
      self.binding_.erase(key);
    }
  } binding_done{*this, pod_key};
  return bind_pod(request);
}

bool LiveScheduler::bound_to(const model::Pod& pod, const std::string& node) {
  auto current = source_.get_pod(pod.metadata.namespace_, pod.metadata.name);
  if (!current) {
    if (current.code() == state::ApiCode::kNotFound) return false;
    spdlog::warn("bind cleanup: cannot read pod {}/{} ({}); its node lock on {} is kept",
                 pod.metadata.namespace_, pod.metadata.name, current.error().message, node);
    return true;
  }
  return current->metadata.uid == pod.metadata.uid && current->spec.node_name == node;
}

std::string LiveScheduler::bind_pod(const LiveBindRequest& request) {
  auto fetched = source_.get_pod(request.pod_namespace, request.pod_name);
  if (!fetched) {
    pods_.evict(request.pod_uid);
    if (fetched.code() == state::ApiCode::kNotFound) {
      return fmt::format("{}pod \"{}/{}\" not found", kInvalid, request.pod_namespace,
                         request.pod_name);
    }
    return std::string(kInternal) + fetched.error().message;
  }
  const model::Pod& pod = *fetched;
  // Neither check touches the node lock: a repeated bind of a bound pod must not release the
  // lock its first bind left for the device plugin.
  if (!request.pod_uid.empty() && request.pod_uid != pod.metadata.uid) {
    // The pod this request was for is gone (a pod of the same name replaced it); no event on
    // the new one, which this request is not about.
    pods_.evict(request.pod_uid);
    return fmt::format("{}pod {}/{} has UID {}, not {} (stale bind request)", kInvalid,
                       pod.metadata.namespace_, pod.metadata.name, pod.metadata.uid,
                       request.pod_uid);
  }
  if (!pod.spec.node_name.empty()) {
    // Its reservation stays: it is the bound pod's allocation.
    const std::string error =
        fmt::format("pod {}/{} is already bound to node {}", pod.metadata.namespace_,
                    pod.metadata.name, pod.spec.node_name);
    event(pod, "Warning", "BindingFailed", error);
    return std::string(kInvalid) + error;
  }
  bool node_known;
  {
    std::lock_guard lock(observed_mutex_);
    node_known = observed_.contains(request.node);
  }
  if (!node_known) {
    event(pod, "Warning", "BindingFailed", "failed to get node " + request.node);
    pods_.evict(pod.metadata.uid);
    return fmt::format("{}node \"{}\" not found", kInvalid, request.node);
  }

  // Binding a device pod where no filter allocated its devices would leave the device plugin
  // nothing to allocate (HAMi does not check; kube-scheduler only binds where we filtered).
  const device::PodRequests requests = registry_.requests_for(pod);
  const std::string* assigned =
      model::find_annotation(pod.metadata, device::kAssignedNodeAnnotation);
  if (device::has_device_requests(requests) && (assigned == nullptr || *assigned != request.node)) {
    return fmt::format(
        "{}pod {}/{} has no device allocation on node {} ({} is \"{}\"); the "
        "live /filter must choose the node first",
        kInvalid, pod.metadata.namespace_, pod.metadata.name, request.node,
        device::kAssignedNodeAnnotation, assigned ? *assigned : "");
  }
  // HAMi locks the node for every vendor the pod's regular containers ask for (init containers
  // do not lock), in ascending vendor-key order: the vendors sharing hami.io/mutex.lock take it
  // once (it is then the pod's), a vendor with a lock of its own (Cambricon) takes that.
  std::set<std::string_view> vendors;
  for (size_t i = std::min(requests.size(), pod.spec.init_containers.size()); i < requests.size();
       ++i) {
    for (const auto& entry : requests[i]) vendors.insert(entry.first);
  }

  // Only locks this call wrote are released on failure, in reverse order: one found already
  // this pod's was left by an earlier bind for the device plugin, and releasing it would let
  // the next pod allocate on the node before the plugin ran. Even those this call wrote are
  // kept when the pod turns out bound to the node all the same (a Binding that reported an
  // error may have applied): they are then the device plugin's to release.
  struct WrittenLock {
    std::optional<device::OwnNodeLock> own;  // nullopt: hami.io/mutex.lock
    std::string value;
  };
  std::vector<WrittenLock> written;
  auto fail = [&](const std::string& error, bool transient) {
    if (!written.empty() && !bound_to(pod, request.node)) {
      for (auto it = written.rbegin(); it != written.rend(); ++it) {
        // Owner-checked (or value-checked): a lock someone else holds is left alone.
        auto released =
            it->own ? node_lock_.release_own(request.node, *it->own, it->value)
                    : node_lock_.release(request.node, pod.metadata.namespace_, pod.metadata.name);
        if (!released.ok) spdlog::warn("bind cleanup: {}", released.error);
      }
    }
    event(pod, "Warning", "BindingFailed", error);
    // The reservation stays: kube-scheduler retries, and the next filter replaces it
    // (HAMi 900e3a33).
    return std::string(transient ? kNotReady : kInternal) + error;
  };

  bool shared_lock_taken = false;
  for (std::string_view vendor : vendors) {
    const device::DeviceBackend* backend = registry_.find(vendor);
    if (backend == nullptr) continue;
    const std::optional<device::OwnNodeLock> own = backend->own_node_lock();
    LockStatus locked;
    if (own) {
      locked = node_lock_.lock_own(request.node, *own);
      if (locked.contention) lock_contention_.fetch_add(1, std::memory_order_relaxed);
    } else if (backend->locks_node() && !shared_lock_taken) {
      shared_lock_taken = true;
      locked = lock_with_pod_group_retry(pod, request.node);
    } else {
      continue;
    }
    if (locked.wrote) written.push_back({own, locked.value});
    if (!locked.ok) return fail(locked.error, locked.contention);
  }
  const std::string now = unix_seconds(options_.wall_now());
  auto phase =
      source_.patch_pod_metadata(pod.metadata.namespace_, pod.metadata.name,
                                 {{std::string(device::kBindPhaseAnnotation), "allocating"},
                                  {std::string(device::kBindTimeAnnotation), now}},
                                 {});
  if (!phase) return fail("patching bind-phase: " + phase.error().message, false);
  auto bound =
      source_.bind_pod(pod.metadata.namespace_, pod.metadata.name,
                       request.pod_uid.empty() ? pod.metadata.uid : request.pod_uid, request.node);
  if (!bound) return fail(bound.error().message, false);
  // The node lock stays: the device plugin releases it after Allocate.
  event(pod, "Normal", "BindingSucceed",
        fmt::format("Successfully binding node [{}] to {}/{}", request.node,
                    pod.metadata.namespace_, pod.metadata.name));
  return {};
}

std::vector<model::Node> LiveScheduler::observed_nodes() const {
  std::vector<model::Node> out;
  {
    std::lock_guard lock(observed_mutex_);
    out.reserve(observed_.size());
    for (const auto& [name, node] : observed_) out.push_back(*node);
  }
  std::sort(out.begin(), out.end(), [](const model::Node& a, const model::Node& b) {
    return a.metadata.name < b.metadata.name;
  });
  return out;
}

std::optional<std::string> LiveScheduler::admission_quota_check(const model::Pod& pod) const {
  return quota_.admission_check(pod);
}

}  // namespace hamisim::live

#pragma once
// HAMi's live scheduler core (reference hami-scheduler-core.md §4–§8): consumes a cluster
// source into node, pod and quota managers, runs the registration loop and answers the live
// filter and bind. HTTP-free: src/server encodes the wire format.
//
// Threads: the source thread calls the ClusterHandler methods; the registration thread runs
// passes (API writes included); filter and bind run on server workers, concurrently. Filters
// read immutable node snapshots and take the pod manager's read lock per node; from the usage
// read to the reservation they run one at a time, so concurrent filters never over-commit a
// device (their API writes and events run in parallel).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "device/registry.h"
#include "fit/node_fit.h"
#include "live/failed_nodes.h"
#include "live/leader.h"
#include "live/node_lock.h"
#include "live/node_manager.h"
#include "live/pod_manager.h"
#include "live/quota_manager.h"
#include "state/cluster_source.h"

namespace hamisim::live {

struct LiveOptions {
  std::string scheduler_name = "hami-scheduler";  // events' source component
  fit::FitPolicy policy;
  std::chrono::seconds node_lock_timeout{300};               // --node-lock-timeout
  std::chrono::milliseconds node_lock_retry_timeout{28000};  // --node-lock-retry-timeout
  std::chrono::milliseconds register_interval{15000};
  std::chrono::seconds handshake_grace{60};
  LeaderTracker::Options leader;
  // HAMi's --node-label-selector: a node whose labels do not all equal these is not
  // registered (its devices are dropped if it was), so /filter finds no devices on it.
  std::map<std::string, std::string> node_selector;
  // HAMi's `hami.io/scheduler-role` labels ($POD_NAME, $POD_NAMESPACE): each pass while
  // leading labels this pod `leader` and the other `app.kubernetes.io/component:
  // hami-scheduler` pods of the namespace `follower`; HAMi's Service selects the leader. Off
  // when pod_name is empty. An empty namespace means every namespace, as HAMi's lister.
  struct RoleLabels {
    std::string pod_name;
    std::string pod_namespace;
  } role_labels;
  // Injectable clocks (tests); wall time for annotations, steady time for the Lease.
  std::function<WallTime()> wall_now = [] { return std::chrono::system_clock::now(); };
  std::function<LeaderTracker::Clock::time_point()> steady_now = [] {
    return LeaderTracker::Clock::now();
  };
};

struct LiveFilterResult {
  enum class Kind { kChosen, kNoFit, kError };
  Kind kind = Kind::kError;
  std::string node;  // kChosen
  // Every node that did not fit, also when one was chosen (metrics, logs).
  FailedNodes failed_nodes;
  std::string error;  // kError, starting with its class word
};

struct LiveBindRequest {
  std::string pod_name;
  std::string pod_namespace;
  std::string pod_uid;
  std::string node;
};

// Counts since start, for metrics.
struct LiveStats {
  uint64_t node_lock_contention = 0;  // lock attempts that found another pod's lock
  uint64_t node_lock_retries = 0;     // lock attempts repeated while waiting (PodGroup binds)
  uint64_t started_leading = 0;
  uint64_t stopped_leading = 0;
  uint64_t registration_passes = 0;
};

// Readiness and leadership are separate signals (HAMi #1677): a follower whose caches are
// complete is ready, so a rolling update (surge 1, unavailable 0) can replace the leader; only
// the leader answers /filter.
struct LiveReadiness {
  bool ready = false;      // the source delivered its initial lists: this replica can serve
  bool leading = false;    // holds the Lease (always, without leader election)
  bool filtering = false;  // leading, and a registration pass finished since: /filter answers
  std::string detail;
};

class LiveScheduler final : public state::ClusterHandler {
 public:
  LiveScheduler(const device::DeviceRegistry& registry, state::ClusterSource& source,
                LiveOptions options);
  ~LiveScheduler() override;

  // Starts the source stream and the registration loop. Call once.
  void start();
  // Stops both and wakes binds waiting for a node lock; bounded.
  void stop();

  // HAMi Scheduler.Filter for a pod that requests devices (callers echo the others).
  LiveFilterResult filter(const fit::PreparedPod& pod, const std::vector<std::string>& node_names);
  // HAMi Scheduler.Bind; empty on success, otherwise the error (with its class word).
  std::string bind(const LiveBindRequest& request);
  // The admission webhook's quota pre-check (nullopt: fits).
  std::optional<std::string> admission_quota_check(const model::Pod& pod) const;

  LiveReadiness readiness() const;
  bool synced() const { return source_synced_; }  // the initial lists were delivered
  bool leading() const { return leader_.is_leader(options_.steady_now()); }
  // Runs one registration pass now, on the calling thread (tests, and the first pass).
  void register_now();
  // Registration passes that ran, each begun while leading (tests).
  uint64_t registration_passes() const { return passes_; }

  // The latest Node objects from the source (device-profile reconciliation reads them).
  std::vector<model::Node> observed_nodes() const;
  // Queues an Event (never blocks).
  void record_event(state::PodEvent event) { source_.record_event(std::move(event)); }

  const PodManager& pods() const { return pods_; }
  const NodeManager& nodes() const { return nodes_; }
  const QuotaManager& quotas() const { return quota_; }
  LiveStats stats() const;

  // ClusterHandler (source thread).
  void on_node(state::EventType type, const model::Node& node) override;
  void on_pod(state::EventType type, const model::Pod& pod) override;
  void on_quota(state::EventType type, const model::ResourceQuota& quota) override;
  void on_lease(state::EventType type, const state::Lease& lease) override;
  void on_synced() override;

 private:
  struct Health {
    bool healthy = true;
    bool need_update = false;
  };
  // What the NVIDIA backend remembers per node between passes (HAMi CheckHealth).
  struct Reported {
    int64_t gpu_count = 0;
    std::string register_annotation;
  };

  std::optional<std::string> not_ready_reason() const;
  void registration_loop();
  void notify_registration();
  void register_pass();
  // HAMi CheckHealth in the backend's flavour; `found` is the node's decoded registration.
  // A handshake to request is added to `handshakes`, which the pass patches once per node.
  Health check_health(const device::DeviceBackend& backend, const model::Node& node,
                      const device::NodeDevices& found, state::MetadataPatch& handshakes);
  Health handshake(const device::DeviceBackend& backend, const model::Node& node,
                   state::MetadataPatch& requests);
  void node_cleanup(const std::string& node, const device::DeviceBackend& backend);
  bool selected(const model::Node& node) const;
  // Patches the role labels that differ from what they should be (the pass, while leading).
  void label_scheduler_pods();
  // Evicts reservations unconfirmed for a whole pass whose pod the API no longer has.
  void release_vanished_reservations();
  void event(const model::Pod& pod, std::string type, std::string reason, std::string message);
  // The Warning Events of a filter that found no node.
  void record_no_fit_events(const model::Pod& pod, const FailedNodes& failed_nodes,
                            size_t node_count);
  // Sleeps unless stopping; false when stopping.
  bool sleep_unless_stopping(std::chrono::milliseconds d);
  LockStatus lock_with_pod_group_retry(const model::Pod& pod, const std::string& node);
  // bind() once no other bind of the same pod runs.
  std::string bind_pod(const LiveBindRequest& request);
  // Whether `pod` (this incarnation) is bound to `node` as the API server says now; true when
  // that cannot be read (a failed bind then keeps the node lock it set).
  bool bound_to(const model::Pod& pod, const std::string& node);

  const device::DeviceRegistry& registry_;
  state::ClusterSource& source_;
  const LiveOptions options_;
  QuotaManager quota_;
  PodManager pods_;
  NodeManager nodes_;
  LeaderTracker leader_;
  NodeLock node_lock_;

  // The latest Node objects from the source, for the registration pass and bind.
  mutable std::mutex observed_mutex_;
  std::unordered_map<std::string, std::shared_ptr<const model::Node>> observed_;

  // Serializes filters from their usage read to their reservation; guards every
  // LiveNode::filter_usage.
  std::mutex filter_mutex_;

  // Pods ("ns/name") a bind is running for; one bind per pod at a time.
  std::mutex binding_mutex_;
  std::unordered_set<std::string> binding_;

  // Scheduler pods the role labels cover, "ns/name" -> {namespace, name, current role label}.
  struct SchedulerPod {
    std::string namespace_, name, role;
  };
  mutable std::mutex role_mutex_;  // never held across an API call
  std::map<std::string, SchedulerPod> scheduler_pods_;

  std::mutex register_mutex_;  // serializes passes (held across their API calls)
  std::mutex reported_mutex_;  // never held across an API call: the source thread takes it
  std::unordered_map<std::string, Reported> reported_;
  // Unconfirmed reservations the last pass saw, by uid (register_mutex_).
  std::unordered_set<std::string> unconfirmed_seen_;

  std::atomic<bool> source_synced_{false};
  std::atomic<bool> registered_{false};  // HAMi `synced`: a pass finished while leading
  // Leadership changes seen; a pass sets registered_ only if none happened while it ran.
  std::mutex term_mutex_;  // guards term_ and the writes of registered_
  uint64_t term_ = 0;
  std::atomic<uint64_t> passes_{0};
  std::atomic<uint64_t> lock_contention_{0};
  std::atomic<uint64_t> lock_retries_{0};
  std::atomic<uint64_t> started_leading_{0};
  std::atomic<uint64_t> stopped_leading_{0};

  std::mutex wake_mutex_;
  std::condition_variable wake_;
  bool wake_pending_ = false;
  bool stopping_ = false;
  std::thread registration_thread_;
  bool started_ = false;
};

}  // namespace hamisim::live

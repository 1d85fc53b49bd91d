#pragma once
// `--cluster-snapshot PATH...` (spec §4.5): Kubernetes Lists (JSON or YAML; files or
// directories) loaded into an in-memory ObjectStore that plays the API server. Writes (pod
// annotations and labels, node locks, bindings, events) change the store, and the changes flow
// back to the handler like watch events, exactly as they would from a cluster. `write_snapshot`
// dumps the resulting objects (`--snapshot-out`).
//
// There is no device plugin behind a snapshot: after a bind the node stays locked, as in a
// cluster whose device plugin has not run yet. With `play_device_plugin` the source does the
// device plugin's part after each successful bind: `hami.io/bind-phase: success` on the pod and
// the node lock released.

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "model/result.h"
#include "state/cluster_source.h"
#include "state/object_store.h"

namespace hamisim::state {

class SnapshotSource final : public ClusterSource {
 public:
  struct Options {
    bool play_device_plugin = false;
    std::string scheduler_name = "hami-scheduler";  // events' source component
    // Events recorded by this process that are kept; older ones are deleted, as the API
    // server expires Events (after an hour). Without a bound a busy live path grew the store
    // by megabytes a second.
    size_t max_recorded_events = 1000;
  };
  // Errors name the file and the item.
  static Result<std::unique_ptr<SnapshotSource>> load(const std::vector<std::string>& paths,
                                                      Options options);
  ~SnapshotSource() override;

  void start(ClusterHandler& handler) override;
  void stop() override;
  std::string describe() const override;

  ApiResult<model::Node> get_node(std::string_view name) override;
  ApiResult<model::Pod> get_pod(std::string_view namespace_, std::string_view name) override;
  ApiStatus patch_node_annotations(std::string_view name, const MetadataPatch& annotations,
                                   std::string_view resource_version) override;
  ApiStatus patch_pod_metadata(std::string_view namespace_, std::string_view name,
                               const MetadataPatch& annotations,
                               const MetadataPatch& labels) override;
  ApiStatus bind_pod(std::string_view namespace_, std::string_view name, std::string_view uid,
                     std::string_view node) override;
  void record_event(PodEvent event) override;

  // Writes every object as one `kind: List` JSON document.
  Status write_snapshot(const std::string& path) const;
  ObjectStore& store() { return store_; }
  // How often the delivery loop woke up (tests: an idle source must not spin).
  uint64_t delivery_wakeups() const { return wakeups_; }

 private:
  SnapshotSource(Options options, std::string description);
  void run(ClusterHandler& handler);
  // Delivers one stored object to the handler; false when it does not decode (logged).
  void deliver(ClusterHandler& handler, EventType type, const StoredObject& object);
  // After the history was outrun: lists everything again and delivers the difference.
  void resync(ClusterHandler& handler);

  Options options_;
  std::string description_;
  ObjectStore store_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> wakeups_{0};
  std::mutex events_mu_;
  // Namespace and name of the Events record_event created, oldest first.
  std::deque<std::pair<std::string, std::string>> recorded_events_;
  uint64_t delivered_version_ = 0;                                        // source thread only
  std::map<std::tuple<Kind, std::string, std::string>, uint64_t> known_;  // source thread only
};

// The Lease fields leader awareness reads, from a Lease's JSON.
Result<Lease> decode_lease_json(std::string_view json);

}  // namespace hamisim::state

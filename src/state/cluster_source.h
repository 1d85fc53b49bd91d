#pragma once
// Where the live path's cluster state comes from and where its writes go (spec §4.5): the
// Kubernetes API (`--kubeconfig` / in-cluster) or a snapshot file with an in-memory overlay
// (`--cluster-snapshot`). Both behave like an informer plus a REST client:
//
// - `start` delivers every existing Node, Pod, ResourceQuota (and the watched Lease) as
//   kAdded, then changes as they happen, then calls `on_synced` once the initial lists are
//   in. After a relist (watch expired, 410 Gone) the source itself emits kDeleted for objects
//   that disappeared meanwhile, so handlers only ever see a consistent stream per object.
//   Handlers are called from one source thread, one event at a time, never concurrently.
// - Reads (`get_*`) go to the source of truth (the API server), not the cache, as HAMi's
//   node lock does.
// - Writes are JSON merge patches of metadata, a Binding, and Events. `record_event` never
//   blocks: events are queued and sent off the request path; losing one under overload is
//   acceptable, blocking a filter for it is not.
//
// Every method is thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "model/objects.h"
#include "model/result.h"

namespace hamisim::state {

// What went wrong with an API call, in the classes the callers act on.
enum class ApiCode {
  kNotFound,     // 404
  kConflict,     // 409: resourceVersion precondition failed, pod already bound
  kGone,         // 410: watch resourceVersion too old
  kInvalid,      // 400/422: the request itself is wrong
  kForbidden,    // 401/403
  kUnavailable,  // connection failure, timeout, 429, 5xx: worth retrying
  kOther,
};
std::string_view to_string(ApiCode code);

struct ApiError {
  ApiCode code = ApiCode::kOther;
  std::string message;  // names the verb and object: "PATCH node gpu-1: 409 Conflict: ..."
};

// A value or an ApiError.
template <class T>
using ApiResult = Result<T, ApiError>;
struct Done {};
using ApiStatus = ApiResult<Done>;

// coordination.k8s.io/v1 Lease, the fields leader awareness reads.
struct Lease {
  std::string namespace_;
  std::string name;
  std::string resource_version{};
  std::string holder_identity{};
  int64_t lease_duration_seconds = 0;
};

enum class EventType { kAdded, kModified, kDeleted };
std::string_view to_string(EventType type);

// Receives the source's object stream. Objects passed by reference are valid only during the
// call; copy what you keep. A Deleted object may carry its identity only (metadata name,
// namespace and uid; a Lease's namespace and name): a source that finds on a relist that an
// object is gone no longer has the rest.
class ClusterHandler {
 public:
  virtual ~ClusterHandler() = default;
  virtual void on_node(EventType type, const model::Node& node) = 0;
  virtual void on_pod(EventType type, const model::Pod& pod) = 0;
  virtual void on_quota(EventType type, const model::ResourceQuota& quota) = 0;
  virtual void on_lease(EventType type, const Lease& lease) = 0;
  // The initial lists have all been delivered (called once).
  virtual void on_synced() = 0;
};

// One metadata key to set (value) or delete (nullopt) in a merge patch.
using MetadataPatch = std::vector<std::pair<std::string, std::optional<std::string>>>;

// A core/v1 Event about a pod, as HAMi records them (source component: the scheduler name),
// or, with kind "Node", about a node (namespace "default", as kubelet files node events).
struct PodEvent {
  std::string namespace_;
  std::string pod_name;  // the involved object's name
  std::string pod_uid;
  std::string type;  // "Normal" or "Warning"
  std::string reason;
  std::string message;
  std::string kind = "Pod";  // involvedObject.kind: "Pod" or "Node"
};

class ClusterSource {
 public:
  virtual ~ClusterSource() = default;

  // Starts delivering to `handler` (which must outlive `stop`). Called once.
  virtual void start(ClusterHandler& handler) = 0;
  // Stops the stream and flushes queued events (bounded); no handler call after it returns.
  virtual void stop() = 0;
  // A short human description for logs and /readyz ("snapshot examples/live (3 nodes)").
  virtual std::string describe() const = 0;

  virtual ApiResult<model::Node> get_node(std::string_view name) = 0;
  virtual ApiResult<model::Pod> get_pod(std::string_view namespace_, std::string_view name) = 0;

  // Merge-patches metadata.annotations of a node. A non-empty `resource_version` is a
  // precondition (kConflict when the node changed since).
  virtual ApiStatus patch_node_annotations(std::string_view name, const MetadataPatch& annotations,
                                           std::string_view resource_version) = 0;
  // Merge-patches metadata.annotations and metadata.labels of a pod in one request.
  virtual ApiStatus patch_pod_metadata(std::string_view namespace_, std::string_view name,
                                       const MetadataPatch& annotations,
                                       const MetadataPatch& labels) = 0;
  // POST pods/<name>/binding. kConflict when the pod is already bound, kNotFound when gone.
  virtual ApiStatus bind_pod(std::string_view namespace_, std::string_view name,
                             std::string_view uid, std::string_view node) = 0;
  // Queues an Event; never blocks.
  virtual void record_event(PodEvent event) = 0;
};

}  // namespace hamisim::state

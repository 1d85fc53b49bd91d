#pragma once
// An in-memory object store with the API server semantics the live path relies on: objects
// kept as JSON, one global resourceVersion counter, RFC 7386 merge patches with an optional
// metadata.resourceVersion precondition, the pods/binding subresource, and a bounded change
// history that watches read from (a watch from a version older than the history is 410 Gone,
// as after etcd compaction).
//
// It backs the snapshot cluster source (`--cluster-snapshot`) and the fake API server of the
// integration tests, so both answer exactly alike. Thread-safe.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "model/decode.h"
#include "model/result.h"
#include "state/cluster_source.h"

namespace hamisim::state {

enum class Kind { kNode, kPod, kResourceQuota, kLease, kEvent };
std::string_view to_string(Kind kind);  // "Node", "Pod", ...
// "nodes", "pods", "resourcequotas", "leases", "events": the REST resource name.
std::string_view resource_name(Kind kind);
bool namespaced(Kind kind);

struct StoredObject {
  Kind kind = Kind::kNode;
  std::string namespace_;  // empty for Nodes
  std::string name;
  uint64_t resource_version = 0;
  std::string json;  // the whole object, metadata.resourceVersion included
};

struct WatchEvent {
  EventType type = EventType::kAdded;
  StoredObject object;  // for kDeleted: the last state, with the deletion's resourceVersion
};

class ObjectStore {
 public:
  struct Options {
    size_t history = 10000;  // change events kept for watches
  };
  ObjectStore();
  explicit ObjectStore(Options options);
  ~ObjectStore();
  ObjectStore(const ObjectStore&) = delete;
  ObjectStore& operator=(const ObjectStore&) = delete;

  // Adds every Node, Pod, ResourceQuota, Lease and Event of a List (or single object, or JSON
  // array of objects) in JSON text; other kinds are skipped. Returns how many were added. Missing
  // uids and creationTimestamps are filled in. Errors name the item ("items[3]: ...") and leave the
  // store unchanged. The skipped items are listed in `skipped` when given (model/input.h judges
  // them).
  Result<size_t> load(std::string_view json, std::vector<model::SkippedItem>* skipped = nullptr);

  ApiResult<StoredObject> get(Kind kind, std::string_view namespace_, std::string_view name) const;
  struct Listing {
    std::vector<StoredObject> items;  // ordered by namespace, then name
    uint64_t resource_version = 0;    // the store's version at the time of the list
  };
  // Every object of a kind; an empty namespace means all namespaces.
  Listing list(Kind kind, std::string_view namespace_ = {}) const;

  // kConflict (AlreadyExists) when the object exists; kInvalid when the JSON is not an
  // object with metadata.name (and metadata.namespace for namespaced kinds, unless given).
  ApiResult<StoredObject> create(Kind kind, std::string_view json,
                                 std::string_view namespace_ = {});
  // RFC 7386 merge patch. A metadata.resourceVersion in the patch must equal the stored one
  // (kConflict otherwise); name, namespace, uid and resourceVersion cannot be changed by it.
  ApiResult<StoredObject> merge_patch(Kind kind, std::string_view namespace_, std::string_view name,
                                      std::string_view patch);
  // pods/<name>/binding: sets spec.nodeName. kConflict when the pod is already bound or the
  // uid (when given) differs; kNotFound when the pod does not exist.
  ApiResult<StoredObject> bind(std::string_view namespace_, std::string_view name,
                               std::string_view uid, std::string_view node);
  ApiStatus remove(Kind kind, std::string_view namespace_, std::string_view name);

  // Changes of `kind` (in `namespace_`, or all) after `resource_version`, oldest first.
  // kGone when `resource_version` is older than the kept history.
  ApiResult<std::vector<WatchEvent>> changes_since(Kind kind, uint64_t resource_version,
                                                   std::string_view namespace_ = {}) const;
  // Waits until the store's version exceeds `resource_version`, `deadline` passes, or
  // `wake_all` is called. Returns the current version.
  uint64_t wait_for_change(uint64_t resource_version,
                           std::chrono::steady_clock::time_point deadline) const;
  void wake_all() const;
  uint64_t resource_version() const;
  // Forgets the history up to the current version: every watch from an earlier version gets
  // 410 Gone, as after an etcd compaction.
  void compact();

  // Every object (Nodes, Pods, ResourceQuotas, Leases, Events) as one `kind: List` document.
  std::string dump_list() const;

 private:
  using Key = std::tuple<Kind, std::string, std::string>;   // kind, namespace, name
  void record(EventType type, const StoredObject& object);  // requires mu_

  Options options_;
  mutable std::mutex mu_;
  mutable std::condition_variable changed_;
  std::map<Key, StoredObject, std::less<>> objects_;
  std::deque<WatchEvent> history_;
  uint64_t version_ = 0;
  uint64_t history_floor_ = 0;  // changes after this version are all in history_
  uint64_t wake_generation_ = 0;
  uint64_t next_uid_ = 1;
};

}  // namespace hamisim::state

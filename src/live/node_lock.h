#pragma once
// HAMi's node lock (reference hami-scheduler-core.md §3.4): the `hami.io/mutex.lock` node
// annotation that serializes device allocation on a node between the scheduler's bind and the
// device plugin's Allocate, across processes. Value "<RFC3339 local>,<ns>,<pod>"; a bare time
// is the legacy form. Reads go to the API server, not a cache.

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "device/backend.h"
#include "device/codec.h"
#include "live/time_format.h"
#include "state/cluster_source.h"

namespace hamisim::live {

inline constexpr std::string_view kNodeLockContention = "node lock contention";

struct ParsedNodeLock {
  WallTime time;
  std::string namespace_;  // empty for the legacy form
  std::string pod;
};
// Errors: "malformed lock annotation: expected 3 parts, got N from <value>", or a bad time.
Result<ParsedNodeLock> parse_node_lock(std::string_view value);

struct LockStatus {
  bool ok = true;
  bool contention = false;  // someone else holds it: worth waiting for
  std::string error;
  // From lock(): this call wrote the lock annotation (on failure: may have, a patch that
  // reported an error may still have applied). False when the lock was found already this
  // pod's (an earlier bind's, for the device plugin to release): a failing bind must not
  // release that one.
  bool wrote = false;
  std::string value;  // from lock_own(): the value this call wrote
  static LockStatus success(bool wrote = false) { return {true, false, {}, wrote, {}}; }
  static LockStatus failure(std::string e, bool contention = false, bool wrote = false) {
    return {false, contention, std::move(e), wrote, {}};
  }
};

class NodeLock {
 public:
  struct Options {
    std::chrono::seconds timeout{300};  // --node-lock-timeout
    std::function<WallTime()> now = [] { return std::chrono::system_clock::now(); };
    // Sleeps between retries; false when the process is shutting down.
    std::function<bool(std::chrono::milliseconds)> sleep;
    uint64_t jitter_seed = 0;  // 0: seeded from the clock
  };
  NodeLock(state::ClusterSource& source, Options options);

  // LockNode: takes the lock for ns/pod (`wrote`), or finds it already ours (not `wrote`). An
  // expired lock and one whose owner pod is gone are released first.
  LockStatus lock(const std::string& node, const std::string& ns, const std::string& pod);
  // ReleaseNodeLock: removes the lock if it is ours (or always, with skip_owner_check).
  LockStatus release(const std::string& node, const std::string& ns, const std::string& pod,
                     bool skip_owner_check = false);
  // A vendor's own lock (HAMi's Cambricon LockNode): set to the time now when absent or
  // older than its expiry (the expired one removed first); a younger one fails with
  // "node <name> <held>" (contention: the holder's Allocate will clear it). No owner is
  // written, so a pod finds its own earlier lock held as well, as in HAMi.
  LockStatus lock_own(const std::string& node, const device::OwnNodeLock& own);
  // Removes the vendor's lock if it still holds `value`, the one a failing bind wrote.
  LockStatus release_own(const std::string& node, const device::OwnNodeLock& own,
                         const std::string& value);
  // CleanupNodeLock: forgets the in-process mutex of a deleted node.
  void forget(const std::string& node);

 private:
  LockStatus set_lock(const std::string& node, const std::string& ns, const std::string& pod);
  std::shared_ptr<std::mutex> node_mutex(const std::string& node);
  // Go wait.Backoff{Steps: 5, Duration: 100ms, Factor: 2, Jitter: 0.5}: runs `attempt` until it
  // returns true or the steps are used up; false when it never succeeded.
  bool with_backoff(const std::function<bool()>& attempt);
  // Patches the node's `key` to `value`, with the backoff, until it is written or the key shows
  // up set (by this call's earlier patch that reported an error, or by someone else): `found`
  // then judges that value, told whether a patch was sent.
  struct Written {
    bool done = false;  // false: the backoff ran out
    LockStatus status;
    bool sent = false;  // a patch was sent: one that reported an error may still have applied
  };
  Written write_lock(const std::string& node, const std::string& key, const std::string& value,
                     const std::function<LockStatus(const std::string&, bool)>& found);
  // Removes the node's `key`, with the backoff, while `ours` holds for its value.
  struct Removed {
    bool done = false;     // removed, gone, or someone else's now; false: the backoff ran out
    bool removed = false;  // this call's patch removed it
    std::string error;     // the last failure
  };
  Removed remove_lock(const std::string& node, const std::string& key,
                      const std::function<bool(const std::string&)>& ours);

  state::ClusterSource& source_;
  Options options_;
  std::mutex mutexes_mutex_;
  std::unordered_map<std::string, std::shared_ptr<std::mutex>> mutexes_;
  std::mutex rng_mutex_;
  uint64_t rng_;
};

}  // namespace hamisim::live

#pragma once
// Where a node's devices come from, and the usage view built from them.

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "device/allocation.h"
#include "device/registry.h"
#include "device/types.h"
#include "model/objects.h"
#include "model/result.h"

namespace hamisim::fit {

enum class DeviceSource { kAnnotation, kProfile, kSample };
std::string_view to_string(DeviceSource source);

// A node's decoded device description, all vendors, in registration order.
struct DeviceDescription {
  std::vector<device::DeviceInfo> devices;
  std::set<std::string, std::less<>> cordoned;  // hami.io/device-cordon
  DeviceSource source = DeviceSource::kAnnotation;
  std::string profile;  // device profile name when source is a profile
  // Warnings about the description (a vendor whose registration could not be decoded while
  // another vendor's could, a sample that diverges from its profile, ...).
  std::vector<std::string> notes;
  friend bool operator==(const DeviceDescription&, const DeviceDescription&) = default;
};

struct DescriptionResult {
  enum class State { kOk, kNoDescription, kMalformed, kRejected };
  State state = State::kNoDescription;
  DeviceDescription description;
  std::string message;  // why, when not kOk
  friend bool operator==(const DescriptionResult&, const DescriptionResult&) = default;
};

// Decodes every configured vendor's registration annotation on the node (spec §5.3 step 3/4).
// Nothing at all -> kNoDescription; a registration present but undecodable (and no vendor
// decoded) -> kMalformed with the decoder's message.
DescriptionResult read_registered_description(const model::Node& node,
                                              const device::DeviceRegistry& registry);

// Decoded descriptions, shared by nodes whose description inputs are byte-identical. A
// backend's node_devices reads only metadata.name, metadata.labels, metadata.annotations and
// status.capacity (DeviceBackend contract), so those bytes, with a caller's tag, are the key.
// CA sends the same template nodes with every request, and decoding an 8-GPU registration
// costs far more than copying its inputs into a key. Thread-safe.
class DescriptionCache {
 public:
  // At most this many entries; a full cache starts over (live nodes' handshake annotations
  // change, so old entries are never looked up again).
  explicit DescriptionCache(size_t max_entries = 4096) : max_entries_(max_entries) {}

  // The inputs of one node, read once and then looked up under any number of tags, from any
  // number of threads (immutable).
  class Key {
   public:
    explicit Key(const model::Node& node);
    Key(const Key&) = delete;
    Key& operator=(const Key&) = delete;

   private:
    friend class DescriptionCache;
    std::string bytes_;  // sized fields and counted lists: two different nodes never agree
    size_t hash_;        // of bytes_, computed once
  };

  using Entry = std::shared_ptr<const DescriptionResult>;
  // The entry under (key, tag); on a miss, make() is called outside the lock and its result
  // stored.
  template <typename Make>
  Entry get(const Key& key, std::string_view tag, Make&& make) {
    if (Entry hit = find(key, tag)) return hit;
    return store(key, tag, std::make_shared<const DescriptionResult>(make()));
  }
  size_t size() const;

 private:
  Entry find(const Key& key, std::string_view tag) const;
  Entry store(const Key& key, std::string_view tag, Entry entry);

  // Looked up by a Key (its hash computed once) or stored by its bytes.
  struct InputsHash {
    using is_transparent = void;
    size_t operator()(const Key& key) const noexcept { return key.hash_; }
    size_t operator()(const std::string& bytes) const noexcept {
      return std::hash<std::string_view>{}(bytes);
    }
  };
  struct InputsEqual {
    using is_transparent = void;
    bool operator()(const std::string& a, const std::string& b) const { return a == b; }
    bool operator()(const Key& k, const std::string& b) const { return k.bytes_ == b; }
    bool operator()(const std::string& a, const Key& k) const { return a == k.bytes_; }
  };
  // One node's entries by tag: a node is described under one or two tags.
  using Tagged = std::vector<std::pair<std::string, Entry>>;

  const size_t max_entries_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Tagged, InputsHash, InputsEqual> entries_;
  size_t size_ = 0;  // entries over all tags
};

// What describers said about one node, each under the state the describer was in: a node that
// comes again and again (CA's templates, kept by their bytes) is then described by a few loads
// instead of a cache lookup under a lock. Slots are written once and kept as long as the node.
class DescriptionMemo {
 public:
  DescriptionMemo() = default;
  DescriptionMemo(const DescriptionMemo&) = delete;
  DescriptionMemo& operator=(const DescriptionMemo&) = delete;
  ~DescriptionMemo();

  // A number no other describer of the process has: memo slots never outlive their meaning.
  static uint64_t new_describer();

  // What `describer` said in state `state`; on a miss, make() (which must describe the node
  // as the describer does in that state) is remembered.
  template <typename Make>
  std::shared_ptr<const DescriptionResult> get(uint64_t describer, uint64_t state,
                                               Make&& make) const {
    if (auto hit = find(describer, state)) return hit;
    std::shared_ptr<const DescriptionResult> result = make();
    remember(describer, state, result);
    return result;
  }

  // What `describer` said in state `state`, or null.
  std::shared_ptr<const DescriptionResult> find(uint64_t describer, uint64_t state) const;
  // Keeps `result` unless every slot is taken (a node seen under many states is then
  // described by its describer each time).
  void remember(uint64_t describer, uint64_t state,
                std::shared_ptr<const DescriptionResult> result) const;

 private:
  struct Slot {
    uint64_t describer;
    uint64_t state;
    std::shared_ptr<const DescriptionResult> result;
  };
  mutable std::array<std::atomic<const Slot*>, 4> slots_{};
};

// A node with its description key, built once when the node is first described: a node that
// comes again and again (CA's templates) is described without reading its inputs again, and
// a node that is never described (a request refused first) never builds one.
class KeyedNode {
 public:
  explicit KeyedNode(model::Node n) : node(std::move(n)) {}
  const model::Node node;
  // Thread-safe.
  const DescriptionCache::Key& key() const {
    std::call_once(key_once_, [this] { key_.emplace(node); });
    return *key_;
  }
  DescriptionMemo described;

 private:
  mutable std::once_flag key_once_;
  mutable std::optional<DescriptionCache::Key> key_;
};

// Per-device usage of one node while deciding. Holds pointers into the description's pair
// scores: it must not outlive the DeviceDescription it was built from.
struct NodeUsage {
  std::vector<device::DeviceUsage> devices;
};

// HAMi buildNodeUsage: one DeviceUsage per registered device with zero usage.
NodeUsage fresh_usage(const DeviceDescription& description);
// The same into `usage`, reusing its memory: one NodeUsage serves every node of a request.
void reset_usage(NodeUsage& usage, const DeviceDescription& description);

// One pod's allocation as recorded in its annotations (what the pod manager keeps).
struct PodAllocation {
  std::map<std::string, std::vector<device::DeviceCharge>, std::less<>> charges;  // per vendor
  std::vector<device::MigAllocation> mig;
  // The pod's annotations, kept when a backend charged here reads the pods on its devices.
  std::shared_ptr<const model::StringMap> annotations;
  bool empty() const { return charges.empty() && mig.empty(); }
};

// Makes a decoded allocation value of `backend` positional (entry i = container index i, init
// first). The aligned form (ours, HAMi <= v2.9 and after fix #2900) already is: one segment per
// container plus the empty one after the final ';'. HAMi v2.10 on model-typed devices drops
// the empty entries of containers without devices (issue #2899), so its value is shorter;
// read positionally, an app container's entry would be taken for an init container's (peak
// instead of sum, and released when the init containers finish). Its non-empty entries
// belong, in order, to the containers that request this vendor's devices.
device::PodSingleDevice positional_pod_devices(device::PodSingleDevice list, const model::Pod& pod,
                                               const device::DeviceBackend& backend);

// Whether the pod has init containers and every one of them terminated with exit code 0 (its
// status matched by name): its init containers' devices are then released.
bool all_init_containers_succeeded(const model::Pod& pod);

// Decodes the allocated annotation of every vendor plus MIG allocations, collapsing init
// containers (and dropping them once they all succeeded). Terminated pods allocate nothing.
// Errors name the annotation and the problem. `added`, when given, are annotations set over the
// pod's own (a pod the planner placed, which shares the pending pod instead of copying it).
Result<PodAllocation> decode_pod_allocation(const model::Pod& pod,
                                            const device::DeviceRegistry& registry,
                                            const model::StringMap* added = nullptr);

// HAMi getNodesUsage for one pod (reference: hami-device-model.md §4.3), including the
// fail-closed MIG rules.
void add_pod_usage(NodeUsage& usage, const PodAllocation& allocation);

}  // namespace hamisim::fit

#pragma once
// Recognises a simulation caller that does not send the pods it placed (issue #33).
//
// Multi-pod packing on a template is right only when the caller sends, in `SimulatedPods`, the
// pods its simulation already put on a node (spec §5.2). A Cluster Autoscaler build whose
// extender client does not (kube-scheduler's standard `Filter(pod, nodes)`) asks about the
// same template copy again for its next pod, with nothing for that copy, and every answer is
// "fits an empty node": CA then asks for too few nodes when device memory or cores bound the
// packing. The sign, per caller and template copy (profile::is_template_copy):
//   a question about that copy alone, for a pod that fits, with no SimulatedPods for it, and
//   then, within `kWindow`, a question about that copy alone for *another* pod, again without
//   SimulatedPods for it.
// A conformant caller placed the first pod on the copy (CA's SchedulePod places the pod when
// its only node fits) and so sends it with the second question; the template itself is not a
// copy (CA checks each pod group on an empty template). Sending SimulatedPods for a copy
// clears what was remembered of it.
//
// Bounded: a fixed table of kSlots entries keyed by a hash of (caller identity, node name),
// one small lock each, entries older than kWindow ignored. It never allocates, and nothing it
// keeps changes an answer: only a note, a counter and a log line come of it.
//
// Thread-safe.

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>

#include "model/objects.h"

namespace hamisim::server {

class SimulatedPodsWatch {
 public:
  using Clock = std::chrono::steady_clock;
  // Longer than the gap between two questions of one CA estimate (each waits for the answer
  // of the one before), shorter than CA's scan interval (10 s), so that a node name CA uses
  // again in its next loop starts afresh.
  static constexpr std::chrono::seconds kWindow{5};
  static constexpr size_t kSlots = 1024;

  SimulatedPodsWatch();

  // A request that asked about exactly one node, `node`, a template copy. `caller` is the
  // client's identity (empty without mTLS); `pod` a pod identity (pod_identity()); `sent`:
  // SimulatedPods carried pods for `node`; `fits`: the answer was Fits. True when the request
  // shows the unsent-placements sign described above.
  bool observe(std::string_view caller, std::string_view node, uint64_t pod, bool sent, bool fits,
               Clock::time_point now);
  // The caller sent SimulatedPods for `node` (in a request about several nodes).
  void placements_sent(std::string_view caller, std::string_view node);

  // A hash of the pod's namespace, name and UID; 0 for a pod without any of them (the watch
  // treats all such pods as one, so it never reports them).
  static uint64_t pod_identity(const model::Pod& pod);

 private:
  struct Slot {
    std::mutex mu;
    uint64_t key = 0;  // 0: empty
    uint64_t pod = 0;
    Clock::time_point answered{};
  };
  static uint64_t key_of(std::string_view caller, std::string_view node);
  Slot& slot(uint64_t key) { return slots_[key % kSlots]; }

  std::unique_ptr<Slot[]> slots_;
};

}  // namespace hamisim::server

#include "server/simulated_pods_watch.h"

// Header-only XXH3: no library to link or ship.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace hamisim::server {

SimulatedPodsWatch::SimulatedPodsWatch() : slots_(std::make_unique<Slot[]>(kSlots)) {}

uint64_t SimulatedPodsWatch::key_of(std::string_view caller, std::string_view node) {
  const uint64_t k =
      XXH3_64bits_withSeed(node.data(), node.size(), XXH3_64bits(caller.data(), caller.size()));
  return k == 0 ? 1 : k;  // 0 marks an empty slot
}

uint64_t SimulatedPodsWatch::pod_identity(const model::Pod& pod) {
  const model::ObjectMeta& m = pod.metadata;
  if (m.namespace_.empty() && m.name.empty() && m.uid.empty()) return 0;
  uint64_t h = XXH3_64bits(m.namespace_.data(), m.namespace_.size());
  h = XXH3_64bits_withSeed(m.name.data(), m.name.size(), h);
  h = XXH3_64bits_withSeed(m.uid.data(), m.uid.size(), h);
  return h == 0 ? 1 : h;
}

bool SimulatedPodsWatch::observe(std::string_view caller, std::string_view node, uint64_t pod,
                                 bool sent, bool fits, Clock::time_point now) {
  const uint64_t key = key_of(caller, node);
  Slot& s = slot(key);
  std::lock_guard lock(s.mu);
  const bool known = s.key == key && now - s.answered <= kWindow;
  if (sent) {
    if (s.key == key) s.key = 0;
    return false;
  }
  const bool unsent = known && pod != 0 && s.pod != 0 && s.pod != pod;
  if (fits) {
    s.key = key;
    s.pod = pod;
    s.answered = now;
  }
  return unsent;
}

void SimulatedPodsWatch::placements_sent(std::string_view caller, std::string_view node) {
  const uint64_t key = key_of(caller, node);
  Slot& s = slot(key);
  std::lock_guard lock(s.mu);
  if (s.key == key) s.key = 0;
}

}  // namespace hamisim::server

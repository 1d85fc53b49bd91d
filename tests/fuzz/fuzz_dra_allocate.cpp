// The structured allocator (src/dra/allocator) on arbitrary clusters: a List of DRA objects is
// decoded (items the strict decoder refuses are dropped), then every unallocated claim is
// allocated on every node the slices name, with a small step budget. Never crashes, never
// hangs; an allocation never takes more of a shareable device's capacity than it has, never
// gives a claim more than 32 results, and never gives a share ID twice on one device.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <tuple>

#include "dra/allocator/allocator.h"
#include "dra/decode.h"
#include "model/decode.h"

namespace {

using namespace hamisim;

void check(const dra::Objects& objects, const dra::NodeAllocation& out,
           const dra::AllocatedState& committed) {
  dra::AllocatedState after = committed;
  std::set<std::tuple<std::string, std::string, std::string, std::string>> shares;
  for (const auto& allocation : out.claims) {
    if (allocation.results.size() > 32) std::abort();
    after.add(allocation);
    for (const auto& r : allocation.results) {
      if (r.share_id && !shares.insert({r.driver, r.pool, r.device, *r.share_id}).second) {
        std::abort();
      }
    }
  }
  for (const auto& s : objects.slices) {
    for (const auto& d : s.devices) {
      if (!d.allow_multiple_allocations) continue;
      const dra::Amounts* used = after.consumed({s.driver, s.pool.name, d.name});
      const dra::Amounts* before = committed.consumed({s.driver, s.pool.name, d.name});
      if (used == nullptr) continue;
      for (const auto& [name, cap] : d.capacity) {
        const auto it = used->find(name);
        if (it == used->end() || it->second <= cap.value) continue;
        // Over capacity only if it was not already over before this allocation.
        const auto was = before ? before->find(name) : used->end();
        if (before == nullptr || was == before->end() || it->second > was->second) std::abort();
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto set = model::decode_objects_json(text, {.dra = true});
  if (!set) return 0;
  dra::Objects objects;
  for (const auto& item : set->dra_objects) (void)dra::decode_object(item.json, item.path, objects);
  const dra::AllocatedState committed = dra::AllocatedState::of(objects.claims);
  std::vector<const dra::ResourceClaim*> pending;
  for (const auto& c : objects.claims) {
    if (!c.status.allocation) pending.push_back(&c);
  }
  if (pending.empty()) return 0;
  std::set<std::string> nodes = {"n"};
  for (const auto& s : objects.slices) {
    if (s.scope.node_name && nodes.size() < 4) nodes.insert(*s.scope.node_name);
  }
  dra::SelectorCache selectors;
  dra::ShareIds share_ids;
  dra::Allocator allocator(objects.classes, selectors, share_ids, /*step_budget=*/20000);
  const dra::NodeSelectorMatch any = [](const model::NodeSelector& s) { return !s.terms.empty(); };
  for (const std::string& node : nodes) {
    const auto pools = dra::gather_pools(objects.slices, node, any);
    auto out = allocator.allocate(pools, node, any, pending, committed);
    if (!out) {
      if (out.error().message.empty()) std::abort();
      continue;
    }
    if (out->unschedulable.empty() != (out->claims.size() == pending.size())) std::abort();
    check(objects, *out, committed);
  }
  return 0;
}

// hamisim's structured DRA allocator as a batch program, for the differential test against
// Kubernetes' own allocator (interop/differential). Not a product command.
//
//   dra_allocate [--step-budget N] < cases.jsonl > answers.jsonl
//
// Each input line is one case:
//   {"node": <Node>, "objects": [<ResourceSlice|DeviceClass|ResourceClaim>...]}
// Claims with status.allocation are what the cluster already holds; the others are allocated on
// the node, in the order given, as one pod's claims. Each output line is the answer:
//   {"error": "..."}                        the allocator refused the input (kube-scheduler:
//                                           the pod's scheduling attempt fails on every node)
//   {"unschedulable": "..."}                the claims do not fit this node
//   {"claims": [[{"request","driver","pool","device","shareID","consumedCapacity"}...]...]}
// A line that does not decode is answered {"input": "..."}.

#include <boost/json.hpp>

#include <iostream>
#include <string>

#include "dra/allocator/allocator.h"
#include "dra/decode.h"
#include "dra/pools.h"
#include "model/decode.h"
#include "planner/framework/labels.h"

namespace json = boost::json;
using namespace hamisim;

namespace {

int64_t step_budget = dra::Allocator::kDefaultStepBudget;

json::object answer(const std::string& line) {
  json::error_code ec;
  json::value in = json::parse(line, ec);
  if (ec || !in.is_object()) return {{"input", "not a JSON object"}};
  auto* node_v = in.as_object().if_contains("node");
  auto* objects_v = in.as_object().if_contains("objects");
  if (node_v == nullptr || objects_v == nullptr || !objects_v->is_array()) {
    return {{"input", "want {\"node\": ..., \"objects\": [...]}"}};
  }
  auto node = model::decode_node_json(json::serialize(*node_v));
  if (!node) return {{"input", "node: " + node.error().message}};
  dra::Objects objects;
  for (size_t i = 0; i < objects_v->as_array().size(); ++i) {
    const std::string text = json::serialize(objects_v->as_array()[i]);
    if (auto st = dra::decode_object(text, "objects[" + std::to_string(i) + "]", objects); !st) {
      return {{"input", st.error().message}};
    }
  }
  dra::apply_device_taint_rules(objects);
  std::vector<const dra::ResourceClaim*> to_allocate;
  for (const auto& c : objects.claims) {
    if (!c.status.allocation) to_allocate.push_back(&c);
  }
  const auto committed = dra::AllocatedState::of(objects.claims);
  const dra::NodeSelectorMatch matches = [&](const model::NodeSelector& selector) {
    return planner::framework::NodeSelectorMatcher::compile(selector).matches(*node);
  };
  const auto pools = dra::gather_pools(objects.slices, node->metadata.name, matches);
  dra::SelectorCache selectors;
  dra::ShareIds share_ids;
  dra::Allocator allocator(objects.classes, selectors, share_ids, step_budget);
  for (const auto* c : to_allocate) {
    if (auto missing = allocator.missing_device_class(*c)) return {{"error", *missing}};
  }
  auto got = allocator.allocate(pools, node->metadata.name, matches, to_allocate, committed);
  if (!got) return {{"error", got.error().message}};
  if (!got->unschedulable.empty()) return {{"unschedulable", got->unschedulable}};
  json::array claims;
  for (const auto& a : got->claims) {
    json::array results;
    for (const auto& r : a.results) {
      json::object o{{"request", r.request}, {"driver", r.driver}, {"pool", r.pool},
                     {"device", r.device}};
      if (r.share_id) o["shareID"] = *r.share_id;
      if (!r.consumed_capacity.empty()) {
        json::object cap;
        for (const auto& [name, q] : r.consumed_capacity) cap[name] = q.to_string();
        o["consumedCapacity"] = std::move(cap);
      }
      results.push_back(std::move(o));
    }
    claims.push_back(std::move(results));
  }
  return {{"claims", std::move(claims)}};
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  if (argc == 3 && std::string(argv[1]) == "--step-budget") {
    step_budget = std::stoll(argv[2]);
  } else if (argc != 1) {
    std::cerr << "usage: dra_allocate [--step-budget N] < cases.jsonl\n";
    return 2;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    std::cout << json::serialize(answer(line)) << '\n' << std::flush;
  }
  return 0;
}

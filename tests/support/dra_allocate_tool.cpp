// hamisim's structured DRA allocator as a batch program, for the differential test against
// Kubernetes' own allocator (interop/differential). Not a product command.
//
//   dra_allocate [--step-budget N] [--time-iterations N] < cases.jsonl > answers.jsonl
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
//
// With --time-iterations N each answer also carries "nsPerAllocation": the decision made N
// more times on the decoded input (the node's pools gathered, the allocator built and run, as
// for each node kube-scheduler's Filter asks about; decoding not included), wall time per
// decision. The peer benchmark (interop/differential/dra_peer_test.go) sets it.

#include <boost/json.hpp>

#include <chrono>
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
int64_t time_iterations = 0;

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
  // One pod's claims on this node; the selector cache lives as long as the pod's scheduling
  // cycle, as kube-scheduler's CEL cache does.
  dra::SelectorCache selectors;
  auto decide = [&]() -> Result<dra::NodeAllocation> {
    const auto pools = dra::gather_pools(objects.slices, node->metadata.name, matches);
    dra::ShareIds share_ids;
    dra::Allocator allocator(objects.classes, selectors, share_ids, step_budget);
    for (const auto* c : to_allocate) {
      if (auto missing = allocator.missing_device_class(*c)) return make_error(*missing);
    }
    return allocator.allocate(pools, node->metadata.name, matches, to_allocate, committed);
  };
  auto got = decide();
  json::object timing;
  if (time_iterations > 0) {
    const auto start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < time_iterations; ++i) {
      if (decide().ok() != got.ok()) return {{"error", "the decision changed when repeated"}};
    }
    const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
    timing["nsPerAllocation"] = took.count() / double(time_iterations);
  }
  auto with_timing = [&](json::object o) {
    for (const auto& [k, v] : timing) o[k] = v;
    return o;
  };
  if (!got) return with_timing({{"error", got.error().message}});
  if (!got->unschedulable.empty()) return with_timing({{"unschedulable", got->unschedulable}});
  json::array claims;
  for (const auto& a : got->claims) {
    json::array results;
    for (const auto& r : a.results) {
      json::object o{
          {"request", r.request}, {"driver", r.driver}, {"pool", r.pool}, {"device", r.device}};
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
  return with_timing({{"claims", std::move(claims)}});
}

}  // namespace

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 < argc && flag == "--step-budget") {
      step_budget = std::stoll(argv[i + 1]);
    } else if (i + 1 < argc && flag == "--time-iterations") {
      time_iterations = std::stoll(argv[i + 1]);
    } else {
      std::cerr << "usage: dra_allocate [--step-budget N] [--time-iterations N] < cases.jsonl\n";
      return 2;
    }
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    std::cout << json::serialize(answer(line)) << '\n' << std::flush;
  }
  return 0;
}

#pragma once
// CA's expanders (ca-scale-up.md §4.6): which node group to scale up, given one expansion
// Option per group. Each Expander narrows a list of options to its best set; a Chain runs
// them in order (--expander=priority,least-waste) and, when more than one option survives,
// picks one with the seeded random strategy.
//
// Determinism: every expander keeps the surviving options in input order, so ties never
// depend on hash order; the only tie-breaker is the random strategy, which is a
// std::mt19937_64 seeded by the caller (--seed), so a seed fixes every pick.

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/objects.h"
#include "model/result.h"
#include "planner/framework/snapshot.h"

namespace hamisim::planner::expander {

// CA's expander.Option.
struct Option {
  std::string node_group;  // the node group id
  int64_t node_count = 0;
  std::vector<framework::PodInfoPtr> pods;   // the pods the new nodes would take
  std::optional<model::Node> template_node;  // nullopt: the group has no template
  std::vector<std::string> similar_node_groups;
  // Price expander inputs: the price of one node of the group (per hour, any currency
  // consistent with PodPricing); nullopt means the pricing model has no price for it.
  std::optional<double> node_price;
  bool node_group_exists = true;  // false: an autoprovisioned group not created yet
};

// Something an expander wants the user to know (CA emits these as warning events).
struct Warnings {
  std::vector<std::string> messages;
  void add(std::string m) { messages.push_back(std::move(m)); }
};

class Expander {
 public:
  virtual ~Expander() = default;
  virtual std::string_view name() const = 0;
  // The best options, a subset of `options` in input order.
  virtual std::vector<Option> best_options(std::vector<Option> options, Warnings& w) = 0;
  // A strategy always returns at most one option; nothing may follow it in a chain.
  virtual bool is_strategy() const { return false; }
  // What this expander judges the option by, for the plan's report ("price score 12.3456");
  // nullopt when it keeps no score (random).
  virtual std::optional<std::string> describe(const Option& option) const {
    (void)option;
    return std::nullopt;
  }
};

// least-waste: wasted = (availCpu-reqCpu)/availCpu + (availMem-reqMem)/availMem with
// avail = template *capacity* (cpu in millicores, memory in bytes) × node_count and req the
// sum of the effective requests of option.pods. The minimum score wins; exact float
// equality ties. Options without a template are skipped. Deviation: an option whose
// available cpu or memory is 0 (no capacity, or node_count 0) is skipped too, where CA would
// divide by zero.
class LeastWaste final : public Expander {
 public:
  std::string_view name() const override { return "least-waste"; }
  std::vector<Option> best_options(std::vector<Option> options, Warnings& w) override;
  std::optional<std::string> describe(const Option& option) const override;
  static std::optional<double> waste_score(const Option& o);
};

// most-pods: the options with the most pods.
class MostPods final : public Expander {
 public:
  std::string_view name() const override { return "most-pods"; }
  std::vector<Option> best_options(std::vector<Option> options, Warnings& w) override;
  std::optional<std::string> describe(const Option& option) const override;
};

// least-nodes: the options with the smallest node_count > 0; 0-node options are ignored.
class LeastNodes final : public Expander {
 public:
  std::string_view name() const override { return "least-nodes"; }
  std::vector<Option> best_options(std::vector<Option> options, Warnings& w) override;
  std::optional<std::string> describe(const Option& option) const override;
};

// random: one option, uniformly: index = rng() % n with a std::mt19937_64 seeded once.
class Random final : public Expander {
 public:
  explicit Random(uint64_t seed) : rng_(seed) {}
  std::string_view name() const override { return "random"; }
  std::vector<Option> best_options(std::vector<Option> options, Warnings& w) override;
  bool is_strategy() const override { return true; }

 private:
  std::mt19937_64 rng_;
};

// The priority expander's config: CA's ConfigMap `priorities` value, a YAML map
// priority (int) -> list of regexes. Regexes are unanchored searches on the node group id
// (std::regex ECMAScript; CA uses Go RE2: the common subset behaves the same).
struct PriorityConfig {
  struct Entry {
    int64_t priority = 0;
    std::vector<std::string> patterns;
    std::vector<std::regex> regexes;
  };
  std::vector<Entry> entries;  // highest priority first

  // Errors name the line (1-based) of the offending key, value or regex.
  static Result<PriorityConfig> parse(std::string_view yaml);
  // The fallback without --priority-config: each node group's own `priority` field, as an
  // entry matching exactly that group id (regex-escaped, anchored).
  static PriorityConfig from_node_groups(
      const std::vector<std::pair<std::string, int64_t>>& group_priorities);
  // The highest priority with a regex matching `node_group`, nullopt if none matches.
  std::optional<int64_t> priority_of(std::string_view node_group) const;
};

// priority: keep the options whose group has the highest matching priority; groups matching
// nothing are dropped (with a warning). With no config (missing or invalid) or when no group
// matches, every option is returned unchanged, with a warning.
class Priority final : public Expander {
 public:
  // `config` not ok(): the expander warns with its error and passes every option through.
  explicit Priority(Result<PriorityConfig> config) : config_(std::move(config)) {}
  std::string_view name() const override { return "priority"; }
  std::vector<Option> best_options(std::vector<Option> options, Warnings& w) override;
  std::optional<std::string> describe(const Option& option) const override;

 private:
  Result<PriorityConfig> config_;
};

// How the price expander prices pods: per cpu core-hour and per GiB-hour of memory (the
// defaults are GCE's on-demand N1 custom-machine rates, as CA's GCE pricing uses).
struct PodPricing {
  double cpu_per_core = 0.033174;
  double memory_per_gib = 0.004446;
  double pod_price(double milli_cpu, double memory_bytes) const;
};

struct PriceConfig {
  PodPricing pricing;
  int64_t cluster_node_count = 0;  // picks the preferred node size
  // NodeHasGpu: the provider's GPU label, or non-zero allocatable of a registered GPU resource.
  std::string gpu_label = "cloud.google.com/gke-accelerator";
  std::vector<std::string> gpu_resources = {"nvidia.com/gpu"};
};

// price: score = suppressedUnfitness × (nodePrice×node_count + stab) / (podsPrice + stab),
// stab = the price of a 0.5 cpu / 500Mi pod; unfitness = max(pref/nodeCpu, nodeCpu/pref)
// with nodeCpu the template's capacity in cores and pref by cluster size (≤2 nodes: 1 cpu,
// ≤6: 2, ≤20: 4, ≤60: 8, ≤200: 16, else 32); suppressed = (unfitness-1)(1-tanh((n-1)/15))+1.
// A GPU template gets suppressed = 1000 (§4.6/§4.9). A group not created yet: score ×2.
// Lowest score wins, exact ties kept. Options without a template or a node price are
// skipped. The returned options have no similar_node_groups.
class Price final : public Expander {
 public:
  explicit Price(PriceConfig config) : config_(std::move(config)) {}
  std::string_view name() const override { return "price"; }
  std::vector<Option> best_options(std::vector<Option> options, Warnings& w) override;
  std::optional<std::string> describe(const Option& option) const override;
  std::optional<double> score(const Option& o) const;
  static int64_t preferred_cpu(int64_t cluster_node_count);
  bool node_has_gpu(const model::Node& node) const;

 private:
  PriceConfig config_;
};

struct ChainConfig {
  uint64_t seed = 0;
  Result<PriorityConfig> priority = make_error("no priority config");
  PriceConfig price;
};

// --expander=a,b,c (§4.6 chain): each expander narrows the options; as soon as exactly one is
// left it is the answer; otherwise the last survivors go to the seeded random strategy.
class Chain {
 public:
  // Errors: an empty or unknown name, a repeated name, or a name after a strategy (random).
  static Result<Chain> make(std::string_view spec, ChainConfig config);
  explicit Chain(std::vector<std::unique_ptr<Expander>> filters, uint64_t seed = 0)
      : filters_(std::move(filters)), fallback_(seed) {}

  std::optional<Option> best_option(std::vector<Option> options, Warnings& w);
  // What each expander of the chain judges the option by, in chain order, joined by "; "
  // ("priority 10; least-waste score 1.7619"); empty when none keeps a score.
  std::string describe(const Option& option) const;

 private:
  std::vector<std::unique_ptr<Expander>> filters_;
  Random fallback_;
};

}  // namespace hamisim::planner::expander

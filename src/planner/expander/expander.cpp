#include "planner/expander/expander.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

#include "model/yaml_check.h"
#include "model/yaml_number.h"
#include "planner/framework/resources.h"

namespace hamisim::planner::expander {

namespace {

// Keeps the options whose score is the minimum (exact equality), in input order; options
// without a score are dropped.
template <class ScoreFn>
std::vector<Option> keep_min(std::vector<Option> options, ScoreFn score) {
  std::optional<double> best;
  std::vector<std::pair<double, size_t>> scored;
  for (size_t i = 0; i < options.size(); ++i) {
    std::optional<double> s = score(options[i]);
    if (!s) continue;
    scored.emplace_back(*s, i);
    if (!best || *s < *best) best = *s;
  }
  std::vector<Option> out;
  for (const auto& [s, i] : scored) {
    if (s == *best) out.push_back(std::move(options[i]));
  }
  return out;
}

struct PodTotals {
  double milli_cpu = 0;
  double memory = 0;
};

PodTotals sum_requests(const std::vector<framework::PodInfoPtr>& pods) {
  PodTotals t;
  for (const auto& p : pods) {
    model::ResourceList req = framework::pod_requests(p->pod());
    if (auto it = req.find(std::string(framework::kResourceCpu)); it != req.end()) {
      t.milli_cpu += static_cast<double>(it->second.milli_value());
    }
    if (auto it = req.find(std::string(framework::kResourceMemory)); it != req.end()) {
      t.memory += static_cast<double>(it->second.value());
    }
  }
  return t;
}

double capacity_of(const model::Node& node, std::string_view name, bool milli) {
  auto it = node.status.capacity.find(std::string(name));
  if (it == node.status.capacity.end()) return 0;
  return static_cast<double>(milli ? it->second.milli_value() : it->second.value());
}

}  // namespace

// ---- least-waste ----

std::optional<double> LeastWaste::waste_score(const Option& o) {
  if (!o.template_node) return std::nullopt;
  double count = static_cast<double>(o.node_count);
  double avail_cpu = capacity_of(*o.template_node, framework::kResourceCpu, true) * count;
  double avail_mem = capacity_of(*o.template_node, framework::kResourceMemory, false) * count;
  if (avail_cpu <= 0 || avail_mem <= 0) return std::nullopt;
  PodTotals req = sum_requests(o.pods);
  return (avail_cpu - req.milli_cpu) / avail_cpu + (avail_mem - req.memory) / avail_mem;
}

std::vector<Option> LeastWaste::best_options(std::vector<Option> options, Warnings&) {
  return keep_min(std::move(options), [](const Option& o) { return waste_score(o); });
}

// ---- most-pods / least-nodes ----

std::vector<Option> MostPods::best_options(std::vector<Option> options, Warnings&) {
  return keep_min(std::move(options), [](const Option& o) -> std::optional<double> {
    return -static_cast<double>(o.pods.size());
  });
}

std::vector<Option> LeastNodes::best_options(std::vector<Option> options, Warnings&) {
  return keep_min(std::move(options), [](const Option& o) -> std::optional<double> {
    if (o.node_count <= 0) return std::nullopt;
    return static_cast<double>(o.node_count);
  });
}

// ---- random ----

std::vector<Option> Random::best_options(std::vector<Option> options, Warnings&) {
  if (options.empty()) return {};
  size_t pick = static_cast<size_t>(rng_() % options.size());
  std::vector<Option> out;
  out.push_back(std::move(options[pick]));
  return out;
}

// ---- priority ----

Result<PriorityConfig> PriorityConfig::parse(std::string_view yaml) {
  if (Status s = model::check_yaml(yaml); !s) {
    return make_error("priority config: " + s.error().message);
  }
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return make_error("priority config: line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  auto at = [](const YAML::Node& n) { return "line " + std::to_string(n.Mark().line + 1); };
  PriorityConfig out;
  if (!root || root.IsNull()) return out;
  if (!root.IsMap()) {
    return make_error("priority config: " + at(root) + ": expected a map of priority to regexes");
  }
  std::set<int64_t> seen;
  for (const auto& kv : root) {
    Entry entry;
    const YAML::Node& key = kv.first;
    std::string key_text = key.IsScalar() ? key.Scalar() : std::string();
    switch (model::parse_yaml_integer(key_text, &entry.priority)) {
      case model::YamlInteger::kOk:
        break;
      case model::YamlInteger::kLeadingZero:
        return make_error("priority config: " + at(key) + ": priority " +
                          model::leading_zero_message(key_text));
      case model::YamlInteger::kOutOfRange:
      case model::YamlInteger::kNotInteger:
        return make_error("priority config: " + at(key) + ": priority \"" + key_text +
                          "\" is not an integer");
    }
    if (!seen.insert(entry.priority).second) {
      return make_error("priority config: " + at(key) + ": priority " + key_text +
                        " appears twice");
    }
    const YAML::Node& list = kv.second;
    if (!list.IsSequence()) {
      return make_error("priority config: " + at(list) + ": priority " + key_text +
                        " must have a list of regexes");
    }
    for (const auto& item : list) {
      if (!item.IsScalar()) {
        return make_error("priority config: " + at(item) + ": a regex must be a string");
      }
      try {
        entry.regexes.emplace_back(item.Scalar(), std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        return make_error("priority config: " + at(item) + ": invalid regex \"" + item.Scalar() +
                          "\": " + e.what());
      }
      entry.patterns.push_back(item.Scalar());
    }
    out.entries.push_back(std::move(entry));
  }
  std::sort(out.entries.begin(), out.entries.end(),
            [](const Entry& a, const Entry& b) { return a.priority > b.priority; });
  return out;
}

PriorityConfig PriorityConfig::from_node_groups(
    const std::vector<std::pair<std::string, int64_t>>& group_priorities) {
  std::map<int64_t, Entry, std::greater<>> by_priority;
  for (const auto& [id, priority] : group_priorities) {
    std::string pattern = "^";
    for (char c : id) {
      if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) pattern += '\\';
      pattern += c;
    }
    pattern += '$';
    Entry& e = by_priority[priority];
    e.priority = priority;
    e.regexes.emplace_back(pattern, std::regex::ECMAScript);
    e.patterns.push_back(std::move(pattern));
  }
  PriorityConfig out;
  for (auto& [p, e] : by_priority) out.entries.push_back(std::move(e));
  return out;
}

std::optional<int64_t> PriorityConfig::priority_of(std::string_view node_group) const {
  for (const Entry& e : entries) {  // highest first
    for (const std::regex& re : e.regexes) {
      if (std::regex_search(node_group.begin(), node_group.end(), re)) return e.priority;
    }
  }
  return std::nullopt;
}

std::vector<Option> Priority::best_options(std::vector<Option> options, Warnings& w) {
  if (!config_.ok()) {
    w.add("priority expander: " + config_.error().message + "; all options kept");
    return options;
  }
  if (config_->entries.empty()) {
    w.add("priority expander: the priority config is empty; all options kept");
    return options;
  }
  std::vector<std::optional<int64_t>> prio;
  std::optional<int64_t> best;
  for (const Option& o : options) {
    prio.push_back(config_->priority_of(o.node_group));
    if (!prio.back()) {
      w.add("priority expander: node group " + o.node_group + " matches no priority");
    } else if (!best || *prio.back() > *best) {
      best = prio.back();
    }
  }
  if (!best) {
    w.add("priority expander: no node group matches the priority config; all options kept");
    return options;
  }
  std::vector<Option> out;
  for (size_t i = 0; i < options.size(); ++i) {
    if (prio[i] == best) out.push_back(std::move(options[i]));
  }
  return out;
}

// ---- price ----

double PodPricing::pod_price(double milli_cpu, double memory_bytes) const {
  return milli_cpu / 1000.0 * cpu_per_core +
         memory_bytes / (1024.0 * 1024.0 * 1024.0) * memory_per_gib;
}

int64_t Price::preferred_cpu(int64_t n) {
  if (n <= 2) return 1;
  if (n <= 6) return 2;
  if (n <= 20) return 4;
  if (n <= 60) return 8;
  if (n <= 200) return 16;
  return 32;
}

bool Price::node_has_gpu(const model::Node& node) const {
  if (!config_.gpu_label.empty() && node.metadata.labels.count(config_.gpu_label) > 0) {
    return true;
  }
  for (const std::string& r : config_.gpu_resources) {
    auto it = node.status.allocatable.find(r);
    if (it != node.status.allocatable.end() && it->second.sign() > 0) return true;
  }
  return false;
}

std::optional<double> Price::score(const Option& o) const {
  if (!o.template_node || !o.node_price) return std::nullopt;
  const double stab = config_.pricing.pod_price(500, 500.0 * 1024 * 1024);
  PodTotals req = sum_requests(o.pods);
  // CA prices each pod on its own; the price is linear, so the sum prices the same.
  const double pods_price = config_.pricing.pod_price(req.milli_cpu, req.memory);
  const double nodes_price = *o.node_price * static_cast<double>(o.node_count);
  double suppressed = 1000;
  if (!node_has_gpu(*o.template_node)) {
    double node_cpu = capacity_of(*o.template_node, framework::kResourceCpu, true) / 1000.0;
    double pref = static_cast<double>(preferred_cpu(config_.cluster_node_count));
    if (node_cpu <= 0) return std::nullopt;  // CA would divide by zero
    double unfitness = std::max(pref / node_cpu, node_cpu / pref);
    suppressed =
        (unfitness - 1) * (1 - std::tanh(static_cast<double>(o.node_count - 1) / 15.0)) + 1;
  }
  double s = suppressed * (nodes_price + stab) / (pods_price + stab);
  if (!o.node_group_exists) s *= 2;
  return s;
}

std::vector<Option> Price::best_options(std::vector<Option> options, Warnings& w) {
  for (const Option& o : options) {
    if (!o.template_node || !o.node_price) {
      w.add("price expander: no template or price for node group " + o.node_group);
    }
  }
  std::vector<Option> out =
      keep_min(std::move(options), [this](const Option& o) { return score(o); });
  for (Option& o : out) o.similar_node_groups.clear();
  return out;
}

// ---- chain ----

namespace {

std::string score_text(std::string_view name, double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return std::string(name) + " score " + buf;
}

}  // namespace

std::optional<std::string> LeastWaste::describe(const Option& o) const {
  auto s = waste_score(o);
  if (!s) return std::nullopt;
  return score_text("least-waste", *s);
}

std::optional<std::string> Price::describe(const Option& o) const {
  auto s = score(o);
  if (!s) return "price: no score (no template or no node price)";
  return score_text("price", *s);
}

std::optional<std::string> Priority::describe(const Option& o) const {
  if (!config_.ok()) return std::nullopt;
  auto p = config_->priority_of(o.node_group);
  if (!p) return "priority: no match";
  return "priority " + std::to_string(*p);
}

std::optional<std::string> MostPods::describe(const Option& o) const {
  return "most-pods " + std::to_string(o.pods.size());
}

std::optional<std::string> LeastNodes::describe(const Option& o) const {
  return "least-nodes " + std::to_string(o.node_count);
}

std::string Chain::describe(const Option& option) const {
  std::string out;
  for (const auto& f : filters_) {
    if (auto d = f->describe(option)) out += (out.empty() ? "" : "; ") + *d;
  }
  return out;
}

Result<Chain> Chain::make(std::string_view spec, ChainConfig config) {
  std::vector<std::unique_ptr<Expander>> filters;
  std::set<std::string, std::less<>> seen;
  size_t pos = 0;
  while (true) {
    size_t comma = spec.find(',', pos);
    std::string_view name =
        spec.substr(pos, comma == std::string_view::npos ? spec.npos : comma - pos);
    if (name.empty()) return make_error("expander: empty name in \"" + std::string(spec) + "\"");
    if (!seen.insert(std::string(name)).second) {
      return make_error("expander: " + std::string(name) + " is listed twice");
    }
    if (!filters.empty() && filters.back()->is_strategy()) {
      return make_error("expander: nothing may follow " + std::string(filters.back()->name()));
    }
    if (name == "least-waste") {
      filters.push_back(std::make_unique<LeastWaste>());
    } else if (name == "most-pods") {
      filters.push_back(std::make_unique<MostPods>());
    } else if (name == "least-nodes") {
      filters.push_back(std::make_unique<LeastNodes>());
    } else if (name == "random") {
      filters.push_back(std::make_unique<Random>(config.seed));
    } else if (name == "priority") {
      filters.push_back(std::make_unique<Priority>(config.priority));
    } else if (name == "price") {
      filters.push_back(std::make_unique<Price>(config.price));
    } else {
      // CA's names; its grpc expander calls a service of the user's, which a plan cannot.
      return make_error("expander: unknown expander \"" + std::string(name) +
                        "\"; the expanders are least-waste, most-pods, least-nodes, price, "
                        "priority and random, chained with commas (CA's grpc is not supported)");
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return Chain(std::move(filters), config.seed);
}

std::optional<Option> Chain::best_option(std::vector<Option> options, Warnings& w) {
  for (const auto& f : filters_) {
    options = f->best_options(std::move(options), w);
    if (options.size() == 1) return std::move(options.front());
  }
  options = fallback_.best_options(std::move(options), w);
  if (options.empty()) return std::nullopt;
  return std::move(options.front());
}

}  // namespace hamisim::planner::expander

#pragma once
// Recognising Cluster Autoscaler's template nodes and the node group they stand for, and
// normalizing a registration sampled from a real node to describe a fresh one.

#include <optional>
#include <string>
#include <string_view>

#include "fit/description.h"
#include "model/objects.h"

namespace hamisim::profile {

inline constexpr std::string_view kTemplateNodeLabel =
    "cluster-autoscaler.kubernetes.io/template-node";

// The node group id in a CA template name: `template-node-for-<id>-<n>`, optionally followed
// by `-e-<k>` (estimator copies) or `-upcoming-<k>` (upcoming nodes).
std::optional<std::string> node_group_from_template_name(std::string_view name);

// A template: CA's template label, or a name in CA's template scheme (spec §7.2).
bool is_template_node(const model::Node& node);

// A copy of a template that CA's simulation puts pods on: a template node whose name ends in
// `-e-<k>` (a binpacking estimate's new node) or `-upcoming-<k>` (a node on its way). The
// template itself is not a copy: CA asks about it once per pod group, each time empty (its
// feasibility check adds it to a fork of the snapshot and reverts it). Allocates nothing.
bool has_template_copy_suffix(std::string_view name);
bool is_template_copy(const model::Node& node);

// A registration sampled from a real node, made to describe a fresh node: every device
// healthy, per-GPU cordon ignored (spec §7.2).
void normalize_sample(fit::DeviceDescription& description);

}  // namespace hamisim::profile

#include "profile/reconcile.h"

#include <fmt/format.h>

#include <algorithm>

#include "fit/device_compare.h"
#include "profile/template_node.h"

namespace hamisim::profile {
namespace {

bool profile_selects(const DeviceProfile& p, const model::Node& node) {
  const std::string group = node_group_of(node, p.match);
  if (!group.empty() && std::find(p.match.node_groups.begin(), p.match.node_groups.end(), group) !=
                            p.match.node_groups.end()) {
    return true;
  }
  if (p.match.labels.empty()) return false;
  for (const auto& [key, value] : p.match.labels) {
    const std::string* v = model::find_label(node.metadata, key);
    if (!v || *v != value) return false;
  }
  return true;
}

}  // namespace

std::string node_group_of(const model::Node& node, const ProfileMatch& match) {
  if (auto id = node_group_from_template_name(node.metadata.name)) return *id;
  if (!match.node_group_label.empty()) {
    if (const std::string* v = model::find_label(node.metadata, match.node_group_label)) return *v;
  }
  return {};
}

Result<const DeviceProfile*> profile_for_node(const DeviceProfiles& profiles,
                                              const model::Node& node) {
  if (const std::string* named = model::find_annotation(node.metadata, kDeviceProfileAnnotation)) {
    if (const DeviceProfile* p = profiles.find(*named)) return p;
    return make_error(std::string(kDeviceProfileAnnotation) + " names unknown profile \"" + *named +
                      "\"");
  }
  const DeviceProfile* found = nullptr;
  for (const auto& p : profiles.profiles) {
    if (!profile_selects(p, node)) continue;
    if (found) {
      return make_error("profiles \"" + found->name + "\" and \"" + p.name +
                        "\" both match node \"" + node.metadata.name + "\"");
    }
    found = &p;
  }
  return found;
}

std::vector<std::string> compare_with_profile(const DeviceProfile& profile,
                                              const std::vector<device::DeviceInfo>& observed) {
  return fit::device_differences(profile.description.devices, observed, "profile", "node");
}

bool ReconcileReport::any_mismatch() const {
  return std::any_of(checks.begin(), checks.end(),
                     [](const NodeCheck& c) { return !c.mismatches.empty() || !c.error.empty(); });
}

ReconcileReport reconcile(const DeviceProfiles& profiles, const std::vector<model::Node>& nodes,
                          const device::DeviceRegistry& registry,
                          const std::vector<dra::ResourceSlice>* slices) {
  ReconcileReport report;
  for (const model::Node& node : nodes) {
    if (is_template_node(node)) continue;
    auto profile = profile_for_node(profiles, node);
    if (profile && !*profile) continue;
    NodeCheck check;
    check.node = node.metadata.name;
    if (!profile) {
      check.error = profile.error().message;
      report.checks.push_back(std::move(check));
      continue;
    }
    const DeviceProfile& p = **profile;
    check.profile = p.name;
    check.node_group = node_group_of(node, p.match);
    if (!p.annotations.empty() || !p.capacity.empty()) {
      fit::DescriptionResult inv = fit::read_registered_description(node, registry);
      if (inv.state != fit::DescriptionResult::State::kOk) {
        check.error = "cannot read the node's registration: " + inv.message;
      } else {
        check.mismatches = compare_with_profile(p, inv.description.devices);
      }
    }
    if (slices && !p.dra_slices.empty()) {
      std::vector<dra::ResourceSlice> own;
      for (const auto& s : *slices) {
        if (s.scope.node_name == node.metadata.name) own.push_back(s);
      }
      check.dra = dra::compare_with_template(dra_slices_for_node(p, node.metadata.name), own);
      for (const auto& d : check.dra) {
        if (!d.any()) continue;
        check.mismatches.push_back(fmt::format(
            "DRA {}: {} missing, {} extra, {} mismatch (device groups by attribute names and "
            "count)",
            d.driver, d.missing, d.extra, d.mismatch));
      }
    }
    report.checks.push_back(std::move(check));
  }
  return report;
}

ProfileObservations observe(const DeviceProfiles& profiles, const std::vector<model::Node>& nodes,
                            const device::DeviceRegistry& registry) {
  ProfileObservations out;
  std::map<std::string, const model::Node*, std::less<>> newest;
  const ReconcileReport report = reconcile(profiles, nodes, registry);
  for (const NodeCheck& c : report.checks) {
    if (c.profile.empty()) continue;
    ProfileObservation& o = out[c.profile];
    if (!c.mismatches.empty() || !c.error.empty()) o.mismatching_nodes.push_back(c.node);
  }
  for (const model::Node& node : nodes) {
    if (is_template_node(node)) continue;
    auto profile = profile_for_node(profiles, node);
    if (!profile || !*profile) continue;
    const model::Node*& best = newest[(*profile)->name];
    auto key = [](const model::Node* n) {
      return std::make_pair(n->metadata.creation_timestamp, n->metadata.name);
    };
    fit::DescriptionResult inv = fit::read_registered_description(node, registry);
    if (inv.state != fit::DescriptionResult::State::kOk) continue;
    if (!best || key(&node) > key(best)) {
      best = &node;
      normalize_sample(inv.description);
      ProfileObservation& o = out[(*profile)->name];
      o.newest_registration = std::move(inv.description.devices);
      o.newest_node = node.metadata.name;
    }
  }
  return out;
}

}  // namespace hamisim::profile

#pragma once
// Comparing what real nodes registered with the profiles that describe their group (spec
// §7.4), and what simulation should do about it afterwards.

#include <map>
#include <string>
#include <vector>

#include "dra/template_compare.h"
#include "profile/device_profiles.h"

namespace hamisim::profile {

// Which profile describes a node: the explicit annotation, else the one whose match selects
// it. Two matching profiles are an error naming both. nullptr when none matches.
Result<const DeviceProfile*> profile_for_node(const DeviceProfiles& profiles,
                                              const model::Node& node);

// The node group id of a node: from CA's template name, else from the profile's
// nodeGroupLabel when the node carries it.
std::string node_group_of(const model::Node& node, const ProfileMatch& match);

// Differences between a profile and a registration, one line per field ("devmem: profile
// 81920 x8, node 40960 x8"); empty when they agree (fit::device_differences, the one rule).
std::vector<std::string> compare_with_profile(const DeviceProfile& profile,
                                              const std::vector<device::DeviceInfo>& observed);

struct NodeCheck {
  std::string node;
  std::string profile;
  // The node's group id (node_group_of with its profile's match); empty when the node does not
  // tell (its profile selects it by labels, without nodeGroupLabel).
  std::string node_group;
  std::vector<std::string> mismatches;  // empty = matches
  std::string error;                    // the node's registration could not be read
  // Under DRA (a profile with `dra:`): the node's slices against the profile's, per driver,
  // in Cluster Autoscaler's categories. Differences are also lines of `mismatches`.
  std::vector<dra::DriverDifference> dra;
};

struct ReconcileReport {
  std::vector<NodeCheck> checks;  // every real node some profile describes, in input order
  bool any_mismatch() const;
};

// `slices`: the cluster's ResourceSlices, when known; a node described by a profile with a
// DRA form is then also compared with it (dra/template_compare.h). A profile with only a DRA
// form promises no registration, so none is compared.
ReconcileReport reconcile(const DeviceProfiles& profiles, const std::vector<model::Node>& nodes,
                          const device::DeviceRegistry& registry,
                          const std::vector<dra::ResourceSlice>* slices = nullptr);

// What simulation learned from reconciliation, per profile.
struct ProfileObservation {
  std::vector<std::string> mismatching_nodes;
  // The newest (creationTimestamp, then name) matching node's registration, normalized.
  std::vector<device::DeviceInfo> newest_registration;
  std::string newest_node;
  friend bool operator==(const ProfileObservation&, const ProfileObservation&) = default;
};
using ProfileObservations = std::map<std::string, ProfileObservation, std::less<>>;

ProfileObservations observe(const DeviceProfiles& profiles, const std::vector<model::Node>& nodes,
                            const device::DeviceRegistry& registry);

}  // namespace hamisim::profile

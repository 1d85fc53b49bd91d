#include "engine/describer.h"

#include "model/text.h"
#include "profile/template_node.h"

namespace hamisim::engine {
namespace {

using model::join;
using profile::DeviceProfile;
using profile::OnMismatch;
using profile::ProfileObservation;
using profile::ProfileObservations;

// A template described by its profile, under the reconciler's observations.
fit::DescriptionResult describe_with_profile(const DeviceProfile& profile,
                                             const fit::DescriptionResult& registered,
                                             const ProfileObservations* observed) {
  using State = fit::DescriptionResult::State;
  fit::DescriptionResult r;
  r.state = State::kOk;
  std::vector<std::string> notes;
  const ProfileObservation* obs = nullptr;
  if (observed) {
    if (auto it = observed->find(profile.name); it != observed->end()) obs = &it->second;
  }
  if (obs && !obs->mismatching_nodes.empty()) {
    const std::string who = std::to_string(obs->mismatching_nodes.size()) +
                            " node(s) of the group (" + join(obs->mismatching_nodes) +
                            ") registered devices that differ from profile \"" + profile.name +
                            "\"";
    switch (profile.on_mismatch) {
      case OnMismatch::kReject:
        r.state = State::kRejected;
        r.message = who + " and its onMismatch is reject";
        r.description.source = fit::DeviceSource::kProfile;
        r.description.profile = profile.name;
        return r;
      case OnMismatch::kPreferObserved:
        if (!obs->newest_registration.empty()) {
          r.description.devices = obs->newest_registration;
          r.description.source = fit::DeviceSource::kSample;
          r.description.profile = profile.name;
          r.description.notes.push_back(who + "; using the registration of node " +
                                        obs->newest_node + " (onMismatch: preferObserved)");
          return r;
        }
        notes.push_back(who + "; no registration observed, using the profile");
        break;
      case OnMismatch::kWarn:
        notes.push_back(who);
        break;
    }
  }
  r.description = profile.description;
  if (registered.state == State::kOk) {
    // A warm template sampled from a real node: the profile wins, the divergence is reported.
    for (const std::string& diff : compare_with_profile(profile, registered.description.devices)) {
      notes.push_back("sample diverges from profile \"" + profile.name + "\": " + diff);
    }
  }
  r.description.notes = std::move(notes);
  return r;
}

}  // namespace

Describer::Describer(const device::DeviceRegistry& registry,
                     std::shared_ptr<const profile::DeviceProfiles> profiles)
    : registry_(registry), profiles_(std::move(profiles)) {}

std::shared_ptr<const fit::DescriptionResult> Describer::describe(
    const fit::KeyedNode& keyed) const {
  return keyed.described.get(id_, generation_.load(std::memory_order_acquire),
                             [&] { return describe(keyed.node, keyed.key()); });
}

void Describer::set_observations(std::shared_ptr<const ProfileObservations> observations) {
  std::lock_guard lock(mu_);
  // The reconciler observes the same again and again: descriptions made under it stay good.
  const bool same = observations_ && observations && *observations_ == *observations;
  observations_ = std::move(observations);
  if (same) return;
  generation_.fetch_add(1, std::memory_order_release);
}

Describer::Observed Describer::observed() const {
  std::lock_guard lock(mu_);
  return {observations_, generation_.load(std::memory_order_relaxed)};
}

std::shared_ptr<const fit::DescriptionResult> Describer::describe(
    const model::Node& node, const fit::DescriptionCache::Key& key) const {
  using State = fit::DescriptionResult::State;
  const bool is_template = profile::is_template_node(node);
  auto registered = cache_.get(key, "registered",
                               [&] { return fit::read_registered_description(node, registry_); });

  // A real node that registered its devices is described by what it registered: health and
  // cordon count there, as in the live path (spec §7.2). Profiles describe templates and
  // nodes whose device plugin has not registered yet.
  if (!is_template && registered->state == State::kOk) return registered;

  auto profile = profile::profile_for_node(*profiles_, node);
  if (!profile) {
    auto r = std::make_shared<fit::DescriptionResult>();
    r->state = State::kMalformed;
    r->message = profile.error().message;
    return r;
  }
  if (const DeviceProfile* p = *profile) {
    // The description depends on the profile, the observations and the registration (a
    // diverging sample is noted): all three are in the key.
    const Observed obs = observed();
    const std::string tag = "profile/" + std::to_string(obs.generation) + "/" + p->name;
    return cache_.get(
        key, tag, [&] { return describe_with_profile(*p, *registered, obs.observations.get()); });
  }
  if (registered->state == State::kOk && is_template) {
    return cache_.get(key, "sample", [&] {
      fit::DescriptionResult sample = *registered;
      profile::normalize_sample(sample.description);
      return sample;
    });
  }
  return registered;
}

}  // namespace hamisim::engine

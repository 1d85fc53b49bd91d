#include "planner/framework/taints.h"

#include <algorithm>

namespace hamisim::planner::framework {

bool tolerates(const model::Toleration& toleration, const model::Taint& taint) {
  if (!toleration.effect.empty() && toleration.effect != taint.effect) return false;
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  if (toleration.op.empty() || toleration.op == "Equal") return toleration.value == taint.value;
  return toleration.op == "Exists";
}

bool tolerations_tolerate_taint(const std::vector<model::Toleration>& tolerations,
                                const model::Taint& taint) {
  return std::any_of(tolerations.begin(), tolerations.end(),
                     [&](const model::Toleration& t) { return tolerates(t, taint); });
}

const model::Taint* find_untolerated_do_not_schedule_taint(
    const std::vector<model::Taint>& taints, const std::vector<model::Toleration>& tolerations) {
  for (const auto& taint : taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (!tolerations_tolerate_taint(tolerations, taint)) return &taint;
  }
  return nullptr;
}

}  // namespace hamisim::planner::framework

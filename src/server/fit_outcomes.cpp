#include "server/fit_outcomes.h"

#include "device/allocation.h"

namespace hamisim::server {

FitOutcomes::FitOutcomes(MetricsRegistry& metrics)
    : family_(metrics.counter("hamisim_fit_outcomes_total",
                              "Per-node fit outcomes of filter requests, by class and reason",
                              {"route", "class", "reason"})) {}

void FitOutcomes::record(std::string_view route, fit::FitClass fit_class, std::string_view reason) {
  const std::string_view cls = fit::to_string(fit_class);
  const auto names = device::parse_reasons(reason);
  if (names.empty()) {
    const bool bare = fit_class == fit::FitClass::kInsufficientCapacity ||
                      fit_class == fit::FitClass::kConstraintMismatch;
    family_.labels({route, cls, bare ? reason : std::string_view()}).inc();
    return;
  }
  for (const auto& [name, count] : names) family_.labels({route, cls, name}).inc();
}

}  // namespace hamisim::server

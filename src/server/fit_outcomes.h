#pragma once
// hamisim_fit_outcomes_total: the per-node fit outcomes of filter requests, by route, class and
// reason name. The simulation routes and the live /filter count into the one family.

#include <string_view>

#include "fit/node_fit.h"
#include "server/metrics.h"

namespace hamisim::server {

class FitOutcomes {
 public:
  explicit FitOutcomes(MetricsRegistry& metrics);

  // Labels by reason *name* ("CardInsufficientMemory"), never the counted text, so the number
  // of series stays bounded; a reason naming several counts once per name.
  void record(std::string_view route, fit::FitClass fit_class, std::string_view reason);

 private:
  CounterFamily& family_;
};

}  // namespace hamisim::server

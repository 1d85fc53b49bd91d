#include "planner/scaleup/plan_input.h"

#include <iterator>

#include "dra/decode.h"

namespace hamisim::planner::scaleup {
namespace {

template <class T>
void append_moved(std::vector<T>& to, std::vector<T>& from) {
  if (to.empty()) {
    to = std::move(from);
    return;
  }
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

}  // namespace

Status PlanInputBuilder::add_cluster(model::ObjectSet objects) {
  if (Status s = dra::decode_objects(objects.dra_objects, dra_); !s) return s;
  append_moved(input_.nodes, objects.nodes);
  append_moved(input_.pods, objects.pods);
  append_moved(input_.quotas, objects.quotas);
  return ok_status();
}

PlanInput PlanInputBuilder::finish() && {
  input_.dra = framework::DraCluster::make_if_any(std::move(dra_));
  return std::move(input_);
}

}  // namespace hamisim::planner::scaleup

#pragma once
// hamisim's own account, with numbers, of why a pod's devices do not fit a node: what the
// container that failed asks for and the most a single device of the node has free ("asks 1
// NVIDIA GPU with 12000 MiB and 0% cores; most free on one GPU: 11441 of 11441 MiB and 100%
// cores (GPU 0); 2 of 2 GPUs have a free slot"; GPU n is the device's index in its
// registration, as HAMi numbers them). The plan shows it next to HAMi's reason
// (`2/2 CardInsufficientMemory`), which stays exactly HAMi's: the reasons kube-scheduler and
// Cluster Autoscaler see are not changed.
//
// Made with the in-process Fit (the engine, with per-device verdicts), whichever device stage
// decided, so a plan made through extenders says the same; for people, not the hot path.

#include <span>
#include <string>

#include "engine/engine.h"
#include "model/objects.h"

namespace hamisim::planner::scaleup {

// Empty when the in-process Fit lets the pod onto the node, when the node's devices are not
// described (HAMi's `node unregistered` says it all), or when the pod is invalid.
std::string device_rejection_detail(const engine::Engine& engine, const model::Pod& pod,
                                    const model::Node& node, std::span<const model::Pod> placed);

}  // namespace hamisim::planner::scaleup

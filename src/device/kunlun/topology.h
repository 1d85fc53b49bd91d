#pragma once
// The Kunlunxin 8-XPU machine model shared by the whole-card and vXPU backends (reference:
// hami-other-vendors.md B.9.0): two wings of four XPUs, cross-wing pairs 0-4 1-5 2-6 3-7, and
// HAMi's selector `graghSelect`, which works on *positions* in the policy-sorted device list
// (positions 0-3 form the left wing, 4-7 the right) but answers with device *indexes*.

#include <cstdint>
#include <span>
#include <vector>

#include "device/types.h"

namespace hamisim::device::kunlun {

// Chooses `nums` devices among `devices` (in the order Fit receives them) where `fits[i]`
// says whether devices[i] may be taken. Returns DeviceUsage::index values in HAMi's order,
// empty when no topology-valid selection exists. Like HAMi, a request for 8 on a list whose
// devices all fit answers the literal indexes 0..7, and positions beyond 7 are never picked.
std::vector<uint64_t> graph_select(std::span<DeviceUsage* const> devices,
                                   const std::vector<bool>& fits, int32_t nums);

// HAMi countbubble: how fragmented a set of busy indexes leaves the two wings (lower is
// better; an empty set counts 1).
int bubble(const std::vector<int64_t>& indexes);

// HAMi calcscore: the whole-card ScoreNode from the busy indexes before the pod and the
// indexes it is given (3000 when fragmentation drops by one, 2000 unchanged, 1000 one worse,
// 0 two worse, 1000 otherwise).
float fragmentation_score(const std::vector<int64_t>& previous,
                          const std::vector<int64_t>& current);

}  // namespace hamisim::device::kunlun

#pragma once
// HAMi's per-device Fit checks that several backends run word for word (reference:
// hami-other-vendors.md A.4 and A.10, hami-device-model.md §3): the reason names, and the
// slot, memory and core checks with the explanation `hamisim fit` prints for each. A check
// takes the backend's `fail(reason, detail)` callback (`detail` builds the explanation only
// when someone reads it) and returns false when the device fails. The explanations are
// hamisim's own (HAMi counts only the reason), worded per vendor as they always were.

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "device/backend.h"
#include "device/selection.h"
#include "device/types.h"

namespace hamisim::device::check {

// Reason names (hami-other-vendors.md A.10, hami-device-model.md §3).
inline constexpr Reason kCardNotHealth = Reason::kCardNotHealth;
inline constexpr Reason kCardTypeMismatch = Reason::kCardTypeMismatch;
inline constexpr Reason kCardUuidMismatch = Reason::kCardUuidMismatch;
inline constexpr Reason kCardTimeSlicingExhausted = Reason::kCardTimeSlicingExhausted;
inline constexpr Reason kExclusiveConflict = Reason::kExclusiveDeviceAllocateConflict;
inline constexpr Reason kResourceQuotaNotFit = Reason::kResourceQuotaNotFit;
inline constexpr Reason kCardInsufficientMemory = Reason::kCardInsufficientMemory;
inline constexpr Reason kCardInsufficientCore = Reason::kCardInsufficientCore;
inline constexpr Reason kCardComputeUnitsExhausted = Reason::kCardComputeUnitsExhausted;
inline constexpr Reason kNumaNotFit = Reason::kNumaNotFit;
inline constexpr Reason kAllocatedCardsInsufficientRequest =
    Reason::kAllocatedCardsInsufficientRequest;

// How the explanations name a device, its time slices and its cores' unit: NVIDIA's say "GPU"
// and percent, most other vendors' "device" and bare numbers.
struct Wording {
  const char* device;
  const char* slots;
  const char* core_unit;
};
inline constexpr Wording kDeviceWording{"device", "slots", ""};
inline constexpr Wording kGpuWording{"GPU", "slots", "%"};

// A Fit's record of failed checks: counts each reason and, when the caller explains
// (`hamisim fit`), keeps the device's verdict. The detail is a text or a function building it,
// called only then.
class Failures {
 public:
  Failures(FitOutcome& out, bool explain) : out_(out), explain_(explain) {}

  template <class Detail>
  void operator()(const DeviceUsage& d, Reason reason, Detail&& detail) const {
    ++out_.reasons[reason];
    if (!explain_) return;
    if constexpr (std::is_invocable_v<Detail>) {
      out_.verdicts.push_back(DeviceVerdict{d.id, std::string(reason_name(reason)), detail()});
    } else {
      out_.verdicts.push_back(DeviceVerdict{d.id, std::string(reason_name(reason)),
                                            std::string(std::forward<Detail>(detail))});
    }
  }
  void operator()(const DeviceUsage& d, Reason reason) const { (*this)(d, reason, std::string()); }
  // The `fail(reason, detail)` callback the checks below take, for device `d`.
  auto on(const DeviceUsage& d) const {
    return [this, &d](Reason reason, auto&& detail) { (*this)(d, reason, detail); };
  }

 private:
  FitOutcome& out_;
  bool explain_;
};

// The checks every HAMi Fit opens with, in HAMi's order: a healthy device, a request for this
// backend's type (`type_matches`: each vendor's own rule, computed by the caller), and a UUID
// the pod's selection allows (`uuids` null: the pod selects none). `type_detail` explains a
// type mismatch.
template <class Fail, class Detail = const char*>
bool selectable(const DeviceUsage& d, bool type_matches, const UuidSelection* uuids, Fail&& fail,
                Detail&& type_detail = "") {
  if (!d.health) {
    fail(kCardNotHealth, "");
    return false;
  }
  if (!type_matches) {
    fail(kCardTypeMismatch, std::forward<Detail>(type_detail));
    return false;
  }
  if (uuids && !uuids->allows(d.id)) {
    fail(kCardUuidMismatch, "");
    return false;
  }
  return true;
}

// Time slicing and the mutex policy: a free slot, and an idle device under "mutex".
template <class Fail>
bool slots_free(const DeviceUsage& d, bool is_mutex, const Wording& w, Fail&& fail) {
  if (d.count <= d.used) {
    fail(kCardTimeSlicingExhausted, [&] {
      return std::to_string(d.used) + " of " + std::to_string(d.count) + " " + w.slots + " in use";
    });
    return false;
  }
  if (is_mutex && d.used > 0) {
    fail(kExclusiveConflict, [&] { return std::string("mutex policy needs an idle ") + w.device; });
    return false;
  }
  return true;
}

// `memreq` MiB still free on the device.
template <class Fail>
bool memory_free(const DeviceUsage& d, int64_t memreq, Fail&& fail) {
  if (int64_t{d.totalmem} - d.usedmem < memreq) {
    fail(kCardInsufficientMemory, [&] {
      return "needs " + std::to_string(memreq) + " MiB, " + std::to_string(d.totalmem - d.usedmem) +
             " of " + std::to_string(d.totalmem) + " MiB free";
    });
    return false;
  }
  return true;
}

// The core checks against `total_core` (the device's cores, or Ascend soft split's 100): enough
// free, a whole-device request (100 of 100) only on an idle device, and a request without cores
// not on a device whose cores are all taken.
template <class Fail>
bool cores_free(const DeviceUsage& d, int64_t total_core, int32_t coresreq, const Wording& w,
                Fail&& fail) {
  if (total_core - d.usedcores < coresreq) {
    fail(kCardInsufficientCore, [&] {
      return "needs " + std::to_string(coresreq) + w.core_unit + " cores, " +
             std::to_string(total_core - d.usedcores) + w.core_unit + " free";
    });
    return false;
  }
  if (total_core == 100 && coresreq == 100 && d.used > 0) {
    fail(kExclusiveConflict, [&] {
      return std::string("a whole-") + w.device + " request needs an idle " + w.device + ", " +
             std::to_string(d.used) + " task(s) already use it";
    });
    return false;
  }
  if (total_core != 0 && d.usedcores == total_core && coresreq == 0) {
    fail(kCardComputeUnitsExhausted, [] { return std::string(); });
    return false;
  }
  return true;
}

// What a Fit records of the device it takes: `d` under `type`, with the memory (MiB) and cores
// the container uses on it.
inline ContainerDevice taken(const DeviceUsage& d, std::string type, int32_t usedmem = 0,
                             int32_t usedcores = 0) {
  ContainerDevice c;
  c.idx = static_cast<int32_t>(d.index);
  c.uuid = d.id;
  c.type = std::move(type);
  c.usedmem = usedmem;
  c.usedcores = usedcores;
  return c;
}

// Takes `chosen` while the request still wants devices (`nums` counts down); true once it has
// all it wants, with `out.fits` set.
inline bool take_device(FitOutcome& out, int32_t& nums, ContainerDevice chosen) {
  if (nums > 0) {
    --nums;
    out.devices.push_back(std::move(chosen));
  }
  if (nums != 0) return false;
  out.fits = true;
  return true;
}

// HAMi's end of a Fit that ran out of devices: those taken so far count as
// AllocatedCardsInsufficientRequest.
inline void count_insufficient(FitOutcome& out) {
  if (!out.devices.empty()) {
    out.reasons[kAllocatedCardsInsufficientRequest] = static_cast<int>(out.devices.size());
  }
}

}  // namespace hamisim::device::check

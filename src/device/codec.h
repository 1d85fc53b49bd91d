#pragma once
// Annotation codecs, byte-compatible with HAMi v2.10 (reference: hami-device-model.md §1, §4.5).
// Writers produce exactly what Go's encoding/json / HAMi's encoders produce; readers accept
// what Go accepts (case-insensitive keys, unknown keys ignored) and reject what Go rejects,
// returning an error that says what and where.

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "device/types.h"
#include "model/result.h"

namespace hamisim::device {

// Annotation keys (NVIDIA and shared ones).
inline constexpr std::string_view kNvidiaRegisterAnnotation = "hami.io/node-nvidia-register";
inline constexpr std::string_view kNvidiaScoreAnnotation = "hami.io/node-nvidia-score";
inline constexpr std::string_view kNvidiaHandshakeAnnotation = "hami.io/node-handshake";
inline constexpr std::string_view kDeviceCordonAnnotation = "hami.io/device-cordon";
inline constexpr std::string_view kNodeLockAnnotation = "hami.io/mutex.lock";
inline constexpr std::string_view kNvidiaToAllocateAnnotation = "hami.io/vgpu-devices-to-allocate";
inline constexpr std::string_view kNvidiaAllocatedAnnotation = "hami.io/vgpu-devices-allocated";
inline constexpr std::string_view kMigAllocationsAnnotation = "hami.io/vgpu-mig-allocations";
inline constexpr std::string_view kAssignedNodeAnnotation = "hami.io/vgpu-node";
inline constexpr std::string_view kAssignedTimeAnnotation = "hami.io/vgpu-time";
inline constexpr std::string_view kBindPhaseAnnotation = "hami.io/bind-phase";
inline constexpr std::string_view kBindTimeAnnotation = "hami.io/bind-time";

// --- hami.io/node-<vendor>-register (JSON DeviceInfo array) ---
// Go json.Unmarshal rules: `null` decodes to an empty list (the caller turns that into
// "no gpu found on node"); fractional / out-of-range integers or wrong types fail the whole
// value.
Result<std::vector<DeviceInfo>> decode_register_json(std::string_view json);
// Go json.Marshal of []DeviceInfo with omitempty on every DeviceInfo key (migProfiles keys
// without omitempty). device_vendor and pair_scores are never written; an empty list is `[]`.
std::string encode_register_json(const std::vector<DeviceInfo>& devices);

// --- hami.io/node-nvidia-score ---
Result<std::vector<DevicePairScore>> decode_pair_scores(std::string_view json);
std::string encode_pair_scores(const std::vector<DevicePairScore>& scores);

// --- hami.io/device-cordon: comma list, items trimmed, blanks ignored ---
std::set<std::string, std::less<>> parse_cordon(std::string_view value);

// --- legacy colon format (NVIDIA <= v2.7, Hygon, Iluvatar) ---
Result<std::vector<DeviceInfo>> decode_legacy_devices(std::string_view value);
std::string encode_legacy_devices(const std::vector<DeviceInfo>& devices);

// --- pod allocation string (hami.io/vgpu-devices-allocated / -to-allocate) ---
// Decoding keeps empty segments, including the one after the final ';' (HAMi does); errors
// carry HAMi's text (the missing-fields message, or Go's strconv.NumError for the integers).
Result<PodSingleDevice> decode_pod_devices(std::string_view value);
Result<ContainerDevices> decode_container_devices(std::string_view value);
// One ';'-terminated segment per container, every device ':'-terminated.
std::string encode_pod_devices(const PodSingleDevice& devices);
std::string encode_container_devices(const ContainerDevices& devices);

// --- hami.io/vgpu-mig-allocations ---
// Empty string = no allocations. Validates as HAMi's DecodeMigAllocations does.
Result<std::vector<MigAllocation>> decode_mig_allocations(std::string_view json);
// An empty list encodes to "" (HAMi writes no annotation then).
std::string encode_mig_allocations(const std::vector<MigAllocation>& allocations);

}  // namespace hamisim::device

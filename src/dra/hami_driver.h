#pragma once
// The names HAMi's DRA mode uses (../shared/reference/dra.md §4.1, §4.2): the driver
// HAMi's k8s-dra-driver registers (also the name of its DeviceClass), the `type` attribute of
// its GPU devices, and the request HAMi-DRA's webhook writes into each claim it makes.

#include <string_view>

namespace hamisim::dra {

inline constexpr std::string_view kHamiDriver = "hami-core-gpu.project-hami.io";
inline constexpr std::string_view kHamiDeviceClass = kHamiDriver;
inline constexpr std::string_view kHamiDeviceType = "hami-gpu";
inline constexpr std::string_view kHamiRequest = "gpu";

}  // namespace hamisim::dra

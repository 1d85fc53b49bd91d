#pragma once
// How doctor's reports write a duration in milliseconds: "12.5 ms".

#include <cstdio>
#include <string>

namespace hamisim::doctor {

inline std::string format_ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", ms);
  return buf;
}

}  // namespace hamisim::doctor

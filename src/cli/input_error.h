#pragma once
// How every command reports input it cannot use: `hamisim <command>: <message>` on stderr and
// exit status 2.

#include <cstdio>
#include <string>
#include <string_view>

namespace hamisim::cli {

inline int input_error(std::string_view command, const std::string& message) {
  std::fprintf(stderr, "hamisim %.*s: %s\n", static_cast<int>(command.size()), command.data(),
               message.c_str());
  return 2;
}

}  // namespace hamisim::cli

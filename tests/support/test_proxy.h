#pragma once
// An HTTP proxy on loopback for client tests: every connection goes to one upstream port,
// whatever host the client asked for. CONNECT requests get a tunnel; absolute-form requests
// are relayed as they are. The first request head of each connection is recorded.

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "loopback_listener.h"

namespace hamisim::testing {

class TestProxy {
 public:
  explicit TestProxy(uint16_t upstream);

  uint16_t port() const { return listener_.port(); }
  std::vector<std::string> heads() const;  // the first request head of each connection

 private:
  void serve(int client);

  uint16_t upstream_;
  mutable std::mutex mu_;
  std::vector<std::string> heads_;
  LoopbackListener listener_;  // last: stops before the members its threads use
};

}  // namespace hamisim::testing

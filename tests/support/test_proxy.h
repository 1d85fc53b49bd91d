#pragma once
// An HTTP proxy on loopback for client tests: every connection goes to one upstream port,
// whatever host the client asked for. CONNECT requests get a tunnel; absolute-form requests
// are relayed as they are. The first request head of each connection is recorded.

#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hamisim::testing {

class TestProxy {
 public:
  explicit TestProxy(uint16_t upstream);
  ~TestProxy();
  TestProxy(const TestProxy&) = delete;
  TestProxy& operator=(const TestProxy&) = delete;

  uint16_t port() const { return port_; }
  std::vector<std::string> heads() const;  // the first request head of each connection

 private:
  void accept_loop();
  void serve(int client);
  void finish(int a, int b);

  uint16_t upstream_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::thread accept_thread_;
  mutable std::mutex mu_;
  bool stopping_ = false;
  std::vector<int> open_;
  std::vector<std::thread> threads_;
  std::vector<std::string> heads_;
};

}  // namespace hamisim::testing

#pragma once
// The accepting half of a test server: listens on 127.0.0.1 (an ephemeral port) and serves
// each connection on a thread of its own. The destructor shuts every tracked connection down
// (so blocked reads return), then joins the threads.

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace hamisim::testing {

class LoopbackListener {
 public:
  // Called with the connected descriptor and its number (1 for the first accepted); the
  // listener closes the descriptor when `serve` returns.
  using Serve = std::function<void(int fd, int connection)>;
  explicit LoopbackListener(Serve serve);
  ~LoopbackListener();
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;

  uint16_t port() const { return port_; }
  int connections() const { return connections_.load(); }
  bool stopping() const { return stopping_.load(); }

  // Another descriptor a connection uses (an upstream socket): shut down with the others.
  void track(int fd);
  void close_tracked(int fd);

 private:
  void accept_loop();

  Serve serve_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<int> connections_{0};
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::vector<int> open_;
  std::vector<std::thread> threads_;
  std::thread accept_thread_;
};

}  // namespace hamisim::testing

#pragma once
// A plain HTTP/1.1 server on loopback whose answers are scripted byte for byte, for the
// transport's tests: it records every request (head and body, by Content-Length), answers
// with whatever the script returns (any status line, headers, a partial or chunked body),
// may wait first, and may close the connection after answering or instead of answering.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hamisim::http::testing {

struct SeenRequest {
  std::string head;  // request line and headers, without the blank line
  std::string body;
  int connection = 0;  // 1 for the first connection accepted, and so on
};

struct Reply {
  std::string bytes;  // written as they are; empty: nothing is written
  std::chrono::milliseconds delay{0};
  bool close = false;  // close the connection after writing
};

class ScriptedServer {
 public:
  using Script = std::function<Reply(const SeenRequest&)>;
  explicit ScriptedServer(Script script);
  ~ScriptedServer();
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  uint16_t port() const { return port_; }
  std::vector<SeenRequest> requests() const;
  int connections() const { return connections_.load(); }

 private:
  void accept_loop();
  void serve(int fd, int connection);
  bool wait(std::chrono::milliseconds delay) const;  // false when stopping

  Script script_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<int> connections_{0};
  std::atomic<bool> stopping_{false};
  std::thread accept_thread_;
  mutable std::mutex mu_;
  std::vector<int> open_;
  std::vector<std::thread> threads_;
  std::vector<SeenRequest> requests_;
};

// "HTTP/1.1 <status> <reason>" with Content-Length and `body`.
std::string response(int status, const std::string& body, const std::string& extra_headers = {});

}  // namespace hamisim::http::testing

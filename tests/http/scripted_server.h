#pragma once
// A plain HTTP/1.1 server on loopback whose answers are scripted byte for byte, for the
// transport's tests: it records every request (head and body, by Content-Length), answers
// with whatever the script returns (any status line, headers, a partial or chunked body),
// may wait first, and may close the connection after answering or instead of answering.

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "loopback_listener.h"

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

  uint16_t port() const { return listener_.port(); }
  std::vector<SeenRequest> requests() const;
  int connections() const { return listener_.connections(); }

 private:
  void serve(int fd, int connection);
  bool wait(std::chrono::milliseconds delay) const;  // false when stopping

  Script script_;
  mutable std::mutex mu_;
  std::vector<SeenRequest> requests_;
  hamisim::testing::LoopbackListener listener_;  // last: stops before what its threads use
};

// "HTTP/1.1 <status> <reason>" with Content-Length and `body`.
std::string response(int status, const std::string& body, const std::string& extra_headers = {});

}  // namespace hamisim::http::testing

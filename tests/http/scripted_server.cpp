#include "scripted_server.h"

#include <unistd.h>

#include <cctype>
#include <thread>

namespace hamisim::http::testing {

namespace {

// Content-Length of a request head, 0 when absent.
size_t content_length(const std::string& head) {
  std::string lower;
  for (char c : head) lower += char(std::tolower(static_cast<unsigned char>(c)));
  const size_t at = lower.find("\r\ncontent-length:");
  if (at == std::string::npos) return 0;
  return std::stoul(head.substr(at + 17));
}

}  // namespace

std::string response(int status, const std::string& body, const std::string& extra_headers) {
  return "HTTP/1.1 " + std::to_string(status) +
         " Scripted\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra_headers +
         "\r\n" + body;
}

ScriptedServer::ScriptedServer(Script script)
    : script_(std::move(script)),
      listener_([this](int fd, int connection) { serve(fd, connection); }) {}

std::vector<SeenRequest> ScriptedServer::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

bool ScriptedServer::wait(std::chrono::milliseconds delay) const {
  const auto until = std::chrono::steady_clock::now() + delay;
  while (std::chrono::steady_clock::now() < until) {
    if (listener_.stopping()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return !listener_.stopping();
}

void ScriptedServer::serve(int fd, int connection) {
  std::string in;
  // Reads until `in` holds `size` bytes, or holds a request head when `size` is 0.
  auto fill = [&](size_t size) {
    char buf[16384];
    while (size == 0 ? in.find("\r\n\r\n") == std::string::npos : in.size() < size) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) return false;
      in.append(buf, size_t(n));
    }
    return true;
  };
  while (fill(0)) {
    const size_t end = in.find("\r\n\r\n");
    SeenRequest seen;
    seen.head = in.substr(0, end);
    seen.connection = connection;
    const size_t length = content_length(seen.head);
    if (!fill(end + 4 + length)) return;
    seen.body = in.substr(end + 4, length);
    in.erase(0, end + 4 + length);
    {
      std::lock_guard lock(mu_);
      requests_.push_back(seen);
    }
    const Reply reply = script_(seen);
    if (!wait(reply.delay)) return;
    if (!reply.bytes.empty() &&
        ::write(fd, reply.bytes.data(), reply.bytes.size()) != ssize_t(reply.bytes.size())) {
      return;
    }
    if (reply.close) return;
  }
}

}  // namespace hamisim::http::testing

#include "scripted_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <stdexcept>

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

ScriptedServer::ScriptedServer(Script script) : script_(std::move(script)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 16) != 0) {
    throw std::runtime_error("scripted server: cannot listen on loopback");
  }
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  accept_thread_ = std::thread([this] { accept_loop(); });
}

ScriptedServer::~ScriptedServer() {
  stopping_ = true;
  {
    std::lock_guard lock(mu_);
    for (int fd : open_) ::shutdown(fd, SHUT_RDWR);
  }
  ::shutdown(listen_fd_, SHUT_RDWR);
  accept_thread_.join();
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    threads = std::move(threads_);
  }
  for (auto& t : threads) t.join();
  ::close(listen_fd_);
}

std::vector<SeenRequest> ScriptedServer::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

void ScriptedServer::accept_loop() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    std::lock_guard lock(mu_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    open_.push_back(fd);
    const int connection = ++connections_;
    threads_.emplace_back([this, fd, connection] { serve(fd, connection); });
  }
}

bool ScriptedServer::wait(std::chrono::milliseconds delay) const {
  const auto until = std::chrono::steady_clock::now() + delay;
  while (std::chrono::steady_clock::now() < until) {
    if (stopping_) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return !stopping_;
}

void ScriptedServer::serve(int fd, int connection) {
  std::string in;
  char buf[16384];
  for (bool open = true; open;) {
    size_t end;
    while ((end = in.find("\r\n\r\n")) == std::string::npos) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) {
        open = false;
        break;
      }
      in.append(buf, size_t(n));
    }
    if (!open) break;
    SeenRequest seen;
    seen.head = in.substr(0, end);
    seen.connection = connection;
    const size_t length = content_length(seen.head);
    while (in.size() < end + 4 + length) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) {
        open = false;
        break;
      }
      in.append(buf, size_t(n));
    }
    if (!open) break;
    seen.body = in.substr(end + 4, length);
    in.erase(0, end + 4 + length);
    {
      std::lock_guard lock(mu_);
      requests_.push_back(seen);
    }
    const Reply reply = script_(seen);
    if (!wait(reply.delay)) break;
    if (!reply.bytes.empty() &&
        ::write(fd, reply.bytes.data(), reply.bytes.size()) != ssize_t(reply.bytes.size())) {
      break;
    }
    open = !reply.close;
  }
  std::lock_guard lock(mu_);
  std::erase(open_, fd);
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

}  // namespace hamisim::http::testing

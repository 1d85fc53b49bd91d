#include "loopback_listener.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace hamisim::testing {

LoopbackListener::LoopbackListener(Serve serve) : serve_(std::move(serve)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 16) != 0) {
    ::close(listen_fd_);
    throw std::runtime_error("loopback listener: cannot listen on 127.0.0.1");
  }
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  accept_thread_ = std::thread([this] { accept_loop(); });
}

LoopbackListener::~LoopbackListener() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
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

void LoopbackListener::track(int fd) {
  std::lock_guard lock(mu_);
  open_.push_back(fd);
  if (stopping_) ::shutdown(fd, SHUT_RDWR);
}

void LoopbackListener::close_tracked(int fd) {
  std::lock_guard lock(mu_);
  std::erase(open_, fd);
  ::close(fd);
}

void LoopbackListener::accept_loop() {
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
    threads_.emplace_back([this, fd, connection] {
      serve_(fd, connection);
      close_tracked(fd);
    });
  }
}

}  // namespace hamisim::testing

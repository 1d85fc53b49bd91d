#include "test_proxy.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace hamisim::testing {

TestProxy::TestProxy(uint16_t upstream) : upstream_(upstream) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(::listen(listen_fd_, 16), 0);
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  accept_thread_ = std::thread([this] { accept_loop(); });
}

TestProxy::~TestProxy() {
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

std::vector<std::string> TestProxy::heads() const {
  std::lock_guard lock(mu_);
  return heads_;
}

void TestProxy::accept_loop() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    std::lock_guard lock(mu_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    open_.push_back(fd);
    threads_.emplace_back([this, fd] { serve(fd); });
  }
}

void TestProxy::serve(int client) {
  std::string head;
  char buf[16384];
  while (head.find("\r\n\r\n") == std::string::npos && head.size() < 65536) {
    const ssize_t n = ::read(client, buf, sizeof buf);
    if (n <= 0) return finish(client, -1);
    head.append(buf, size_t(n));
  }
  const int upstream = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  {
    std::lock_guard lock(mu_);
    heads_.push_back(head.substr(0, head.find("\r\n\r\n")));
    open_.push_back(upstream);
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(upstream_);
  if (::connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return finish(client, upstream);
  }
  if (head.starts_with("CONNECT ")) {
    const std::string ok = "HTTP/1.1 200 Connection established\r\n\r\n";
    if (::write(client, ok.data(), ok.size()) < 0) return finish(client, upstream);
  } else if (::write(upstream, head.data(), head.size()) < 0) {
    return finish(client, upstream);
  }
  pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
  for (;;) {
    if (::poll(fds, 2, -1) < 0) break;
    bool done = false;
    for (int i = 0; i < 2 && !done; ++i) {
      if (fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      done = n <= 0 || ::write(fds[1 - i].fd, buf, size_t(n)) != n;
    }
    if (done) break;
  }
  finish(client, upstream);
}

void TestProxy::finish(int a, int b) {
  std::lock_guard lock(mu_);
  for (int fd : {a, b}) {
    if (fd < 0) continue;
    std::erase(open_, fd);
    ::close(fd);
  }
}

}  // namespace hamisim::testing

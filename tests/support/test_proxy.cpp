#include "test_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace hamisim::testing {

TestProxy::TestProxy(uint16_t upstream)
    : upstream_(upstream), listener_([this](int fd, int) { serve(fd); }) {}

std::vector<std::string> TestProxy::heads() const {
  std::lock_guard lock(mu_);
  return heads_;
}

void TestProxy::serve(int client) {
  std::string head;
  char buf[16384];
  while (head.find("\r\n\r\n") == std::string::npos && head.size() < 65536) {
    const ssize_t n = ::read(client, buf, sizeof buf);
    if (n <= 0) return;
    head.append(buf, size_t(n));
  }
  {
    std::lock_guard lock(mu_);
    heads_.push_back(head.substr(0, head.find("\r\n\r\n")));
  }
  const int upstream = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  listener_.track(upstream);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(upstream_);
  const bool relaying = [&] {
    if (::connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return false;
    if (head.starts_with("CONNECT ")) {
      const std::string ok = "HTTP/1.1 200 Connection established\r\n\r\n";
      return ::write(client, ok.data(), ok.size()) >= 0;
    }
    return ::write(upstream, head.data(), head.size()) >= 0;
  }();
  pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
  while (relaying) {
    if (::poll(fds, 2, -1) < 0) break;
    bool done = false;
    for (int i = 0; i < 2 && !done; ++i) {
      if (fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      done = n <= 0 || ::write(fds[1 - i].fd, buf, size_t(n)) != n;
    }
    if (done) break;
  }
  listener_.close_tracked(upstream);
}

}  // namespace hamisim::testing

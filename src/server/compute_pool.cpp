#include "server/compute_pool.h"

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include <spdlog/spdlog.h>

namespace hamisim::server {

ComputePool::ComputePool(int threads, int nice, std::string name)
    : nice_(std::clamp(nice, 0, 19)), name_(std::move(name)), work_(context_.get_executor()) {
  const int n = std::max(1, threads);
  threads_.reserve(size_t(n));
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { run(); });
}

ComputePool::~ComputePool() {
  join();
}

void ComputePool::join() {
  work_.reset();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void ComputePool::run() {
  pthread_setname_np(pthread_self(), name_.substr(0, 15).c_str());
  // Linux keeps a nice value per thread (PRIO_PROCESS with a thread id); lowering one's own
  // priority needs no privilege.
  if (nice_ > 0 && setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), nice_) != 0) {
    spdlog::debug("{}: could not lower the thread's priority", name_);
  }
  for (;;) {
    try {
      context_.run();
      return;
    } catch (const std::exception& e) {
      // The handlers posted here catch what they throw (HttpServer::Impl::call); keep the
      // thread whatever happens.
      spdlog::error("{}: unexpected exception: {}", name_, e.what());
    } catch (...) {
      spdlog::error("{}: unexpected exception", name_);
    }
  }
}

}  // namespace hamisim::server

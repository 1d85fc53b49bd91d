#pragma once
// Threads that compute answers apart from the threads that read, write and answer requests
// (private to hamisim_server_core). They run at a lower scheduling priority than the request
// threads, so that on a busy machine the live verbs and the probes get the CPU first: a
// simulation or a plan waits a little longer, kube-scheduler does not.

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

namespace hamisim::server {

class ComputePool {
 public:
  // `threads` threads (at least one), each named `name` (as `top -H` shows it, 15 characters
  // at most) and niced by `nice` (0-19) relative to the process.
  ComputePool(int threads, int nice, std::string name);
  ~ComputePool();  // join()
  ComputePool(const ComputePool&) = delete;
  ComputePool& operator=(const ComputePool&) = delete;

  // Where to post the work.
  boost::asio::io_context& context() { return context_; }
  // Lets the threads finish what is queued, then waits for them to exit.
  void join();

 private:
  void run();

  int nice_;
  std::string name_;
  boost::asio::io_context context_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  std::vector<std::thread> threads_;
};

}  // namespace hamisim::server

#pragma once
// Routing of the server (private to hamisim_server_core): the route table a listener answers
// from, and the in-flight slots that bound each auth group's (and heavy routes') concurrent
// requests. HttpServer::Impl::admit (routing.cpp) turns a request into its route or the answer
// that refuses it (404, 405, 403, 429).

#include <atomic>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/result.h"
#include "server/http_server.h"
#include "server/metrics.h"

namespace hamisim::server {

// The routes of one listener, by path.
struct RouteTable {
  std::vector<Route> routes;
  std::map<std::string, std::vector<size_t>, std::less<>> by_path;
  std::map<std::string, std::string, std::less<>> allow_header;  // path -> "GET, POST"

  // Checks the routes (method, path, handler, no method twice on a path) and indexes them by
  // path, with each path's Allow header.
  static Result<RouteTable> build(std::vector<Route> routes);

  // Metric label for a path: the route's own path, or "other" so that arbitrary request paths
  // never become label values.
  std::string_view label_for(std::string_view path) const {
    auto it = by_path.find(path);
    return it == by_path.end() ? std::string_view("other") : std::string_view(it->first);
  }
};
// One admitted request of a limited kind (an auth group, or heavy routes), held from the moment
// the request is read until its response is written, so that requests waiting for a thread
// count too. Movable, so the connection can hold it while a compute thread works.
class InflightSlot {
 public:
  InflightSlot() = default;
  InflightSlot(std::atomic<int>& counter, int limit, Gauge* gauge) : gauge_(gauge) {
    int prev = counter.fetch_add(1, std::memory_order_acq_rel);
    if (limit > 0 && prev >= limit) {
      counter.fetch_sub(1, std::memory_order_acq_rel);
      return;
    }
    counter_ = &counter;
    if (gauge_) gauge_->add(1);
  }
  InflightSlot(InflightSlot&& o) noexcept
      : counter_(std::exchange(o.counter_, nullptr)), gauge_(o.gauge_) {}
  InflightSlot& operator=(InflightSlot&& o) noexcept {
    if (this != &o) {
      release();
      counter_ = std::exchange(o.counter_, nullptr);
      gauge_ = o.gauge_;
    }
    return *this;
  }
  ~InflightSlot() { release(); }
  bool acquired() const { return counter_ != nullptr; }
  void release() {
    if (counter_ == nullptr) return;
    std::exchange(counter_, nullptr)->fetch_sub(1, std::memory_order_acq_rel);
    if (gauge_) gauge_->sub(1);
  }

 private:
  std::atomic<int>* counter_ = nullptr;  // null when not acquired or released
  Gauge* gauge_ = nullptr;
};

// The body bytes of admitted simulation requests, held like an InflightSlot: admission by work
// rather than by count (one 2.3 MB /filter-simulation costs what a hundred small ones do). A
// request is admitted while the bytes in flight plus its own stay within the limit, and always
// when nothing else is in flight, so no single request within --max-body-bytes starves.
class InflightBytes {
 public:
  InflightBytes() = default;
  InflightBytes(std::atomic<int64_t>& counter, int64_t limit, int64_t bytes) {
    const int64_t prev = counter.fetch_add(bytes, std::memory_order_acq_rel);
    if (limit > 0 && prev > 0 && prev + bytes > limit) {
      counter.fetch_sub(bytes, std::memory_order_acq_rel);
      return;
    }
    counter_ = &counter;
    bytes_ = bytes;
  }
  InflightBytes(InflightBytes&& o) noexcept
      : counter_(std::exchange(o.counter_, nullptr)), bytes_(o.bytes_) {}
  InflightBytes& operator=(InflightBytes&& o) noexcept {
    if (this != &o) {
      release();
      counter_ = std::exchange(o.counter_, nullptr);
      bytes_ = o.bytes_;
    }
    return *this;
  }
  ~InflightBytes() { release(); }
  bool acquired() const { return counter_ != nullptr; }
  void release() {
    if (counter_ == nullptr) return;
    std::exchange(counter_, nullptr)->fetch_sub(bytes_, std::memory_order_acq_rel);
  }

 private:
  std::atomic<int64_t>* counter_ = nullptr;
  int64_t bytes_ = 0;
};

}  // namespace hamisim::server

// An HTTP/1.1 load client for bench/run-all, over plain TCP, TLS or mTLS (wrk has no client
// certificates). Not a Google Benchmark. Keep-alive connections, closed loop: each connection
// sends its next request when the answer to the last one has arrived, as wrk does.
//
//   bench_http_load rate URL BODY [--connections 32] [--threads 2] [--seconds 5] [--warmup 1]
//       [--ca FILE] [--cert FILE --key FILE] [--content-type TYPE]
//     POSTs the file BODY on every connection again and again. Counts answers that arrive
//     after the warm-up, for --seconds; prints one line of key=value pairs: rate, latency
//     percentiles (ms), answers, non-2xx answers, transport errors.
//
//   bench_http_load live URL REQUESTS [--connections 16] [--attempts 10] [--bound-out FILE]
//       [TLS options]
//     kube-scheduler's two extender calls for every pending pod: REQUESTS holds one
//     ExtenderArgs per line (Pod and NodeNames); each of --connections clients takes the next
//     pod, POSTs it to URL/filter and, when a node is chosen, POSTs the Binding to URL/bind. A
//     failed bind sends the pod through /filter again after a backoff of 20 ms, doubling
//     (kube-scheduler requeues it), at most --attempts times. Prints pods bound, not fitting and
//     failed, bind failures, the wall time and pods bound per second; --bound-out gets
//     "namespace/name node" per bound pod.
//
// Latencies are client-side: request written to answer read, on the same cores as the server.

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

namespace net = boost::asio;
namespace ssl = net::ssl;
namespace json = boost::json;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using boost::system::error_code;
using net::awaitable;
using net::redirect_error;
using net::use_awaitable;

struct Url {
  bool tls = false;
  std::string host, port, path;
};

std::optional<Url> parse_url(const std::string& text) {
  Url u;
  std::string rest;
  if (text.rfind("http://", 0) == 0) {
    rest = text.substr(7);
  } else if (text.rfind("https://", 0) == 0) {
    u.tls = true;
    rest = text.substr(8);
  } else {
    return std::nullopt;
  }
  const size_t slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  u.path = slash == std::string::npos ? "/" : rest.substr(slash);
  const size_t colon = authority.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  u.host = authority.substr(0, colon);
  u.port = authority.substr(colon + 1);
  return u;
}

struct Options {
  std::string mode, url, input;
  int connections = 0, threads = 2, attempts = 10;
  double seconds = 5, warmup = 1;
  std::string ca, cert, key, bound_out;
  std::string content_type = "application/json";
};

// What the client keeps of an answer.
struct Answer {
  int status = 0;
  bool keep_alive = true;
  std::string body;  // only when asked for
};

// Bytes read from a connection and not consumed yet. Grows, never zero-fills (a string's
// resize would clear every read's 64 KiB first).
class ReadBuffer {
 public:
  std::string_view data() const { return {buf_.get() + begin_, end_ - begin_}; }
  void consume(size_t n) {
    begin_ += n;
    if (begin_ == end_) begin_ = end_ = 0;
  }
  // Room for at least `n` more bytes at the end.
  net::mutable_buffer prepare(size_t n) {
    if (begin_ > 0) {
      std::memmove(buf_.get(), buf_.get() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (capacity_ - end_ < n) {
      capacity_ = std::max(capacity_ * 2, end_ + n);
      auto bigger = std::make_unique_for_overwrite<char[]>(capacity_);
      std::memcpy(bigger.get(), buf_.get(), end_);
      buf_ = std::move(bigger);
    }
    return net::buffer(buf_.get() + end_, capacity_ - end_);
  }
  void commit(size_t n) { end_ += n; }
  void clear() { begin_ = end_ = 0; }

 private:
  std::unique_ptr<char[]> buf_;
  size_t capacity_ = 0, begin_ = 0, end_ = 0;
};

// The value of header `name` (lower case, with the colon) in a lower-cased header block.
std::string_view header_value(std::string_view headers, std::string_view name) {
  const size_t at = headers.find(name);
  if (at == std::string_view::npos) return {};
  size_t from = at + name.size();
  const size_t to = headers.find("\r\n", from);
  while (from < to && headers[from] == ' ') ++from;
  return headers.substr(from, to - from);
}

// One keep-alive connection, plain or TLS. Requests are written as prepared bytes and answers
// read with a minimal HTTP/1.1 reader (status line, Content-Length, Connection): what a load
// generator needs, at a fraction of a full parser's cost, so the client takes less of the
// cores it shares with the server (wrk does the same).
class Connection {
 public:
  Connection(const Url& url, ssl::context* tls) : url_(url), tls_ctx_(tls) {}

  bool open() const { return plain_.has_value() || tls_.has_value(); }

  awaitable<error_code> connect() {
    close();
    error_code ec;
    auto ex = co_await net::this_coro::executor;
    tcp::resolver resolver(ex);
    auto endpoints =
        co_await resolver.async_resolve(url_.host, url_.port, redirect_error(use_awaitable, ec));
    if (ec) co_return ec;
    if (tls_ctx_ == nullptr) {
      plain_.emplace(ex);
      co_await net::async_connect(*plain_, endpoints, redirect_error(use_awaitable, ec));
      if (!ec) plain_->set_option(tcp::no_delay(true), ec);
    } else {
      tls_.emplace(ex, *tls_ctx_);
      co_await net::async_connect(tls_->next_layer(), endpoints, redirect_error(use_awaitable, ec));
      if (!ec) tls_->next_layer().set_option(tcp::no_delay(true), ec);
      if (!ec) {
        co_await tls_->async_handshake(ssl::stream_base::client, redirect_error(use_awaitable, ec));
      }
    }
    if (ec) close();
    co_return ec;
  }

  // Writes `request` (a whole HTTP/1.1 request) and reads the answer; closes the connection on
  // any error and when the server does not keep it alive.
  awaitable<error_code> exchange(const std::string& request, Answer& answer, bool keep_body) {
    error_code ec;
    if (plain_) {
      ec = co_await exchange_on(*plain_, request, answer, keep_body);
    } else if (tls_) {
      ec = co_await exchange_on(*tls_, request, answer, keep_body);
    } else {
      ec = net::error::not_connected;
    }
    if (ec || !answer.keep_alive) close();
    co_return ec;
  }

  void close() {
    error_code ignored;
    if (plain_) plain_->close(ignored);
    if (tls_) tls_->next_layer().close(ignored);
    plain_.reset();
    tls_.reset();
    buffer_.clear();
  }

 private:
  template <class Stream>
  awaitable<error_code> read_more(Stream& stream) {
    error_code ec;
    const size_t n = co_await stream.async_read_some(buffer_.prepare(64 << 10),
                                                     redirect_error(use_awaitable, ec));
    buffer_.commit(n);
    co_return ec;
  }

  template <class Stream>
  awaitable<error_code> exchange_on(Stream& stream, const std::string& request, Answer& answer,
                                    bool keep_body) {
    error_code ec;
    co_await net::async_write(stream, net::buffer(request), redirect_error(use_awaitable, ec));
    if (ec) co_return ec;
    size_t header_end;
    while ((header_end = buffer_.data().find("\r\n\r\n")) == std::string_view::npos) {
      if (buffer_.data().size() > (64 << 10)) co_return net::error::message_size;
      if ((ec = co_await read_more(stream))) co_return ec;
    }
    std::string headers(buffer_.data().substr(0, header_end + 2));
    std::transform(headers.begin(), headers.end(), headers.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    // "http/1.1 200 ok"
    if (headers.size() < 12 || headers.rfind("http/1.", 0) != 0) {
      co_return net::error::invalid_argument;
    }
    answer.status = std::atoi(headers.c_str() + 9);
    if (!header_value(headers, "\r\ntransfer-encoding:").empty()) {
      co_return net::error::operation_not_supported;  // the server sends Content-Length
    }
    const std::string_view length = header_value(headers, "\r\ncontent-length:");
    const size_t body = size_t(std::strtoull(std::string(length).c_str(), nullptr, 10));
    const std::string_view connection = header_value(headers, "\r\nconnection:");
    answer.keep_alive = connection.find("close") == std::string_view::npos;
    const size_t total = header_end + 4 + body;
    while (buffer_.data().size() < total) {
      if ((ec = co_await read_more(stream))) co_return ec;
    }
    if (keep_body) answer.body.assign(buffer_.data().substr(header_end + 4, body));
    buffer_.consume(total);
    co_return ec;
  }

  const Url& url_;
  ssl::context* tls_ctx_;
  std::optional<tcp::socket> plain_;
  std::optional<ssl::stream<tcp::socket>> tls_;
  ReadBuffer buffer_;
};

// The bytes of one POST.
std::string post(const Url& url, const std::string& path, const std::string& body,
                 const std::string& content_type) {
  return "POST " + path + " HTTP/1.1\r\nHost: " + url.host + ":" + url.port +
         "\r\nContent-Type: " + content_type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// ---- rate ----

struct RateStats {
  std::vector<uint32_t> latencies_us;
  uint64_t non_2xx = 0, errors = 0;
};

struct RateWindow {
  Clock::time_point measure_from, end;
};

awaitable<void> rate_worker(const Url& url, ssl::context* tls, const std::string& body,
                            const Options& o, RateWindow window, RateStats& stats) {
  Connection conn(url, tls);
  const auto req = post(url, url.path, body, o.content_type);
  net::steady_timer pause(co_await net::this_coro::executor);
  while (Clock::now() < window.end) {
    if (!conn.open()) {
      if (co_await conn.connect()) {
        ++stats.errors;
        pause.expires_after(std::chrono::milliseconds(10));
        error_code ignored;
        co_await pause.async_wait(redirect_error(use_awaitable, ignored));
        continue;
      }
    }
    Answer res;
    const auto t0 = Clock::now();
    const error_code ec = co_await conn.exchange(req, res, false);
    const auto t1 = Clock::now();
    if (t1 < window.measure_from || t1 >= window.end) continue;
    if (ec) {
      ++stats.errors;
      continue;
    }
    stats.latencies_us.push_back(
        uint32_t(std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0).count()));
    if (res.status / 100 != 2) ++stats.non_2xx;
  }
  conn.close();
}

// co_spawn's completion: an exception escaping a worker ends the program loudly (a figure
// from fewer workers than asked for would be wrong without saying so).
void rethrow(std::exception_ptr e) {
  if (e) std::rethrow_exception(e);
}

double percentile_ms(std::vector<uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t i = std::min(sorted.size() - 1, size_t(p / 100.0 * double(sorted.size())));
  return sorted[i] / 1000.0;
}

int run_rate(const Url& url, ssl::context* tls, const Options& o) {
  auto body = read_file(o.input);
  if (!body) {
    std::fprintf(stderr, "cannot read %s\n", o.input.c_str());
    return 2;
  }
  const int connections = o.connections > 0 ? o.connections : 32;
  const int threads = std::max(1, std::min(o.threads, connections));
  const auto start = Clock::now();
  RateWindow window;
  window.measure_from =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.warmup));
  window.end = window.measure_from + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(o.seconds));
  std::vector<RateStats> stats(static_cast<size_t>(connections));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      net::io_context ioc(1);
      for (int c = t; c < connections; c += threads) {
        net::co_spawn(ioc, rate_worker(url, tls, *body, o, window, stats[size_t(c)]), rethrow);
      }
      ioc.run();
    });
  }
  for (auto& w : workers) w.join();
  RateStats all;
  for (auto& s : stats) {
    all.latencies_us.insert(all.latencies_us.end(), s.latencies_us.begin(), s.latencies_us.end());
    all.non_2xx += s.non_2xx;
    all.errors += s.errors;
  }
  std::sort(all.latencies_us.begin(), all.latencies_us.end());
  const double secs = std::chrono::duration<double>(window.end - window.measure_from).count();
  std::printf(
      "requests_per_s=%.0f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f max_ms=%.3f answers=%zu "
      "non_2xx=%llu errors=%llu connections=%d seconds=%.1f\n",
      double(all.latencies_us.size()) / secs, percentile_ms(all.latencies_us, 50),
      percentile_ms(all.latencies_us, 90), percentile_ms(all.latencies_us, 99),
      all.latencies_us.empty() ? 0.0 : all.latencies_us.back() / 1000.0, all.latencies_us.size(),
      (unsigned long long)all.non_2xx, (unsigned long long)all.errors, connections, secs);
  return all.latencies_us.empty() ? 1 : 0;
}

// ---- live ----

struct PendingPod {
  std::string filter_body;
  std::string name, namespace_, uid;
};

struct LiveStats {
  std::atomic<size_t> next{0};
  std::mutex mu;                   // guards the fields below
  std::vector<std::string> bound;  // "namespace/name node"
  size_t no_fit = 0, failed = 0, bind_failures = 0, filter_errors = 0, transport_errors = 0;
  std::map<std::string, size_t> bind_errors;  // by kind (error_class), counted
  std::vector<uint32_t> filter_us, bind_us;
};

// An error's kind: its text with the node and pod names replaced, so that errors of one kind
// are counted together ("not ready: node <node> is locked: node lock contention").
std::string error_class(std::string error, const PendingPod& pod, const std::string& node) {
  for (const auto& [name, placeholder] :
       {std::pair{node, std::string("<node>")}, std::pair{pod.name, std::string("<pod>")}}) {
    if (name.empty()) continue;
    for (size_t at = 0; (at = error.find(name, at)) != std::string::npos;) {
      error.replace(at, name.size(), placeholder);
      at += placeholder.size();
    }
  }
  if (error.size() > 120) error = error.substr(0, 117) + "...";
  return error;
}

awaitable<void> live_worker(const Url& url, ssl::context* tls, const std::vector<PendingPod>& pods,
                            const Options& o, LiveStats& stats) {
  Connection conn(url, tls);
  net::steady_timer backoff(co_await net::this_coro::executor);
  const std::string base = url.path == "/" ? "" : url.path;
  auto call = [&](const std::string& path, std::string body, std::string& answer,
                  uint32_t& micros) -> awaitable<bool> {
    const auto req = post(url, base + path, std::move(body), o.content_type);
    for (int tries = 0; tries < 3 && !conn.open(); ++tries) co_await conn.connect();
    if (!conn.open()) co_return false;
    // Never sent twice: a bind that was answered by a broken connection may have happened.
    Answer res;
    const auto t0 = Clock::now();
    const error_code ec = co_await conn.exchange(req, res, true);
    micros =
        uint32_t(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count());
    if (ec || res.status != 200) co_return false;
    answer = std::move(res.body);
    co_return true;
  };
  for (;;) {
    const size_t i = stats.next.fetch_add(1);
    if (i >= pods.size()) break;
    const PendingPod& pod = pods[i];
    enum { kFailed, kBound, kNoFit } outcome = kFailed;
    std::string node;
    for (int attempt = 0; attempt < o.attempts && outcome == kFailed; ++attempt) {
      if (attempt > 0) {
        // Back to the queue, as kube-scheduler requeues a pod whose bind failed (its backoff
        // starts at 1 s; a shorter one here keeps the run about the extender).
        backoff.expires_after(std::chrono::milliseconds(20 << std::min(attempt - 1, 5)));
        error_code ignored;
        co_await backoff.async_wait(redirect_error(use_awaitable, ignored));
      }
      std::string answer;
      uint32_t filter_us = 0, bind_us = 0;
      if (!co_await call("/filter", pod.filter_body, answer, filter_us)) {
        std::lock_guard lock(stats.mu);
        ++stats.transport_errors;
        continue;
      }
      error_code ec;
      const json::value v = json::parse(answer, ec);
      const json::object* r = v.is_object() ? &v.as_object() : nullptr;
      const json::value* names = r ? r->if_contains("NodeNames") : nullptr;
      const json::value* error = r ? r->if_contains("Error") : nullptr;
      {
        std::lock_guard lock(stats.mu);
        stats.filter_us.push_back(filter_us);
      }
      if (r == nullptr || (error && error->is_string() && !error->as_string().empty())) {
        std::lock_guard lock(stats.mu);
        ++stats.filter_errors;
        ++stats.bind_errors["filter: " + error_class(error && error->is_string()
                                                         ? std::string(error->as_string())
                                                         : answer,
                                                     pod, node)];
        continue;
      }
      if (names == nullptr || !names->is_array() || names->as_array().empty()) {
        outcome = kNoFit;
        break;
      }
      node = std::string(names->as_array()[0].as_string());
      json::object bind;
      bind["PodName"] = pod.name;
      bind["PodNamespace"] = pod.namespace_;
      bind["PodUID"] = pod.uid;
      bind["Node"] = node;
      if (!co_await call("/bind", json::serialize(bind), answer, bind_us)) {
        std::lock_guard lock(stats.mu);
        ++stats.transport_errors;
        continue;
      }
      const json::value b = json::parse(answer, ec);
      const json::value* berr = b.is_object() ? b.as_object().if_contains("Error") : nullptr;
      {
        std::lock_guard lock(stats.mu);
        stats.bind_us.push_back(bind_us);
        if (berr && berr->is_string() && berr->as_string().empty()) {
          outcome = kBound;
        } else {
          ++stats.bind_failures;
          ++stats.bind_errors["bind: " + error_class(berr && berr->is_string()
                                                         ? std::string(berr->as_string())
                                                         : answer,
                                                     pod, node)];
        }
      }
    }
    std::lock_guard lock(stats.mu);
    if (outcome == kBound) {
      stats.bound.push_back(pod.namespace_ + "/" + pod.name + " " + node);
    } else if (outcome == kNoFit) {
      ++stats.no_fit;
    } else {
      ++stats.failed;
    }
  }
  conn.close();
}

int run_live(const Url& url, ssl::context* tls, const Options& o) {
  std::ifstream in(o.input);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", o.input.c_str());
    return 2;
  }
  std::vector<PendingPod> pods;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    error_code ec;
    const json::value v = json::parse(line, ec);
    const json::value* meta = nullptr;
    if (!ec && v.is_object()) {
      if (const auto* p = v.as_object().if_contains("Pod"); p && p->is_object()) {
        meta = p->as_object().if_contains("metadata");
      }
    }
    if (meta == nullptr || !meta->is_object()) {
      std::fprintf(stderr, "%s: line %zu is not ExtenderArgs with a Pod\n", o.input.c_str(),
                   pods.size() + 1);
      return 2;
    }
    auto field = [&](const char* k) {
      const json::value* f = meta->as_object().if_contains(k);
      return f && f->is_string() ? std::string(f->as_string()) : std::string();
    };
    pods.push_back({line, field("name"), field("namespace"), field("uid")});
  }
  const int clients = o.connections > 0 ? o.connections : 16;
  LiveStats stats;
  net::io_context ioc(1);
  const auto t0 = Clock::now();
  for (int c = 0; c < clients; ++c) {
    net::co_spawn(ioc, live_worker(url, tls, pods, o, stats), rethrow);
  }
  ioc.run();
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!o.bound_out.empty()) {
    std::ofstream out(o.bound_out);
    for (const auto& b : stats.bound) out << b << "\n";
  }
  std::sort(stats.filter_us.begin(), stats.filter_us.end());
  std::sort(stats.bind_us.begin(), stats.bind_us.end());
  std::printf(
      "pods=%zu bound=%zu no_fit=%zu failed=%zu bind_failures=%zu filter_errors=%zu "
      "transport_errors=%zu clients=%d seconds=%.3f pods_bound_per_s=%.1f filter_p50_ms=%.3f "
      "filter_p99_ms=%.3f bind_p50_ms=%.3f bind_p99_ms=%.3f\n",
      pods.size(), stats.bound.size(), stats.no_fit, stats.failed, stats.bind_failures,
      stats.filter_errors, stats.transport_errors, clients, secs, double(stats.bound.size()) / secs,
      percentile_ms(stats.filter_us, 50), percentile_ms(stats.filter_us, 99),
      percentile_ms(stats.bind_us, 50), percentile_ms(stats.bind_us, 99));
  for (const auto& [kind, n] : stats.bind_errors) std::printf("error %zu x %s\n", n, kind.c_str());
  return stats.bound.size() + stats.no_fit + stats.failed == pods.size() ? 0 : 1;
}

int usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s rate URL BODY [--connections N] [--threads N] [--seconds S] "
               "[--warmup S] [TLS]\n"
               "       %s live URL REQUESTS.jsonl [--connections N] [--attempts N] "
               "[--bound-out FILE] [TLS]\n"
               "TLS: [--ca FILE] [--cert FILE --key FILE]; also [--content-type TYPE]\n",
               argv0, argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= argc) return std::nullopt;
      return std::string(argv[++i]);
    };
    std::optional<std::string> v;
    if (a.rfind("--", 0) != 0) {
      positional.push_back(a);
      continue;
    }
    if (!(v = value())) return usage(argv[0]);
    if (a == "--connections") {
      o.connections = std::atoi(v->c_str());
    } else if (a == "--threads") {
      o.threads = std::atoi(v->c_str());
    } else if (a == "--attempts") {
      o.attempts = std::max(1, std::atoi(v->c_str()));
    } else if (a == "--seconds") {
      o.seconds = std::atof(v->c_str());
    } else if (a == "--warmup") {
      o.warmup = std::atof(v->c_str());
    } else if (a == "--ca") {
      o.ca = *v;
    } else if (a == "--cert") {
      o.cert = *v;
    } else if (a == "--key") {
      o.key = *v;
    } else if (a == "--bound-out") {
      o.bound_out = *v;
    } else if (a == "--content-type") {
      o.content_type = *v;
    } else {
      return usage(argv[0]);
    }
  }
  if (positional.size() != 3 || o.seconds <= 0) return usage(argv[0]);
  o.mode = positional[0];
  o.url = positional[1];
  o.input = positional[2];
  auto url = parse_url(o.url);
  if (!url) {
    std::fprintf(stderr, "URL must be http://HOST:PORT/PATH or https://...: %s\n", o.url.c_str());
    return 2;
  }

  std::optional<ssl::context> tls;
  if (url->tls) {
    tls.emplace(ssl::context::tls_client);
    error_code ec;
    if (!o.ca.empty()) {
      tls->load_verify_file(o.ca, ec);
      tls->set_verify_mode(ssl::verify_peer);
    } else {
      tls->set_verify_mode(ssl::verify_none);
    }
    if (!ec && !o.cert.empty()) tls->use_certificate_chain_file(o.cert, ec);
    if (!ec && !o.key.empty()) tls->use_private_key_file(o.key, ssl::context::pem, ec);
    if (ec) {
      std::fprintf(stderr, "TLS files: %s\n", ec.message().c_str());
      return 2;
    }
  }
  ssl::context* ctx = tls ? &*tls : nullptr;
  if (o.mode == "rate") return run_rate(*url, ctx, o);
  if (o.mode == "live") return run_live(*url, ctx, o);
  return usage(argv[0]);
}

// Accepting and serving connections: TLS handshake, then request after request on the
// connection's strand (HTTP/1.1 framing, limits and timeouts, keep-alive, the answer written
// head and body in one gathered write), and the server's registry of open connections.
#include <sys/socket.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <source_location>
#include <stdexcept>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "log/structured.h"
#include "server/http_text.h"
#include "server/server_impl.h"

namespace hamisim::server {

namespace beast = boost::beast;
namespace http = boost::beast::http;

namespace {

std::string_view to_sv(boost::core::string_view s) {
  return {s.data(), s.size()};
}

// Completion condition for net::async_read/async_write: asio's transfer_all() asks for at most
// 64 KiB per system call, so a 600 KB body took ten reads and the response ten writes; this
// lets every call move all that is left (the kernel still decides how much it takes).
struct TransferAllAtOnce {
  size_t operator()(const error_code& ec, size_t) const {
    return ec ? 0 : std::numeric_limits<size_t>::max();
  }
};

// A plan frees hundreds of MB of small objects, which glibc keeps in its arenas unless asked:
// an idle server would hold the peak of its largest plan. Heavy requests are rare enough to
// pay for the walk.
void return_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

template <class Stream>
class Connection final : public ConnectionBase,
                         public std::enable_shared_from_this<Connection<Stream>> {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  Connection(HttpServer::Impl& server, tcp::socket&& socket, const RouteTable& table,
             std::shared_ptr<ssl::context> tls_ctx)
      : server_(server),
        table_(table),
        tls_ctx_(std::move(tls_ctx)),
        stream_(make_stream(std::move(socket))) {
    error_code ec;
    auto ep = lowest().socket().remote_endpoint(ec);
    if (!ec) {
      net::ip::address a = ep.address();
      if (a.is_v6() && a.to_v6().is_v4_mapped()) {
        a = net::ip::make_address_v4(net::ip::v4_mapped, a.to_v6());
      }
      remote_ = a.is_v6() ? fmt::format("[{}]:{}", a.to_string(), ep.port())
                          : fmt::format("{}:{}", a.to_string(), ep.port());
      peer_is_loopback_ = a.is_loopback();
    }
  }

  ~Connection() override {
    release_body_charge();
    if (id_) server_.remove_connection(*id_);
  }

  void set_id(uint64_t id) { id_ = id; }
  auto executor() { return lowest().get_executor(); }

  void start() {
    if constexpr (kTls) {
      state_ = State::kHandshake;
      waiting_since.store(Clock::now().time_since_epoch().count());
      lowest().expires_after(cfg().header_timeout);
      stream_.async_handshake(
          ssl::stream_base::server,
          [self = this->shared_from_this()](error_code ec) { self->on_handshake(ec); });
    } else {
      read_next();
    }
  }

  void notify_stopping() override {
    net::post(lowest().get_executor(), [self = this->shared_from_this()] {
      if (self->state_ == State::kHandshake || self->state_ == State::kIdle) self->close_now();
    });
  }

  void force_close() override {
    net::post(lowest().get_executor(), [self = this->shared_from_this()] { self->close_now(); });
  }

  void evict() override {
    net::post(lowest().get_executor(), [self = this->shared_from_this()] {
      if (self->closed_) return;  // on its way out anyway
      if (self->state_ == State::kHandshake || self->state_ == State::kIdle) {
        return self->close_now();
      }
      if (self->id_) self->server_.eviction_failed(*self->id_);
    });
  }

 private:
  enum class State { kHandshake, kIdle, kReading, kHandling, kWriting, kClosing };
  // Bytes asked for per read while waiting for a request header; whatever of the body arrives
  // with it is taken from the buffer, the rest is read straight into body_.
  static constexpr size_t kReadChunk = 16384;
  // Capacity of the body string any connection keeps between requests (a one-template
  // ExtenderArgs is ~12 KB); larger ones are kept within the server's kKeptLargeBodies.
  static constexpr size_t kKeptBodyCapacity = size_t(64) << 10;
  // A simulation body at least this large makes the server return free memory once the
  // simulation requests stop (HttpServer::Impl::return_memory_when_idle).
  static constexpr size_t kLargeSimulationBody = size_t(1) << 20;

  Stream make_stream(tcp::socket&& socket) {
    if constexpr (kTls) {
      return Stream(std::move(socket), *tls_ctx_);
    } else {
      return Stream(std::move(socket));
    }
  }

  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }
  const ServerConfig& cfg() const { return server_.config; }
  spdlog::logger& log() { return *server_.log; }

  void on_handshake(error_code ec) {
    if (ec) {
      server_.handshake_failures->inc();
      log().debug("tls handshake from {} failed: {}", remote_, ec.message());
      return close_now();
    }
    if constexpr (kTls) identities_ = peer_identities(stream_.native_handle());
    read_next();
  }

  // Waits for the first byte of the next request under the idle timeout (the header timeout
  // for a fresh connection), so that header and idle limits stay separate.
  void read_next() {
    if (server_.stopping.load()) return close_now();
    parser_.emplace();
    direct_body_ = false;
    parser_->body_limit(cfg().max_body_bytes);
    parser_->header_limit(
        static_cast<uint32_t>(std::min<size_t>(cfg().max_header_bytes, UINT32_MAX)));
    continue_sent_ = false;
    if (buffer_.size() > 0) return read_header();
    state_ = State::kIdle;
    waiting_since.store(Clock::now().time_since_epoch().count());
    lowest().expires_after(first_request_ ? cfg().header_timeout : cfg().idle_timeout);
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = this->shared_from_this()](error_code ec, size_t n) {
                              if (ec) return self->close_now();
                              self->buffer_.commit(n);
                              self->read_header();
                            });
  }

  void read_header() {
    state_ = State::kReading;
    waiting_since.store(kBusy);
    first_request_ = false;
    started_ = Clock::now();
    lowest().expires_after(cfg().header_timeout);
    parse_header();
  }

  // Feeds the buffered bytes to the parser (which stops at the end of the header and enforces
  // the header limit, and the body limit against Content-Length); reads more while the header
  // is incomplete. Replaces http::async_read_header, whose errors are the same except for the
  // end of input (eof here, end_of_stream/partial_message there): all of them just close.
  void parse_header() {
    error_code ec;
    buffer_.consume(parser_->put(buffer_.data(), ec));
    if (ec != http::error::need_more) return on_header(ec);
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = this->shared_from_this()](error_code ec, size_t n) {
                              if (ec) return self->on_read_error(ec);
                              self->buffer_.commit(n);
                              self->parse_header();
                            });
  }

  void on_header(error_code ec) {
    if (ec) return on_read_error(ec);
    auto& msg = parser_->get();
    // RFC 9112 §6.3: a request whose transfer coding does not end in chunked has no reliable
    // length; framing it by Content-Length would let a second request be smuggled in its body.
    if (msg.count(http::field::transfer_encoding) > 0 && !parser_->chunked()) {
      return send_error(400, "invalid request: Transfer-Encoding must end with chunked");
    }
    if (msg.version() >= 11 && msg.count(http::field::host) == 0) {  // RFC 9112 §3.2
      return send_error(400, "invalid request: an HTTP/1.1 request needs a Host header");
    }
    // RFC 9112 §3.2: two Host fields name two targets (what a proxy in front routed by and
    // what we would read may differ), so the request is refused whatever its version.
    if (msg.count(http::field::host) > 1) {
      return send_error(400, "invalid request: more than one Host header");
    }
    // A simulation request is admitted by the work its body brings before the body is read,
    // so that overload is a quick 429 rather than a queue of megabytes (a chunked body is
    // counted once read, in handle_request).
    if (parser_->content_length()) {
      std::string_view target = to_sv(msg.target());
      const Route* route = HttpServer::Impl::find_route(table_, to_sv(msg.method_string()),
                                                        target.substr(0, target.find('?')));
      if (route != nullptr && route->group == AuthGroup::kSimulation) {
        const auto length = static_cast<int64_t>(*parser_->content_length());
        body_bytes_ = server_.admit_simulation_body(length);
        if (!body_bytes_.acquired()) return send_response(server_.simulation_overloaded());
      }
    }
    if (parser_->is_done()) return handle_request();
    if (iequals(to_sv(msg[http::field::expect]), "100-continue")) {
      continue_sent_ = true;
      continue_res_ = {};
      continue_res_.version(11);
      continue_res_.result(http::status::continue_);
      lowest().expires_after(cfg().body_timeout);
      return http::async_write(stream_, continue_res_,
                               [self = this->shared_from_this()](error_code ec, size_t) {
                                 if (ec) return self->close_now();
                                 self->read_body();
                               });
    }
    read_body();
  }

  void read_body() {
    lowest().expires_after(cfg().body_timeout);
    if (parser_->chunked() || !parser_->content_length()) {
      parser_->eager(true);
      return read_chunked_body();
    }
    // Content-Length (already checked against the body limit by the parser): the bytes that
    // came with the header are copied, the rest is read in as few reads as the kernel allows
    // into the connection's body string, never past the end of this request (pipelining).
    const size_t length = *parser_->content_length();
    const size_t buffered = std::min(length, buffer_.size());
    direct_body_ = true;
    release_body_charge();  // the storage is in use now, not kept
    body_.reserve(length + kBodyPadding);
    body_.resize(length);  // fills only beyond the previous request's size
    std::memcpy(body_.data(), buffer_.data().data(), buffered);
    buffer_.consume(buffered);
    if (buffered == length) return handle_request();
    net::async_read(stream_, net::buffer(body_.data() + buffered, length - buffered),
                    TransferAllAtOnce{}, [self = this->shared_from_this()](error_code ec, size_t) {
                      if (ec) return self->on_read_error(ec);
                      self->handle_request();
                    });
  }

  // A chunked body, fed to the parser as it arrives. The parser takes chunk data whole, so
  // what it leaves unread is a chunk line or trailer waiting for its CRLF: one that holds a
  // bare LF never gets it (Beast would wait out the body timeout), so it is refused at once
  // (RFC 9112 §7.1), and such lines are bounded like a header.
  void read_chunked_body() {
    if (buffer_.size() > 0) {
      error_code ec;
      buffer_.consume(parser_->put(buffer_.data(), ec));
      if (ec && ec != http::error::need_more) return on_read_error(ec);
      if (parser_->is_done()) return handle_request();
      const std::string_view pending(static_cast<const char*>(buffer_.data().data()),
                                     buffer_.size());
      for (size_t lf = pending.find('\n'); lf != std::string_view::npos;
           lf = pending.find('\n', lf + 1)) {
        if (lf == 0 || pending[lf - 1] != '\r') {
          return send_error(400, "invalid request: malformed HTTP: a chunk line ends without CR");
        }
      }
      if (pending.size() > cfg().max_header_bytes) {
        return send_error(400, "invalid request: malformed HTTP: chunk line too long");
      }
    }
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = this->shared_from_this()](error_code ec, size_t n) {
                              if (ec) return self->on_read_error(ec);
                              self->buffer_.commit(n);
                              self->read_chunked_body();
                            });
  }

  void on_read_error(error_code ec) {
    if (ec == http::error::body_limit) {
      return send_error(
          413, fmt::format("invalid request: body exceeds {} bytes", cfg().max_body_bytes));
    }
    if (ec == http::error::header_limit) {
      return send_error(431, "invalid request: request header too large");
    }
    if (ec.category() ==
            http::make_error_code(http::error::end_of_stream).category() &&  // http parse errors
        ec != http::error::end_of_stream &&
        ec != http::error::partial_message && ec != http::error::need_more &&
        ec != http::error::need_buffer) {
      return send_error(400, fmt::format("invalid request: malformed HTTP: {}", ec.message()));
    }
    // Timeouts, the peer going away, and cancellation by shutdown just close.
    if (ec == beast::error::timeout) log().debug("connection {}: {} timed out", remote_, phase());
    close_now();
  }

  std::string_view phase() const {
    switch (state_) {
      case State::kHandshake:
        return "tls handshake";
      case State::kIdle:
        return "idle keep-alive";
      case State::kReading:
        return parser_ && parser_->is_header_done() ? "body read" : "header read";
      default:
        return "write";
    }
  }

  // A response to a request that could not be read completely: the rest of the input is
  // discarded, never buffered, and the connection is closed after the response.
  void send_error(int status, std::string_view message) {
    send_response(HttpResponse::error(status, message));
  }
  void send_response(HttpResponse res) {
    std::string_view path, method;
    std::string request_id;
    if (parser_) {
      // The request line and the fields read before an error are in the message even when
      // the header was refused (a Content-Length over the limit is refused at its end).
      const auto& msg = parser_->get();
      std::string_view target = to_sv(msg.target());
      path = target.substr(0, target.find('?'));
      method = to_sv(msg.method_string());
      std::string_view rid = to_sv(msg["X-Request-Id"]);
      if (valid_request_id(rid)) request_id = rid;
      if (request_id.empty() && !parser_->is_header_done()) request_id = raw_request_id();
    }
    if (request_id.empty()) request_id = server_.next_request_id();
    send(std::move(res), table_.label_for(path), method, path, request_id, "", false, 11, true);
  }

  // X-Request-Id from the buffered bytes of a header the parser refused before it stored
  // that field (too large, or a malformed line before it); empty when none is whole there.
  std::string raw_request_id() const {
    std::string_view raw(static_cast<const char*>(buffer_.data().data()), buffer_.size());
    raw = raw.substr(0, std::min(raw.size(), cfg().max_header_bytes));
    if (size_t end = raw.find("\r\n\r\n"); end != std::string_view::npos) {
      raw = raw.substr(0, end + 2);
    }
    constexpr std::string_view kName = "x-request-id:";
    for (size_t lf = raw.find('\n'); lf != std::string_view::npos; lf = raw.find('\n', lf + 1)) {
      std::string_view line = raw.substr(lf + 1);
      const size_t end = line.find_first_of("\r\n");
      if (end == std::string_view::npos || !iequals(line.substr(0, kName.size()), kName)) continue;
      std::string_view value = line.substr(kName.size(), end - kName.size());
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
        value.remove_prefix(1);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t'))
        value.remove_suffix(1);
      if (valid_request_id(value)) return std::string(value);
    }
    return {};
  }

  void handle_request() {
    state_ = State::kHandling;
    auto& msg = parser_->get();
    HttpRequest req;
    req.method = to_sv(msg.method_string());
    std::string_view target = to_sv(msg.target());
    auto q = target.find('?');
    req.target = target.substr(0, q);
    if (q != std::string_view::npos) req.query = target.substr(q + 1);
    req.content_type = to_sv(msg[http::field::content_type]);
    req.headers.reserve(std::distance(msg.begin(), msg.end()));
    for (const auto& f : msg) req.headers.emplace_back(to_sv(f.name_string()), to_sv(f.value()));
    std::string_view rid = to_sv(msg["X-Request-Id"]);
    req.request_id = valid_request_id(rid) ? std::string(rid) : server_.next_request_id();
    req.client_identities = identities_;
    if (!identities_.empty()) req.client_identity = identities_.front();
    req.remote_address = remote_;
    req.peer_is_loopback = peer_is_loopback_;
    req.body = direct_body_ ? std::move(body_) : std::move(msg.body());
    direct_body_ = false;
    req.body.reserve(req.body.size() + kBodyPadding);  // a chunked body: copied once here
    req.abandoned = &server_.abandoned;
    const bool keep_alive = msg.keep_alive();
    const unsigned version = msg.version();

    auto admission = server_.admit(table_, req);
    group_slot_ = std::move(admission.group_slot);
    heavy_slot_ = std::move(admission.heavy_slot);
    if (admission.route != nullptr && admission.route->group == AuthGroup::kSimulation &&
        !body_bytes_.acquired()) {
      body_bytes_ = server_.admit_simulation_body(static_cast<int64_t>(req.body.size()));
      if (!body_bytes_.acquired()) {
        release_slots();
        return answer(std::move(req), server_.simulation_overloaded(), admission.route_label,
                      keep_alive, version);
      }
    }
    if (admission.route == nullptr) {
      return answer(std::move(req), std::move(admission.response), admission.route_label,
                    keep_alive, version);
    }
    ComputePool* pool = admission.route->heavy ? &*server_.heavy_pool
                        : admission.route->group == AuthGroup::kSimulation
                            ? &*server_.simulation_pool
                            : nullptr;
    if (pool == nullptr) {
      HttpResponse res = server_.call(*admission.route, req);
      return answer(std::move(req), std::move(res), admission.route_label, keep_alive, version);
    }
    // A compute thread runs the handler; this connection's strand is free meanwhile (the
    // grace period can close it), and the work guard keeps the I/O threads up for the answer.
    net::post(pool->context(),
              [self = this->shared_from_this(), work = net::make_work_guard(server_.ioc),
               route = admission.route, label = admission.route_label, keep_alive, version,
               req = std::move(req)]() mutable {
                HttpResponse res = self->server_.call(*route, req);
                auto ex = self->executor();
                net::post(ex, [self = std::move(self), req = std::move(req), res = std::move(res),
                               label, keep_alive, version]() mutable {
                  self->answer(std::move(req), std::move(res), label, keep_alive, version);
                });
              });
  }

  void answer(HttpRequest req, HttpResponse res, std::string_view route, bool keep_alive,
              unsigned version) {
    in_body_ = std::move(req.body);  // the response may point into it
    if (closed_ || req.is_abandoned()) {
      // Too late (the grace period is over): close, never send a partial or stale answer.
      release_slots();
      return close_now();
    }
    send(std::move(res), route, req.method, req.target, req.request_id, req.client_identity,
         keep_alive, version, false);
  }

  void release_slots() {
    group_slot_.release();
    heavy_slot_.release();
    body_bytes_.release();
  }

  void send(HttpResponse r, std::string_view route, std::string_view method, std::string_view path,
            const std::string& request_id, std::string_view identity, bool keep_alive,
            unsigned version, bool unread_input) {
    bool keep = keep_alive && !unread_input && !server_.stopping.load();
    size_t body_size = 0;
    try {
      body_size = checked_body_size(r);
      write_head(r.status, version == 10 ? 10 : 11, r.content_type, r.headers, request_id, keep,
                 body_size, path);
      out_body_ = std::move(r.body);
      out_pieces_ = std::move(r.pieces);
    } catch (const std::exception& e) {
      r.status = 500;
      r.outcome.clear();
      out_body_ = HttpResponse::error(500, fmt::format("internal: {}", e.what())).body;
      out_pieces_.clear();
      body_size = out_body_.size();
      write_head(500, 11, "application/json", {}, {}, keep, body_size, path);
    }

    // The answer to HEAD is the head GET would send, Content-Length included, and no body
    // (RFC 9110 §9.3.2), whatever its status.
    const bool head_only = method == "HEAD";
    double seconds = std::chrono::duration<double>(Clock::now() - started_).count();
    std::string_view outcome = r.outcome.empty() ? outcome_of(r.status) : r.outcome;
    server_.record(route, r.status, outcome, seconds);
    if (log().should_log(spdlog::level::debug)) {
      hamisim::log::write(log(), spdlog::level::debug, "http request",
                          {{"id", request_id},
                           {"method", method},
                           {"path", path},
                           {"status", r.status},
                           {"outcome", outcome},
                           {"duration_us", static_cast<int64_t>(seconds * 1e6)},
                           {"bytes_out", head_only ? size_t{0} : body_size},
                           {"client", identity.empty() ? std::string_view("-") : identity},
                           {"remote", remote_}},
                          std::source_location::current());
    }

    state_ = State::kWriting;
    lowest().expires_after(cfg().body_timeout);
    // Head and body in one gathered write; the body is not copied.
    out_buffers_.clear();
    out_buffers_.push_back(net::buffer(head_));
    if (head_only) {
      // the head alone
    } else if (out_pieces_.empty()) {
      out_buffers_.push_back(net::buffer(out_body_));
    } else {
      for (const HttpResponse::Piece& p : out_pieces_) {
        const std::string& of = p.of_request ? in_body_ : out_body_;
        // No empty buffers: over TLS an empty buffer first in line ends the write (see below).
        if (p.size > 0) out_buffers_.push_back(net::buffer(of.data() + p.offset, p.size));
      }
    }
    // The answer is complete: the request stops counting against the limits now, before the
    // client can have it and send its next request.
    const bool heavy = heavy_slot_.acquired();
    if (body_bytes_.acquired() && in_body_.size() >= kLargeSimulationBody) {
      server_.return_memory_when_idle();
    }
    release_slots();
    auto written = [self = this->shared_from_this(), keep, heavy](error_code ec, size_t) {
      std::string().swap(self->out_body_);
      self->out_pieces_.clear();
      if (heavy) {
        // Its request and answer (megabytes) go back to the system too, not to the next
        // keep-alive request.
        std::string().swap(self->in_body_);
        return_free_memory();
      }
      self->keep_body_storage(std::exchange(self->in_body_, std::string()));
      if (ec) return self->close_now();
      if (keep) return self->read_next();
      self->linger_close();
    };
    // A buffer sequence that skips the buffers already written: with TLS, asio's fixed-size
    // sequences pass an empty first buffer once the head is written, which Beast's flat_stream
    // (inside ssl_stream) turns into a zero-byte write that ends the operation unsent.
    net::async_write(stream_, out_buffers_, TransferAllAtOnce{}, std::move(written));
  }

  // The size of the body `r` sends; throws when a piece lies outside its text.
  size_t checked_body_size(const HttpResponse& r) const {
    if (r.pieces.empty()) return r.body.size();
    size_t total = 0;
    for (const HttpResponse::Piece& p : r.pieces) {
      const size_t of = p.of_request ? in_body_.size() : r.body.size();
      if (p.offset > of || p.size > of - p.offset) {
        throw std::out_of_range("response piece out of range");
      }
      total += p.size;
    }
    return total;
  }

  // Keeps `storage` for the next request's body, so that keep-alive requests neither allocate
  // nor zero-fill it again: up to kKeptBodyCapacity on any connection, more while all
  // connections together keep at most the server's kKeptLargeBodies of such storage.
  void keep_body_storage(std::string storage) {
    const size_t capacity = storage.capacity();
    if (capacity <= body_.capacity()) return;  // `body_` is as good (a chunked body came)
    release_body_charge();
    body_ = std::string();
    if (capacity > kKeptBodyCapacity) {
      if (!server_.charge_kept_body(capacity)) return;
      body_charge_ = capacity;
    }
    body_ = std::move(storage);
  }

  void release_body_charge() {
    if (body_charge_ == 0) return;
    server_.kept_large_bodies.fetch_sub(body_charge_);
    body_charge_ = 0;
  }

  // The status line and header fields into head_, byte for byte what Beast's serializer wrote
  // for the http::response<string_body> this server used to build, without its per-field
  // allocations and buffer-sequence machinery: the status line with Beast's reason phrase;
  // Content-Type; the route's headers, a name set again replacing the earlier field, values
  // trimmed of spaces and tabs; X-Request-Id (none when empty); Connection as Beast's
  // keep_alive() set it; Content-Length. Throws where Beast threw: a status over 999, a field
  // name or value over 65533 bytes, a body on a 1xx/204/304 response (Beast's throw came
  // after the caller's catch and dropped the connection; it is a 500 now). Content-Length,
  // Connection and Transfer-Encoding belong to the server (http_server.h): a route's own are
  // dropped.
  void write_head(int status, unsigned version, std::string_view content_type,
                  const HeaderList& headers, std::string_view request_id, bool keep,
                  size_t body_size, std::string_view path) {
    const auto code = static_cast<unsigned>(status);
    if (code > 999) throw std::invalid_argument("invalid status-code");
    if (body_size > 0 && (code / 100 == 1 || code == 204 || code == 304)) {
      throw std::invalid_argument("invalid response body");
    }
    fields_.clear();
    auto set = [&](std::string_view name, std::string_view value) {
      if (name.size() + 2 > UINT16_MAX) throw std::length_error("field name too large");
      if (value.size() + 2 > UINT16_MAX) throw std::length_error("field value too large");
      auto ows = [](char c) { return c == ' ' || c == '\t'; };
      while (!value.empty() && ows(value.front())) value.remove_prefix(1);
      while (!value.empty() && ows(value.back())) value.remove_suffix(1);
      std::erase_if(fields_, [&](const auto& f) { return iequals(f.first, name); });
      fields_.emplace_back(name, value);
    };
    if (!content_type.empty() && valid_header_text(content_type)) {
      set("Content-Type", content_type);
    }
    for (const auto& [k, v] : headers) {
      if (k.empty() || !valid_header_text(k) || !valid_header_text(v)) {
        log().warn("dropping an invalid response header on {}", path);
        continue;
      }
      if (iequals(k, "Content-Length") || iequals(k, "Connection") ||
          iequals(k, "Transfer-Encoding")) {
        continue;
      }
      set(k, v);
    }
    if (!request_id.empty()) set("X-Request-Id", request_id);
    if (version == 11 && !keep) set("Connection", "close");
    if (version == 10 && keep) set("Connection", "keep-alive");
    char length[24];
    auto [length_end, length_ec] = std::to_chars(length, length + sizeof length, body_size);
    set("Content-Length", std::string_view(length, size_t(length_end - length)));

    std::string_view reason = to_sv(http::obsolete_reason(static_cast<http::status>(code)));
    size_t size = 13 + reason.size() + 2 + 2;
    for (const auto& [name, value] : fields_) size += name.size() + 2 + value.size() + 2;
    head_.clear();
    head_.reserve(size);
    head_ += version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
    head_ += char('0' + code / 100);
    head_ += char('0' + code / 10 % 10);
    head_ += char('0' + code % 10);
    head_ += ' ';
    head_ += reason;
    head_ += "\r\n";
    for (const auto& [name, value] : fields_) {
      head_ += name;
      head_ += ": ";
      head_ += value;
      head_ += "\r\n";
    }
    head_ += "\r\n";
  }

  // Closing right after a response while the client may still be sending would make the
  // kernel answer with RST, which can destroy the response before the client reads it. So
  // half-close and discard what still arrives, up to kMaxDrainBytes (a small remainder, such
  // as the rest of a refused body that fits the socket buffers, is read and the close is
  // clean); past that, stop reading and close after a short delay, as Go's net/http server
  // does (rstAvoidanceDelay). Reading a refused 2.5 MB body to its end cost the threads that
  // serve the live /filter more than all the simulation work (issue #44), and kept the
  // flooding client sending.
  static constexpr size_t kMaxDrainBytes = size_t(256) << 10;
  static constexpr auto kUnreadCloseDelay = std::chrono::milliseconds(500);

  void linger_close() {
    state_ = State::kClosing;
    error_code ec;
    lowest().socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) return close_now();
    lowest().expires_after(
        std::min<std::chrono::milliseconds>(cfg().body_timeout, std::chrono::seconds(2)));
    drain();
  }

  void drain() {
    if (!drain_buf_) drain_buf_ = std::make_unique<char[]>(kReadChunk);
    lowest().async_read_some(net::buffer(drain_buf_.get(), kReadChunk),
                             [self = this->shared_from_this()](error_code ec, size_t n) {
                               if (ec) return self->close_now();
                               self->drained_ += n;
                               if (self->drained_ <= kMaxDrainBytes) return self->drain();
                               self->close_after_delay();
                             });
  }

  void close_after_delay() {
    lowest().expires_never();
    close_timer_.emplace(lowest().get_executor());
    close_timer_->expires_after(std::min<std::chrono::milliseconds>(
        cfg().body_timeout, std::chrono::milliseconds(kUnreadCloseDelay)));
    close_timer_->async_wait([self = this->shared_from_this()](error_code) { self->close_now(); });
  }

  void close_now() {
    if (closed_) return;
    closed_ = true;
    if (close_timer_) close_timer_->cancel();
    state_ = State::kClosing;
    waiting_since.store(kBusy);
    error_code ec;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
    lowest().close();
  }

  HttpServer::Impl& server_;
  const RouteTable& table_;
  std::shared_ptr<ssl::context> tls_ctx_;  // outlives the stream that uses it
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::string body_;        // a Content-Length body, read past the parser (storage kept between)
  size_t body_charge_ = 0;  // body_'s capacity charged to the server's kKeptLargeBodies
  bool direct_body_ = false;
  std::string in_body_;   // the body of the request being answered, until written
  std::string head_;      // response status line and fields
  std::string out_body_;  // response body being written
  std::vector<HttpResponse::Piece> out_pieces_;  // and its pieces, when gathered
  std::vector<net::const_buffer> out_buffers_;
  std::vector<std::pair<std::string_view, std::string_view>> fields_;  // write_head's scratch
  http::response<http::empty_body> continue_res_;
  std::unique_ptr<char[]> drain_buf_;
  size_t drained_ = 0;                            // bytes discarded since linger_close
  std::optional<net::steady_timer> close_timer_;  // close_after_delay's
  std::vector<std::string> identities_;
  std::string remote_;
  bool peer_is_loopback_ = false;
  std::optional<uint64_t> id_;
  InflightSlot group_slot_, heavy_slot_;  // of the request being answered
  InflightBytes body_bytes_;              // its body, when it is a simulation request
  Clock::time_point started_ = Clock::now();
  State state_ = State::kIdle;
  bool first_request_ = true;
  bool continue_sent_ = false;
  bool closed_ = false;
};

using PlainConnection = Connection<beast::tcp_stream>;
using TlsConnection = Connection<beast::ssl_stream<beast::tcp_stream>>;

}  // namespace

void HttpServer::Impl::do_accept(Listener& l) {
  // Each connection on a strand of its listener's io_context (probe_ioc for the metrics one).
  net::io_context& context = l.metrics ? probe_ioc : ioc;
  l.acceptor.async_accept(net::make_strand(context), [this, &l](error_code ec, tcp::socket socket) {
    on_accept(l, ec, std::move(socket));
  });
}

void HttpServer::Impl::on_accept(Listener& l, error_code ec, tcp::socket socket) {
  if (stopping.load() || !l.acceptor.is_open()) return;
  if (ec) {
    // Out of descriptors and the like: back off instead of spinning.
    log->warn("accept failed: {}", ec.message());
    l.retry.expires_after(std::chrono::milliseconds(100));
    l.retry.async_wait([this, &l](error_code wec) {
      if (!wec && !stopping.load()) do_accept(l);
    });
    return;
  }
  error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  auto launch = [this, &l](auto conn) {
    auto id = add_connection(conn, l.metrics);
    if (!id) return;  // shutting down or over the connection limit: closed on return
    conn->set_id(*id);
    net::post(conn->executor(), [conn] { conn->start(); });
  };
  if (l.metrics) {
    launch(std::make_shared<PlainConnection>(*this, std::move(socket), metrics_routes, nullptr));
  } else if (tls) {
    launch(std::make_shared<TlsConnection>(*this, std::move(socket), routes, tls->current()));
  } else {
    launch(std::make_shared<PlainConnection>(*this, std::move(socket), routes, nullptr));
  }
  do_accept(l);
}

std::optional<uint64_t> HttpServer::Impl::add_connection(const std::shared_ptr<ConnectionBase>& c,
                                                         bool metrics_listener) {
  std::shared_ptr<ConnectionBase> evicted;
  std::optional<uint64_t> id;
  {
    std::lock_guard lock(conns_mu);
    if (stopping_locked) return std::nullopt;
    const size_t l = metrics_listener ? 1 : 0;
    const int limit = metrics_listener ? config.max_metrics_connections : config.max_connections;
    if (limit > 0 && open_per_listener[l] - evicting_per_listener[l] >= size_t(limit)) {
      // At the cap: the connection of this listener that has waited longest for a request
      // (idle keep-alive, or connected and silent) makes room, so that clients holding
      // connections open cannot lock out new ones (kubelet's probes: each comes on a new
      // connection and sends its request at once). Connections busy with a request are never
      // closed for this.
      OpenConnection* oldest = nullptr;
      int64_t oldest_since = ConnectionBase::kBusy;
      for (auto& [other_id, open] : conns) {
        if (open.metrics_listener != metrics_listener || open.evicting) continue;
        auto other = open.connection.lock();
        if (!other) continue;
        const int64_t since = other->waiting_since.load();
        if (since < oldest_since) {
          oldest_since = since;
          oldest = &open;
          evicted = std::move(other);
        }
      }
      if (oldest == nullptr) {
        if (auto suppressed = connection_limit_warnings.admit()) {
          log->warn(
              "connection limit {} of the {} listener reached and every connection is busy with "
              "a request: dropping a new connection ({} more dropped since the last warning)",
              limit, metrics_listener ? "metrics" : "main", *suppressed);
        }
        return std::nullopt;
      }
      oldest->evicting = true;
      ++evicting_per_listener[l];
    }
    id = ++next_conn_id;
    conns.emplace(*id, OpenConnection{c, metrics_listener});
    ++open_per_listener[l];
  }
  open_connections->add(1);
  if (evicted) evicted->evict();
  return id;
}

void HttpServer::Impl::eviction_failed(uint64_t id) {
  std::lock_guard lock(conns_mu);
  auto it = conns.find(id);
  if (it == conns.end() || !it->second.evicting) return;
  it->second.evicting = false;
  --evicting_per_listener[it->second.metrics_listener ? 1 : 0];
}

void HttpServer::Impl::return_memory_when_idle() {
  if (trim_armed.exchange(true)) return;
  net::post(control, [this] { wait_to_return_memory(); });
}

void HttpServer::Impl::wait_to_return_memory() {
  if (stopping.load()) return;
  trim_timer.expires_after(std::chrono::seconds(1));
  trim_timer.async_wait([this](error_code ec) {
    if (ec || stopping.load()) return;
    // Still busy: look again in a second, so the trim comes after the burst, not inside it.
    if (inflight_simulation_bytes.load() > 0) return wait_to_return_memory();
    trim_armed.store(false);
    return_free_memory();
  });
}

void HttpServer::Impl::remove_connection(uint64_t id) {
  bool last = false;
  {
    std::lock_guard lock(conns_mu);
    auto it = conns.find(id);
    if (it == conns.end()) return;
    const size_t l = it->second.metrics_listener ? 1 : 0;
    --open_per_listener[l];
    if (it->second.evicting) --evicting_per_listener[l];
    conns.erase(it);
    last = stopping_locked && conns.empty();
  }
  open_connections->sub(1);
  if (last && !threads_done.load()) {
    net::post(control, [this] { grace_timer.cancel(); });
  }
}

}  // namespace hamisim::server

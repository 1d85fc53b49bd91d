#include "http/client_transport.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <mutex>

#include "http/tls_context.h"

namespace hamisim::http {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

bool is_known_method(std::string_view method) {
  return bhttp::string_to_verb(method) != bhttp::verb::unknown;
}

std::string reason_phrase(int status) {
  return std::string(bhttp::obsolete_reason(static_cast<bhttp::status>(status)));
}

// Named, not anonymous: the Impl structs of the public classes below hold these types; GCC warns
// (-Wsubobject-linkage) when they come from an anonymous namespace. Named for this file, so
// unity batches see no clash.
namespace client_transport_detail {

bool is_ip_literal(const std::string& host) {
  error_code ec;
  net::ip::make_address(host, ec);
  return !ec;
}

bool cancelled(const std::atomic<bool>* cancel) {
  return cancel != nullptr && cancel->load(std::memory_order_relaxed);
}

Failure failure(Failure::Stage stage, Failure::Why why, std::string message = {}) {
  return Failure{stage, why, std::move(message)};
}

// The completion handler of every operation Connection::run drives. One handler type makes
// Beast and Asio instantiate each composed operation once per stream type rather than once
// per call site: about 40 % less compile time for this file, the build's slowest.
struct Completion {
  error_code* result;
  bool* done;
  template <class... Rest>
  void operator()(error_code ec, Rest&&...) const {
    *result = ec;
    *done = true;
  }
};

struct Connection {
  net::io_context ioc;
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
  // The ConnectionCertificate identity this connection presented (null: none).
  std::shared_ptr<const void> identity;

  beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tls) : *plain; }

  // Runs one asynchronous operation to completion on this thread. With `cancel`, polls it
  // and aborts the operation when it is set.
  template <class Start>
  error_code run(Start&& start, const std::atomic<bool>* cancel) {
    error_code result = net::error::would_block;
    bool done = false;
    start(Completion{&result, &done});
    ioc.restart();
    while (!done) {
      if (cancelled(cancel)) {
        lowest().cancel();
        error_code ignored;
        lowest().socket().close(ignored);
        while (!done && ioc.run_one() > 0) {
        }
        return net::error::operation_aborted;
      }
      if (cancel != nullptr) {
        ioc.run_one_for(std::chrono::milliseconds(50));
      } else if (ioc.run_one() == 0) {
        break;
      }
    }
    return result;
  }
  template <class F>
  error_code with_stream(F&& f) {
    if (tls) return f(*tls);
    return f(*plain);
  }
  void close() {
    error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest().socket().close(ignored);
  }
};

}  // namespace client_transport_detail
using namespace client_transport_detail;

// ---- the stream -------------------------------------------------------------------------

struct ResponseStream::Impl {
  std::unique_ptr<Connection> conn;
  bhttp::response_parser<bhttp::buffer_body> parser;
};

ResponseStream::ResponseStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ResponseStream::~ResponseStream() {
  impl_->conn->close();
}

int ResponseStream::status() const {
  return static_cast<int>(impl_->parser.get().result_int());
}

bool ResponseStream::done() const {
  return impl_->parser.is_done();
}

ResponseStream::Read ResponseStream::read_some(std::span<char> buffer, Clock::time_point deadline,
                                               const std::atomic<bool>* cancel) {
  Connection& c = *impl_->conn;
  auto& parser = impl_->parser;
  parser.get().body().data = buffer.data();
  parser.get().body().size = buffer.size();
  c.lowest().expires_at(deadline);
  error_code ec = c.with_stream([&](auto& s) {
    return c.run([&](auto&& cb) { bhttp::async_read_some(s, c.buffer, parser, std::move(cb)); },
                 cancel);
  });
  if (ec == bhttp::error::need_buffer) ec = {};
  Read out;
  out.bytes = buffer.size() - parser.get().body().size;
  if (cancelled(cancel)) {
    out.result = Read::Result::kCancelled;
  } else if (ec == beast::error::timeout) {
    out.result = Read::Result::kTimeout;
  } else if (ec == bhttp::error::end_of_stream) {
    out.result = Read::Result::kEnd;
  } else if (ec) {
    out.result = Read::Result::kError;
    out.message = "read: " + ec.message();
  }
  return out;
}

// ---- the transport ----------------------------------------------------------------------

struct ClientTransport::Impl {
  Endpoint endpoint;
  std::optional<Proxy> proxy;
  std::optional<TlsSettings> tls;
  TransportOptions options;
  std::string verify_name;    // checked against the certificate ("" = no check)
  std::string sni;            // sent in the ClientHello ("" = none)
  std::string target_prefix;  // "http://host:port" for absolute-form requests via a proxy

  mutable std::mutex mu;
  std::vector<std::unique_ptr<Connection>> idle;
  TransportStats stats;

  // Dial (through the proxy), TLS handshake; the error text names the peer.
  Result<std::unique_ptr<Connection>> connect(Clock::time_point deadline,
                                              const std::atomic<bool>* cancel,
                                              const ConnectionCertificate* certificate);
  bhttp::request<bhttp::string_body> message(const Request& request, bool keep_alive) const;

  struct Outcome {
    error_code ec;
    std::string stage;
    bool nothing_received = false;
    int status = 0;
    std::string body;
    bool keep_alive = false;
  };
  Outcome exchange(Connection& c, const Request& request, Clock::time_point deadline,
                   const std::atomic<bool>* cancel);
};

ClientTransport::ClientTransport(Endpoint endpoint, std::optional<Proxy> proxy,
                                 std::optional<TlsSettings> tls, TransportOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& im = *impl_;
  im.endpoint = std::move(endpoint);
  im.proxy = std::move(proxy);
  im.tls = std::move(tls);
  im.options = std::move(options);
  if (im.proxy && !im.tls) im.target_prefix = "http://" + im.endpoint.host_header;
  if (im.tls) {
    const std::string& name = im.tls->server_name();
    im.verify_name = name.empty() ? im.endpoint.host : name;
    if (!name.empty()) {
      im.sni = name;
    } else if (!is_ip_literal(im.endpoint.host)) {
      im.sni = im.endpoint.host;
    }
  }
}

ClientTransport::~ClientTransport() = default;

TransportStats ClientTransport::stats() const {
  std::lock_guard lock(impl_->mu);
  return impl_->stats;
}

Result<std::unique_ptr<Connection>> ClientTransport::Impl::connect(
    Clock::time_point deadline, const std::atomic<bool>* cancel,
    const ConnectionCertificate* certificate) {
  auto c = std::make_unique<Connection>();
  {
    std::lock_guard lock(mu);
    ++stats.connections_opened;
  }
  // Through a proxy the TCP connection goes to the proxy; the server's name is never resolved
  // here (the proxy does it).
  const std::string& dial_host = proxy ? proxy->host : endpoint.host;
  const uint16_t dial_port = proxy ? proxy->port : endpoint.port;
  const std::string dial_name =
      proxy ? "proxy " + dial_host + ":" + std::to_string(dial_port) : endpoint.host_header;
  std::vector<tcp::endpoint> endpoints;
  if (is_ip_literal(dial_host)) {
    endpoints.emplace_back(net::ip::make_address(dial_host), dial_port);
  } else {
    tcp::resolver resolver(c->ioc);
    tcp::resolver::results_type results;
    error_code rec = net::error::would_block;
    bool done = false;
    resolver.async_resolve(dial_host, std::to_string(dial_port),
                           [&](error_code ec, tcp::resolver::results_type r) {
                             rec = ec;
                             results = std::move(r);
                             done = true;
                           });
    while (!done && Clock::now() < deadline && !cancelled(cancel)) {
      c->ioc.run_one_for(std::chrono::milliseconds(50));
    }
    if (!done) {
      resolver.cancel();
      c->ioc.run();
      return make_error("dial tcp: lookup " + dial_host + ": timeout");
    }
    if (rec) return make_error("dial tcp: lookup " + dial_host + ": " + rec.message());
    for (const auto& entry : results) endpoints.push_back(entry.endpoint());
  }
  if (tls) {
    c->tls.emplace(c->ioc, tls->impl().ctx);
    SSL* handle = c->tls->native_handle();
    if (!sni.empty()) SSL_set_tlsext_host_name(handle, sni.c_str());
    if (tls->verifies() && !verify_name.empty()) {
      X509_VERIFY_PARAM* param = SSL_get0_param(handle);
      if (is_ip_literal(verify_name)) {
        X509_VERIFY_PARAM_set1_ip_asc(param, verify_name.c_str());
      } else {
        X509_VERIFY_PARAM_set1_host(param, verify_name.c_str(), 0);
      }
    }
    if (certificate != nullptr) {
      BIO* cert_bio =
          BIO_new_mem_buf(certificate->cert_pem.data(), int(certificate->cert_pem.size()));
      BIO* key_bio = BIO_new_mem_buf(certificate->key_pem.data(), int(certificate->key_pem.size()));
      X509* x509 = PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr);
      EVP_PKEY* pkey = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
      const bool ok = x509 != nullptr && pkey != nullptr &&
                      SSL_use_certificate(handle, x509) == 1 &&
                      SSL_use_PrivateKey(handle, pkey) == 1 && SSL_check_private_key(handle) == 1;
      X509_free(x509);
      EVP_PKEY_free(pkey);
      BIO_free(cert_bio);
      BIO_free(key_bio);
      if (!ok) {
        return make_error(certificate->owner +
                          ": client certificate or key unusable: " + take_openssl_errors());
      }
      c->identity = certificate->identity;
    }
  } else {
    c->plain.emplace(c->ioc);
  }
  c->lowest().expires_at(deadline);
  error_code ec =
      c->run([&](auto&& cb) { c->lowest().async_connect(endpoints, std::move(cb)); }, cancel);
  if (ec == beast::error::timeout) return make_error("dial tcp " + dial_name + ": i/o timeout");
  if (ec) return make_error("dial tcp " + dial_name + ": " + ec.message());
  c->lowest().socket().set_option(tcp::no_delay(true), ec);
  if (proxy && c->tls) {
    // HTTP CONNECT: the proxy opens a tunnel to the server, TLS runs inside it.
    bhttp::request<bhttp::empty_body> connect_req{
        bhttp::verb::connect, endpoint.host + ":" + std::to_string(endpoint.port), 11};
    if (endpoint.host.find(':') != std::string::npos) {
      connect_req.target("[" + endpoint.host + "]:" + std::to_string(endpoint.port));
    }
    connect_req.set(bhttp::field::host, connect_req.target());
    connect_req.set(bhttp::field::user_agent, options.user_agent);
    if (!proxy->authorization.empty()) {
      connect_req.set(bhttp::field::proxy_authorization, proxy->authorization);
    }
    ec = c->run([&](auto&& cb) { bhttp::async_write(c->lowest(), connect_req, std::move(cb)); },
                cancel);
    if (ec) return make_error(dial_name + ": CONNECT: " + ec.message());
    bhttp::response_parser<bhttp::empty_body> parser;
    parser.skip(true);  // a CONNECT response has no body
    beast::flat_buffer buf;
    ec = c->run(
        [&](auto&& cb) { bhttp::async_read_header(c->lowest(), buf, parser, std::move(cb)); },
        cancel);
    if (ec) return make_error(dial_name + ": CONNECT: " + ec.message());
    const int status = int(parser.get().result_int());
    if (status < 200 || status > 299) {
      return make_error(dial_name + ": CONNECT " + std::string(connect_req.target()) + ": " +
                        std::to_string(status) + " " + std::string(parser.get().reason()));
    }
    if (buf.size() != 0) return make_error(dial_name + ": CONNECT: data before the TLS handshake");
  }
  if (c->tls) {
    ec =
        c->run([&](auto&& cb) { c->tls->async_handshake(ssl::stream_base::client, std::move(cb)); },
               cancel);
    if (ec) {
      std::string why = ec == beast::error::timeout ? std::string("i/o timeout") : ec.message();
      const long verify_result = SSL_get_verify_result(c->tls->native_handle());
      if (tls->verifies() && verify_result != X509_V_OK) {
        why += " (certificate verification: " +
               std::string(X509_verify_cert_error_string(verify_result)) + ")";
      }
      return make_error("TLS handshake with " + endpoint.host_header + ": " + why);
    }
  }
  return c;
}

bhttp::request<bhttp::string_body> ClientTransport::Impl::message(const Request& request,
                                                                  bool keep_alive) const {
  bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(request.method),
                                         target_prefix + std::string(request.target), 11};
  req.set(bhttp::field::host, endpoint.host_header);
  req.set(bhttp::field::user_agent, options.user_agent);
  for (const auto& [name, value] : request.headers) req.set(name, value);
  if (!tls && proxy && !proxy->authorization.empty()) {
    req.set(bhttp::field::proxy_authorization, proxy->authorization);
  }
  if (!request.content_type.empty()) {
    req.set(bhttp::field::content_type, request.content_type);
    req.body() = std::string(request.body);
  }
  req.keep_alive(keep_alive);
  req.prepare_payload();
  return req;
}

ClientTransport::Impl::Outcome ClientTransport::Impl::exchange(Connection& c,
                                                               const Request& request,
                                                               Clock::time_point deadline,
                                                               const std::atomic<bool>* cancel) {
  Outcome out;
  {
    std::lock_guard lock(mu);
    ++stats.exchanges;
  }
  auto req = message(request, true);
  c.lowest().expires_at(deadline);
  out.ec = c.with_stream([&](auto& s) {
    return c.run([&](auto&& cb) { bhttp::async_write(s, req, std::move(cb)); }, cancel);
  });
  if (out.ec) {
    out.stage = "write";
    out.nothing_received = true;
    return out;
  }
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(options.max_response_bytes);
  parser.header_limit(static_cast<std::uint32_t>(options.max_header_bytes));
  out.ec = c.with_stream([&](auto& s) {
    return c.run([&](auto&& cb) { bhttp::async_read(s, c.buffer, parser, std::move(cb)); }, cancel);
  });
  if (out.ec) {
    out.stage = "read";
    out.nothing_received = !parser.got_some();
    return out;
  }
  auto& msg = parser.get();
  out.status = static_cast<int>(msg.result_int());
  out.body = std::move(msg.body());
  out.keep_alive = msg.keep_alive() && !parser.need_eof();
  return out;
}

RoundTrip ClientTransport::round_trip(const Request& request, Clock::time_point deadline,
                                      const std::atomic<bool>* cancel,
                                      const ConnectionCertificate* certificate) {
  Impl& im = *impl_;
  using Stage = Failure::Stage;
  using Why = Failure::Why;
  const std::shared_ptr<const void> identity =
      certificate != nullptr ? certificate->identity : nullptr;
  RoundTrip out;
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<Connection> conn;
    bool reused = false;
    {
      std::lock_guard lock(im.mu);
      while (attempt == 0 && !im.idle.empty() && !conn) {
        conn = std::move(im.idle.back());
        im.idle.pop_back();
        if (conn->identity != identity) {
          conn->close();  // made with a client certificate that has been replaced
          conn.reset();
        }
      }
      reused = conn != nullptr;
    }
    if (!conn) {
      if (Clock::now() >= deadline) {
        out.failure = failure(Stage::kConnect, Why::kTimeout);
        return out;
      }
      auto fresh = im.connect(deadline, cancel, certificate);
      if (!fresh) {
        out.failure = cancelled(cancel)
                          ? failure(Stage::kConnect, Why::kCancelled)
                          : failure(Stage::kConnect, Why::kError, fresh.error().message);
        return out;
      }
      conn = std::move(*fresh);
    }
    Impl::Outcome outcome = im.exchange(*conn, request, deadline, cancel);
    if (!outcome.ec) {
      if (outcome.keep_alive) {
        std::lock_guard lock(im.mu);
        if (im.idle.size() < im.options.max_idle_connections) im.idle.push_back(std::move(conn));
      }
      if (conn) conn->close();
      out.response = Response{outcome.status, std::move(outcome.body)};
      return out;
    }
    conn->close();
    const Stage stage = outcome.stage == "write" ? Stage::kWrite : Stage::kRead;
    std::string message = outcome.stage + ": " + outcome.ec.message();
    if (cancelled(cancel)) {
      out.failure = failure(stage, Why::kCancelled, std::move(message));
      return out;
    }
    if (outcome.ec == beast::error::timeout || Clock::now() >= deadline) {
      out.failure = failure(stage, Why::kTimeout, std::move(message));
      return out;
    }
    // A kept-alive connection the server closed while it sat idle: once more on a new one.
    if (reused && outcome.nothing_received) continue;
    const Why why = outcome.ec == bhttp::error::body_limit ? Why::kBodyLimit : Why::kError;
    out.failure = failure(stage, why, std::move(message));
    return out;
  }
}

ClientTransport::Opened ClientTransport::open_stream(const Request& request,
                                                     Clock::time_point deadline,
                                                     const std::atomic<bool>* cancel,
                                                     const ConnectionCertificate* certificate) {
  Impl& im = *impl_;
  using Stage = Failure::Stage;
  using Why = Failure::Why;
  Opened out;
  auto conn = im.connect(deadline, cancel, certificate);
  if (!conn) {
    out.failure = cancelled(cancel) ? failure(Stage::kConnect, Why::kCancelled)
                                    : failure(Stage::kConnect, Why::kError, conn.error().message);
    return out;
  }
  auto impl = std::make_unique<ResponseStream::Impl>();
  impl->conn = std::move(*conn);
  Connection& c = *impl->conn;
  auto& parser = impl->parser;
  auto stream = std::make_unique<ResponseStream>(std::move(impl));
  // After each step a set cancel flag wins over the step's own error.
  auto failed = [&](Stage stage, const error_code& ec) {
    if (cancelled(cancel)) {
      out.failure = failure(stage, Why::kCancelled);
    } else if (ec) {
      out.failure = failure(stage, Why::kError,
                            (stage == Stage::kWrite ? "write: " : "read: ") + ec.message());
    }
    return cancelled(cancel) || ec;
  };
  auto req = im.message(request, false);
  c.lowest().expires_at(deadline);
  error_code ec = c.with_stream([&](auto& s) {
    return c.run([&](auto&& cb) { bhttp::async_write(s, req, std::move(cb)); }, cancel);
  });
  if (failed(Stage::kWrite, ec)) return out;
  parser.body_limit(boost::none);
  parser.header_limit(static_cast<std::uint32_t>(im.options.max_header_bytes));
  ec = c.with_stream([&](auto& s) {
    return c.run([&](auto&& cb) { bhttp::async_read_header(s, c.buffer, parser, std::move(cb)); },
                 cancel);
  });
  if (failed(Stage::kRead, ec)) return out;
  out.stream = std::move(stream);
  return out;
}

}  // namespace hamisim::http

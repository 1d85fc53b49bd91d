#include "http_test_client.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>

#include <algorithm>
#include <optional>
#include <utility>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace hamisim::testing {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;

namespace {
bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}
}  // namespace

std::string_view ClientResponse::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (iequals(k, name)) return v;
  }
  return {};
}

struct HttpTestClient::Impl {
  ClientOptions options;
  net::io_context ioc;
  ssl::context ctx{ssl::context::tls_client};
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
  bool head_request = false;  // the next response answers HEAD: it has no body

  beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tls) : *plain; }

  // Runs one asynchronous operation to completion under the per-operation timeout.
  template <class Start>
  error_code run(Start&& start) {
    error_code result = net::error::would_block;
    bool done = false;
    lowest().expires_after(options.timeout);
    start([&](error_code ec, auto&&...) {
      result = ec;
      done = true;
    });
    ioc.restart();
    while (!done && ioc.run_one() > 0) {
    }
    return result;
  }

  template <class F>
  error_code with_stream(F&& f) {
    if (tls) return f(*tls);
    return f(*plain);
  }
};

HttpTestClient::HttpTestClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpTestClient::~HttpTestClient() {
  close();
}

Result<std::unique_ptr<HttpTestClient>> HttpTestClient::connect(const ClientOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  error_code ec;
  auto addr = net::ip::make_address(options.host, ec);
  if (ec) return make_error("bad host " + options.host);
  tcp::endpoint ep(addr, options.port);

  if (options.tls) {
    impl->ctx.set_options(ssl::context::no_sslv2 | ssl::context::no_sslv3);
    if (!options.ca_file.empty()) {
      impl->ctx.load_verify_file(options.ca_file, ec);
      if (ec) return make_error("load CA: " + ec.message());
    }
    impl->ctx.set_verify_mode(ssl::verify_peer);
    if (options.max_tls_version != 0) {
      SSL_CTX_set_max_proto_version(impl->ctx.native_handle(), options.max_tls_version);
    }
    if (!options.cert_file.empty()) {
      impl->ctx.use_certificate_chain_file(options.cert_file, ec);
      if (ec) return make_error("load client cert: " + ec.message());
      impl->ctx.use_private_key_file(options.key_file, ssl::context::pem, ec);
      if (ec) return make_error("load client key: " + ec.message());
    }
    impl->tls.emplace(impl->ioc, impl->ctx);
    std::string name = options.verify_name.empty() ? options.host : options.verify_name;
    X509_VERIFY_PARAM* param = SSL_get0_param(impl->tls->native_handle());
    error_code ip_ec;
    net::ip::make_address(name, ip_ec);
    if (!ip_ec) {
      X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
    } else {
      X509_VERIFY_PARAM_set1_host(param, name.c_str(), 0);
      SSL_set_tlsext_host_name(impl->tls->native_handle(), name.c_str());
    }
  } else {
    impl->plain.emplace(impl->ioc);
  }

  ec = impl->run([&](auto&& cb) { impl->lowest().async_connect(ep, cb); });
  if (ec) return make_error("connect: " + ec.message());
  if (impl->tls) {
    ec = impl->run([&](auto&& cb) { impl->tls->async_handshake(ssl::stream_base::client, cb); });
    if (ec) return make_error("tls handshake: " + ec.message());
  }
  return std::unique_ptr<HttpTestClient>(new HttpTestClient(std::move(impl)));
}

Result<ClientResponse> HttpTestClient::request(std::string_view method, std::string_view target,
                                               std::string_view body,
                                               const RequestHeaders& headers) {
  http::request<http::string_body> req;
  req.method_string(method);
  req.target(target);
  req.version(11);
  req.set(http::field::host, impl_->options.host);
  bool has_type = false;
  for (const auto& [k, v] : headers) {
    req.set(k, v);
    has_type = has_type || iequals(k, "Content-Type");
  }
  if (!body.empty() && !has_type) req.set(http::field::content_type, "application/json");
  req.body() = std::string(body);
  req.prepare_payload();

  impl_->head_request = method == "HEAD";
  error_code write_ec = impl_->with_stream(
      [&](auto& s) { return impl_->run([&](auto&& cb) { http::async_write(s, req, cb); }); });
  // A server may answer (413) and stop reading before the whole body is written; still try
  // to read its response.
  auto res = read_response();
  if (!res && write_ec)
    return make_error(res.error().message + " (write: " + write_ec.message() + ")");
  return res;
}

Result<ClientResponse> HttpTestClient::read_response() {
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  parser.skip(std::exchange(impl_->head_request, false));
  error_code ec = impl_->with_stream([&](auto& s) {
    return impl_->run([&](auto&& cb) { http::async_read(s, impl_->buffer, parser, cb); });
  });
  if (ec) return make_error("read response: " + ec.message());
  auto& msg = parser.get();
  ClientResponse out;
  out.status = static_cast<int>(msg.result_int());
  out.body = std::move(msg.body());
  out.keep_alive = msg.keep_alive();
  for (const auto& f : msg) {
    out.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
  }
  return out;
}

Status HttpTestClient::write_raw(std::string_view bytes) {
  error_code ec = impl_->with_stream([&](auto& s) {
    return impl_->run([&](auto&& cb) { net::async_write(s, net::buffer(bytes), cb); });
  });
  if (ec) return make_error("write: " + ec.message());
  return ok_status();
}

Result<std::string> HttpTestClient::read_until_close() {
  std::string out(static_cast<const char*>(impl_->buffer.data().data()), impl_->buffer.size());
  impl_->buffer.consume(impl_->buffer.size());
  auto deadline = std::chrono::steady_clock::now() + impl_->options.timeout;
  char chunk[16384];
  for (;;) {
    size_t n = 0;
    error_code ec = impl_->with_stream([&](auto& s) {
      return impl_->run([&](auto&& cb) {
        s.async_read_some(net::buffer(chunk), [&, cb](error_code e, size_t got) {
          n = got;
          cb(e);
        });
      });
    });
    out.append(chunk, n);
    if (ec == beast::error::timeout || std::chrono::steady_clock::now() > deadline) {
      return make_error("connection still open; received: " + out);
    }
    if (ec) return out;  // eof, reset, stream truncated: the server closed
  }
}

std::string HttpTestClient::server_common_name() const {
  if (!impl_->tls) return {};
  X509* cert = SSL_get0_peer_certificate(impl_->tls->native_handle());
  if (cert == nullptr) return {};
  char buf[256] = {};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, buf, sizeof buf);
  return buf;
}

void HttpTestClient::shutdown_send() {
  error_code ec;
  impl_->lowest().socket().shutdown(tcp::socket::shutdown_send, ec);
}

void HttpTestClient::close() {
  if (!impl_) return;
  error_code ec;
  impl_->lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
  impl_->lowest().close();
}

Result<ClientResponse> http_request(const ClientOptions& options, std::string_view method,
                                    std::string_view target, std::string_view body,
                                    const RequestHeaders& headers) {
  auto client = HttpTestClient::connect(options);
  if (!client) return client.error();
  return client.value()->request(method, target, body, headers);
}

std::string non_loopback_ipv4() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return {};
  std::string found;
  for (ifaddrs* i = list; i != nullptr && found.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    if ((i->ifa_flags & IFF_UP) == 0 || (i->ifa_flags & IFF_LOOPBACK) != 0) continue;
    char text[INET_ADDRSTRLEN] = {};
    const auto* in = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    if (inet_ntop(AF_INET, &in->sin_addr, text, sizeof text) != nullptr) found = text;
  }
  freeifaddrs(list);
  return found;
}

}  // namespace hamisim::testing

#pragma once
// An HTTP/1.1 client transport to one server: keep-alive connections in a pool, TLS
// (TlsSettings), an optional http:// proxy (a CONNECT tunnel for https servers, absolute-form
// requests with Proxy-Authorization for http ones), one deadline per exchange, cancellation
// through an atomic flag, and limits on response headers and bodies. It knows nothing of what
// it carries: callers (the Kubernetes client, the extender client) add their headers, map
// statuses and word the failures. Beast, Asio and OpenSSL stay behind the pimpl.
//
// Failures are values. Connect failures carry Go-like texts that name the peer:
//   dial tcp: lookup <host>: <why>          dial tcp <host:port>: <why | i/o timeout>
//   TLS handshake with <host:port>: <why> (certificate verification: <x509 reason>)
//   proxy <host:port>: CONNECT <target>: <status> <reason>
// write and read failures "write: <why>" / "read: <why>".
//
// Every method is thread-safe; a round trip runs on the calling thread.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http/tls_settings.h"

namespace hamisim::http {

using Clock = std::chrono::steady_clock;

// The server: where to dial and what to send as Host.
struct Endpoint {
  std::string host;  // name or IP literal, IPv6 without brackets
  uint16_t port = 0;
  std::string host_header;  // host[:port] as written in the URL
};

// An http:// proxy: the TCP connection goes to it and it resolves the server's name.
struct Proxy {
  std::string host;
  uint16_t port = 0;
  std::string authorization;  // Proxy-Authorization value, "" for none
};

struct TransportOptions {
  std::string user_agent = "hamisim";
  size_t max_idle_connections = SIZE_MAX;
  size_t max_response_bytes = size_t(512) << 20;
  size_t max_header_bytes = 8 << 10;
};

// A client certificate for single connections (an exec plugin's, which rotates), presented
// in addition to TlsSettings'. Pooled connections are reused only for the same identity.
struct ConnectionCertificate {
  std::shared_ptr<const void> identity;
  std::string_view cert_pem, key_pem;
  std::string owner;  // names it in errors: "<owner>: client certificate or key unusable: ..."
};

struct Request {
  std::string_view method;  // must satisfy is_known_method
  std::string_view target;  // origin form: path and query
  std::vector<std::pair<std::string_view, std::string_view>> headers;
  // With a content type the body is sent (even empty) with that Content-Type.
  std::string_view content_type;
  std::string_view body;
};

struct Response {
  int status = 0;
  std::string body;
};

struct Failure {
  enum class Stage { kConnect, kWrite, kRead };
  enum class Why {
    kError,      // `message` says what
    kCancelled,  // the cancel flag was set
    kTimeout,    // the deadline passed
    kBodyLimit,  // the response body exceeded max_response_bytes
  };
  Stage stage = Stage::kConnect;
  Why why = Why::kError;
  std::string message;
};

// One request/response: the response (any status), or why none arrived.
struct RoundTrip {
  std::optional<Response> response;
  Failure failure;
  bool ok() const { return response.has_value(); }
};

// A response whose body is read piece by piece on a connection of its own (a watch).
class ResponseStream {
 public:
  ~ResponseStream();  // closes the connection
  ResponseStream(const ResponseStream&) = delete;
  ResponseStream& operator=(const ResponseStream&) = delete;

  int status() const;
  // The whole body has been read.
  bool done() const;

  struct Read {
    enum class Result { kData, kEnd, kCancelled, kTimeout, kError };
    Result result = Result::kData;
    size_t bytes = 0;     // body bytes placed in the buffer, also with kEnd
    std::string message;  // kError: "read: <why>"
  };
  // Reads body bytes that arrive before `deadline`. kEnd: the server closed the connection.
  Read read_some(std::span<char> buffer, Clock::time_point deadline,
                 const std::atomic<bool>* cancel);

  struct Impl;
  explicit ResponseStream(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

struct TransportStats {
  uint64_t connections_opened = 0;  // dial attempts, failed ones included
  uint64_t exchanges = 0;           // requests written, retries included
};

class ClientTransport {
 public:
  // `tls` set: https. With a proxy and https, a CONNECT tunnel.
  ClientTransport(Endpoint endpoint, std::optional<Proxy> proxy, std::optional<TlsSettings> tls,
                  TransportOptions options);
  ~ClientTransport();
  ClientTransport(const ClientTransport&) = delete;
  ClientTransport& operator=(const ClientTransport&) = delete;

  // Sends `request` on an idle connection of the pool, or a new one; the connection returns
  // to the pool when the server keeps it alive. A pooled connection the server closed while
  // idle (nothing received) is replaced once, within the same deadline. Failures, checked in
  // this order: kCancelled, kTimeout (before dialling, or an exchange that ran out of time),
  // kBodyLimit, kError.
  RoundTrip round_trip(const Request& request, Clock::time_point deadline,
                       const std::atomic<bool>* cancel = nullptr,
                       const ConnectionCertificate* certificate = nullptr);

  // Opens a new connection (never pooled), sends `request` with Connection: close and reads
  // the response headers. The body has no size limit: the caller bounds what it keeps.
  struct Opened {
    std::unique_ptr<ResponseStream> stream;
    Failure failure;
  };
  Opened open_stream(const Request& request, Clock::time_point deadline,
                     const std::atomic<bool>* cancel = nullptr,
                     const ConnectionCertificate* certificate = nullptr);

  TransportStats stats() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// An HTTP method Beast knows ("GET", "PATCH", ...).
bool is_known_method(std::string_view method);
// The standard reason phrase of a status ("Conflict"), "<unknown-status>" for others.
std::string reason_phrase(int status);

}  // namespace hamisim::http

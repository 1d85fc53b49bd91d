#pragma once
// A small blocking HTTP/1.1 client for tests against the real server over loopback: optional
// TLS (server verified against a CA, optional client certificate), keep-alive, raw byte
// access for malformed or slow requests, and a timeout on every operation so that a broken
// server fails a test instead of hanging it.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/result.h"

namespace hamisim::testing {

struct ClientOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  bool tls = false;
  std::string ca_file;              // verify the server against this CA (required with tls)
  std::string cert_file, key_file;  // client certificate, optional
  std::string verify_name;          // expected server name/IP; default: host
  int max_tls_version = 0;          // e.g. TLS1_2_VERSION; 0 = library default
  std::chrono::milliseconds timeout{std::chrono::seconds(10)};  // per operation
};

struct ClientResponse {
  int status = 0;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  bool keep_alive = false;
  std::string_view header(std::string_view name) const;  // case-insensitive; empty if absent
};

using RequestHeaders = std::vector<std::pair<std::string, std::string>>;

class HttpTestClient {
 public:
  // Connects (and completes the TLS handshake).
  static Result<std::unique_ptr<HttpTestClient>> connect(const ClientOptions& options);
  ~HttpTestClient();

  // A HEAD request's response is read without a body.
  Result<ClientResponse> request(std::string_view method, std::string_view target,
                                 std::string_view body = {}, const RequestHeaders& headers = {});

  // Raw bytes, for requests the normal API cannot produce.
  Status write_raw(std::string_view bytes);
  // Reads one response (e.g. after pipelined requests were written with write_raw).
  Result<ClientResponse> read_response();
  // Reads until the server closes the connection; returns what arrived. An error if the
  // connection is still open after the timeout.
  Result<std::string> read_until_close();

  // Subject CN of the server certificate (TLS only).
  std::string server_common_name() const;

  // Half-closes a plain connection (the server sees the end of its input).
  void shutdown_send();

  void close();

  struct Impl;

 private:
  explicit HttpTestClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// An IPv4 address of this machine that is not loopback, so a test can call a server as a peer
// "from the network" without leaving the machine; empty when there is none.
std::string non_loopback_ipv4();

// connect + one request.
Result<ClientResponse> http_request(const ClientOptions& options, std::string_view method,
                                    std::string_view target, std::string_view body = {},
                                    const RequestHeaders& headers = {});

}  // namespace hamisim::testing

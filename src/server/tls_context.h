#pragma once
// TLS of the server's main listener (private to hamisim_server_core): the OpenSSL context built
// from ServerConfig (TLS 1.2 or later, Mozilla's intermediate suites, client certificates
// verified against --client-ca when given), rebuilt when its files change; and the identities
// a verified client certificate carries.

#include <openssl/ssl.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/logger.h>
#include <boost/asio/ssl/context.hpp>

#include "model/result.h"
#include "server/http_server.h"
#include "server/metrics.h"

namespace hamisim::server {

namespace ssl = boost::asio::ssl;

// What identifies a version of a file well enough to notice a replacement (Kubernetes Secret
// volumes swap a symlink; editors rewrite in place).
struct FileStamp {
  bool exists = false;
  int64_t mtime_ns = 0;
  int64_t size = 0;
  uint64_t inode = 0;
  bool operator==(const FileStamp&) const = default;
};
FileStamp stamp_of(const std::string& path);

Result<std::shared_ptr<ssl::context>> build_tls_context(const ServerConfig& c);

// Subject CN(s) first, then DNS SANs, of the verified peer certificate. Values with control
// characters (or embedded NULs) are dropped: they could not be listed in an allow list anyway.
std::vector<std::string> peer_identities(SSL* ssl);

// The TLS context new connections use, reloaded from ServerConfig's files.
class TlsProvider {
 public:
  TlsProvider(const ServerConfig& config, spdlog::logger& log, Counter& reload_ok,
              Counter& reload_failed)
      : config_(config), log_(log), reload_ok_(reload_ok), reload_failed_(reload_failed) {}

  // Builds the first context; its error is the server's.
  Status load();

  // The context for a new connection; re-reads the files when they changed since the last
  // check, at most once per reload interval. A broken new file keeps the old context.
  std::shared_ptr<ssl::context> current();

 private:
  using Stamps = std::array<FileStamp, 3>;
  Stamps stat_all() const {
    return {stamp_of(config_.tls_cert), stamp_of(config_.tls_key), stamp_of(config_.client_ca)};
  }

  const ServerConfig& config_;
  spdlog::logger& log_;
  Counter& reload_ok_;
  Counter& reload_failed_;
  std::mutex mu_;
  std::shared_ptr<ssl::context> ctx_;
  Stamps loaded_;
  std::optional<Stamps> failed_;
  std::chrono::steady_clock::time_point last_check_;
};

}  // namespace hamisim::server

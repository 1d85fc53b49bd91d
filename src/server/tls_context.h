#pragma once
// TLS of the server's main listener (private to hamisim_server_core): the OpenSSL context built
// from ServerConfig (TLS 1.2 or later, Mozilla's intermediate suites, client certificates
// verified against --client-ca when given), rebuilt when its files change; and the identities
// a verified client certificate carries.

#include <openssl/ssl.h>

#include <array>
#include <chrono>
#include <condition_variable>
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

// The TLS context new connections use, reloaded from ServerConfig's files by a thread of its
// own: the files are checked once per reload interval and rebuilt when they changed, never on
// a thread that serves connections, so a certificate on a hung mount (a stat or a read that
// never returns) cannot stall the accepting thread, new connections, probes or shutdown; they
// keep the last good context. A broken new file keeps it too.
class TlsProvider {
 public:
  TlsProvider(const ServerConfig& config, spdlog::logger& log, Counter& reload_ok,
              Counter& reload_failed);
  // Stops the reloader without waiting for it: a thread stuck in a file system call is left
  // behind (it holds nothing of the server's) and ends when the call returns.
  ~TlsProvider();
  TlsProvider(const TlsProvider&) = delete;
  TlsProvider& operator=(const TlsProvider&) = delete;

  // Builds the first context (its error is the server's) and starts the reloader.
  Status load();

  // The context for a new connection: the newest the reloader built. No file is read here;
  // the reloader's results are counted and logged here.
  std::shared_ptr<ssl::context> current();

 private:
  using Stamps = std::array<FileStamp, 3>;
  // What the reloader shares with the provider, owned by both.
  struct Reload {
    ServerConfig config;  // its own copy: the thread may outlive the server
    std::mutex mu;
    std::condition_variable wake;
    bool stopping = false;                // guarded by mu
    std::shared_ptr<ssl::context> built;  // guarded by mu: the newest context, not yet taken
    int reloads = 0;                      // guarded by mu: contexts built since taken
    std::vector<std::string> errors;      // guarded by mu: failed reloads, not yet taken
    Stamps stat_all() const {
      return {stamp_of(config.tls_cert), stamp_of(config.tls_key), stamp_of(config.client_ca)};
    }
  };
  static void run_reloader(std::shared_ptr<Reload> reload, Stamps loaded);

  spdlog::logger& log_;
  Counter& reload_ok_;
  Counter& reload_failed_;
  std::shared_ptr<Reload> reload_;
  std::mutex mu_;
  std::shared_ptr<ssl::context> ctx_;  // guarded by mu_
};

}  // namespace hamisim::server

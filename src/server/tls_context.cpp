#include "server/tls_context.h"

#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <algorithm>
#include <thread>

#include <fmt/format.h>

namespace hamisim::server {

using error_code = boost::system::error_code;
using Clock = std::chrono::steady_clock;

namespace {

std::string openssl_error_text(const error_code& ec) {
  std::string msg = ec.message();
  unsigned long e;
  char buf[256];
  while ((e = ERR_get_error()) != 0) {
    ERR_error_string_n(e, buf, sizeof buf);
    msg += "; ";
    msg += buf;
  }
  return msg;
}

// Mozilla "intermediate" TLS 1.2 suites; TLS 1.3 suites are OpenSSL's defaults.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

}  // namespace

FileStamp stamp_of(const std::string& path) {
  FileStamp f;
  if (path.empty()) return f;
  struct stat st = {};
  if (::stat(path.c_str(), &st) != 0) return f;
  f.exists = true;
  f.mtime_ns = int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  f.size = st.st_size;
  f.inode = st.st_ino;
  return f;
}

Result<std::shared_ptr<ssl::context>> build_tls_context(const ServerConfig& c) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = ctx->native_handle();
  error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                       ssl::context::single_dh_use | ssl::context::no_compression,
                   ec);
  if (ec || SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1 ||
      SSL_CTX_set_cipher_list(native, kTls12Ciphers) != 1) {
    return make_error("tls: cannot configure protocol versions: " + openssl_error_text(ec));
  }
  ctx->use_certificate_chain_file(c.tls_cert, ec);
  if (ec) {
    return make_error(
        fmt::format("tls: loading certificate {}: {}", c.tls_cert, openssl_error_text(ec)));
  }
  ctx->use_private_key_file(c.tls_key, ssl::context::pem, ec);
  if (ec) {
    return make_error(
        fmt::format("tls: loading private key {}: {}", c.tls_key, openssl_error_text(ec)));
  }
  if (SSL_CTX_check_private_key(native) != 1) {
    return make_error(fmt::format("tls: private key {} does not match certificate {}: {}",
                                  c.tls_key, c.tls_cert, openssl_error_text({})));
  }
  if (!c.client_ca.empty()) {
    ctx->load_verify_file(c.client_ca, ec);
    if (ec) {
      return make_error(
          fmt::format("tls: loading client CA {}: {}", c.client_ca, openssl_error_text(ec)));
    }
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(c.client_ca.c_str());
    if (names == nullptr) {
      return make_error(fmt::format("tls: client CA {} holds no certificate: {}", c.client_ca,
                                    openssl_error_text({})));
    }
    SSL_CTX_set_client_CA_list(native, names);  // takes ownership
    ctx->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
    // Needed for session resumption when client certificates are verified.
    static constexpr unsigned char kSessionContext[] = "hamisim";
    SSL_CTX_set_session_id_context(native, kSessionContext, sizeof kSessionContext - 1);
  }
  ERR_clear_error();
  return ctx;
}

std::vector<std::string> peer_identities(SSL* ssl) {
  std::vector<std::string> out;
  X509* cert = SSL_get0_peer_certificate(ssl);
  if (cert == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return out;
  auto add = [&](const unsigned char* data, int len) {
    if (data == nullptr || len <= 0) return;
    std::string_view v(reinterpret_cast<const char*>(data), size_t(len));
    if (std::any_of(v.begin(), v.end(), [](unsigned char ch) { return ch < 0x20 || ch == 0x7f; }))
      return;
    if (std::find(out.begin(), out.end(), v) == out.end()) out.emplace_back(v);
  };
  X509_NAME* subject = X509_get_subject_name(cert);
  for (int idx = -1; (idx = X509_NAME_get_index_by_NID(subject, NID_commonName, idx)) >= 0;) {
    ASN1_STRING* s = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, idx));
    unsigned char* utf8 = nullptr;
    int len = ASN1_STRING_to_UTF8(&utf8, s);
    if (len > 0) add(utf8, len);
    OPENSSL_free(utf8);
  }
  auto* sans =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (sans != nullptr) {
    for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
      const GENERAL_NAME* gn = sk_GENERAL_NAME_value(sans, i);
      if (gn->type == GEN_DNS) {
        add(ASN1_STRING_get0_data(gn->d.dNSName), ASN1_STRING_length(gn->d.dNSName));
      }
    }
    GENERAL_NAMES_free(sans);
  }
  return out;
}

TlsProvider::TlsProvider(const ServerConfig& config, spdlog::logger& log, Counter& reload_ok,
                         Counter& reload_failed)
    : log_(log),
      reload_ok_(reload_ok),
      reload_failed_(reload_failed),
      reload_(std::make_shared<Reload>()) {
  reload_->config = config;
  reload_->config.logger.reset();  // the reloader logs nothing itself
}

TlsProvider::~TlsProvider() {
  std::lock_guard lock(reload_->mu);
  reload_->stopping = true;
  reload_->wake.notify_all();
}

Status TlsProvider::load() {
  Stamps stamps = reload_->stat_all();
  auto ctx = build_tls_context(reload_->config);
  if (!ctx) return ctx.error();
  {
    std::lock_guard lock(mu_);
    ctx_ = std::move(ctx.value());
  }
  std::thread(run_reloader, reload_, stamps).detach();
  return ok_status();
}

void TlsProvider::run_reloader(std::shared_ptr<Reload> reload, Stamps loaded) {
  std::optional<Stamps> failed;
  for (;;) {
    {
      std::unique_lock lock(reload->mu);
      reload->wake.wait_for(lock, reload->config.tls_reload_interval,
                            [&] { return reload->stopping; });
      if (reload->stopping) return;
    }
    // No lock held: these may block for as long as the file system does.
    const Stamps stamps = reload->stat_all();
    if (stamps == loaded || (failed && stamps == *failed)) continue;
    auto ctx = build_tls_context(reload->config);
    std::lock_guard lock(reload->mu);
    if (reload->stopping) return;
    if (ctx) {
      reload->built = std::move(ctx.value());
      ++reload->reloads;
      loaded = stamps;
      failed.reset();
    } else {
      reload->errors.push_back(ctx.error().message);
      failed = stamps;
    }
  }
}

std::shared_ptr<ssl::context> TlsProvider::current() {
  std::shared_ptr<ssl::context> built;
  std::vector<std::string> errors;
  int reloads = 0;
  {
    std::lock_guard lock(reload_->mu);
    built = std::move(reload_->built);
    reloads = std::exchange(reload_->reloads, 0);
    errors.swap(reload_->errors);
  }
  for (const std::string& e : errors) {
    reload_failed_.inc();
    log_.error("{}; keeping the previous certificate", e);
  }
  std::lock_guard lock(mu_);
  if (built) {
    ctx_ = std::move(built);
    for (int i = 0; i < reloads; ++i) reload_ok_.inc();
    const ServerConfig& c = reload_->config;
    log_.info("tls: reloaded certificate {} and key {}", c.tls_cert, c.tls_key);
  }
  return ctx_;
}

}  // namespace hamisim::server

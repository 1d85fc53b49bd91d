#include "http/tls_settings.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/buffer.hpp>

#include "http/tls_context.h"

namespace hamisim::http {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using error_code = boost::system::error_code;

namespace {

Status done(const error_code& ec) {
  if (ec) return make_error(ec.message());
  return ok_status();
}

}  // namespace

TlsSettings::TlsSettings() : impl_(std::make_unique<Impl>()) {
  ssl::context& ctx = impl_->ctx;
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                  ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
  ctx.set_verify_mode(ssl::verify_peer);
}

TlsSettings::~TlsSettings() = default;
TlsSettings::TlsSettings(TlsSettings&&) noexcept = default;
TlsSettings& TlsSettings::operator=(TlsSettings&&) noexcept = default;

void TlsSettings::skip_verification() {
  impl_->verify = false;
  impl_->ctx.set_verify_mode(ssl::verify_none);
}

bool TlsSettings::verifies() const {
  return impl_->verify;
}

Status TlsSettings::trust_pem(std::string_view pem) {
  error_code ec;
  impl_->ctx.add_certificate_authority(net::buffer(pem.data(), pem.size()), ec);
  return done(ec);
}

Status TlsSettings::trust_file(const std::string& path) {
  error_code ec;
  impl_->ctx.load_verify_file(path, ec);
  return done(ec);
}

Status TlsSettings::trust_system() {
  error_code ec;
  impl_->ctx.set_default_verify_paths(ec);
  return done(ec);
}

Status TlsSettings::use_certificate_chain_pem(std::string_view pem) {
  error_code ec;
  impl_->ctx.use_certificate_chain(net::buffer(pem.data(), pem.size()), ec);
  return done(ec);
}

Status TlsSettings::use_certificate_chain_file(const std::string& path) {
  error_code ec;
  impl_->ctx.use_certificate_chain_file(path, ec);
  return done(ec);
}

Status TlsSettings::use_private_key_pem(std::string_view pem) {
  error_code ec;
  impl_->ctx.use_private_key(net::buffer(pem.data(), pem.size()), ssl::context::pem, ec);
  return done(ec);
}

Status TlsSettings::use_private_key_file(const std::string& path) {
  error_code ec;
  impl_->ctx.use_private_key_file(path, ssl::context::pem, ec);
  return done(ec);
}

bool TlsSettings::private_key_matches() const {
  return SSL_CTX_check_private_key(impl_->ctx.native_handle()) == 1;
}

void TlsSettings::set_server_name(std::string server_name) {
  impl_->server_name = std::move(server_name);
}

const std::string& TlsSettings::server_name() const {
  return impl_->server_name;
}

std::string take_openssl_errors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out;
}

}  // namespace hamisim::http

#pragma once
// The TLS side of an HTTP client connection, set up once and shared by every connection of a
// ClientTransport: TLS 1.2 or later, the server certificate verified against a trust anchor
// (PEM data, a PEM file or the system store) unless verification is skipped, an optional
// client certificate, and the name sent as SNI and checked against the certificate.
//
// Each setter returns the bare reason of a failure (the TLS library's text); callers put it in
// their own words ("tlsConfig.caData: ...") and may add take_openssl_errors() for detail.
// OpenSSL and Asio stay behind the pimpl.

#include <memory>
#include <string>
#include <string_view>

#include "model/result.h"

namespace hamisim::http {

class TlsSettings {
 public:
  // Verification on, no trust anchor yet, no client certificate, no server name override.
  TlsSettings();
  ~TlsSettings();
  TlsSettings(TlsSettings&&) noexcept;
  TlsSettings& operator=(TlsSettings&&) noexcept;

  // The server certificate is accepted whatever it is (insecure-skip-tls-verify).
  void skip_verification();
  bool verifies() const;

  Status trust_pem(std::string_view pem);
  Status trust_file(const std::string& path);
  Status trust_system();

  Status use_certificate_chain_pem(std::string_view pem);
  Status use_certificate_chain_file(const std::string& path);
  Status use_private_key_pem(std::string_view pem);
  Status use_private_key_file(const std::string& path);
  // After both: whether the key belongs to the certificate.
  bool private_key_matches() const;

  // Go's crypto/tls rule: a ServerName overrides both the SNI and the name verified;
  // without one the URL's host is verified, and sent as SNI unless it is an IP address.
  void set_server_name(std::string server_name);
  const std::string& server_name() const;

  struct Impl;
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Drains this thread's OpenSSL error queue into one "; "-separated line ("" when empty).
std::string take_openssl_errors();

}  // namespace hamisim::http

#pragma once
// Inside the http library only: what TlsSettings holds, for the transport's connections.

#include <boost/asio/ssl/context.hpp>
#include <string>

#include "http/tls_settings.h"

namespace hamisim::http {

struct TlsSettings::Impl {
  boost::asio::ssl::context ctx{boost::asio::ssl::context::tls_client};
  bool verify = true;
  std::string server_name;
};

}  // namespace hamisim::http

#include "extender/http_extender.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "extender/extender_url.h"
#include "go/duration.h"
#include "http/client_transport.h"

namespace hamisim::extender {

// ---- interest ---------------------------------------------------------------------------

bool is_interested(const model::Pod& pod, const std::set<std::string, std::less<>>& managed) {
  if (managed.empty()) return true;
  auto names_any = [&](const model::ResourceList& list) {
    for (const auto& [name, quantity] : list) {
      if (managed.count(name)) return true;
    }
    return false;
  };
  for (const auto* containers : {&pod.spec.containers, &pod.spec.init_containers}) {
    for (const model::Container& c : *containers) {
      if (names_any(c.resources.requests) || names_any(c.resources.limits)) return true;
    }
  }
  return false;
}

namespace {

// HTTPExtender.Filter's steps 4-7 on a decoded body.
Result<FilterResult> apply_result_rules(ExtenderFilterResult&& raw, const ExtenderArgs& request,
                                        bool node_cache_capable, std::string_view extender_name) {
  if (!raw.error.empty()) return make_error(std::string(raw.error));
  FilterResult result;
  auto keep = [](const std::optional<std::vector<NodeReason>>& from, NodeReasons& to) {
    if (!from) return;
    for (const NodeReason& r : *from) to.emplace_hint(to.end(), r.node, r.reason);
  };
  keep(raw.failed_nodes, result.failed_nodes);
  keep(raw.failed_and_unresolvable_nodes, result.failed_and_unresolvable_nodes);
  if (raw.allocations) {
    for (const NodeAllocation& a : *raw.allocations) {
      result.allocations.emplace_hint(result.allocations.end(), a.node,
                                      Annotations(a.annotations.begin(), a.annotations.end()));
    }
  }
  if (raw.diagnostics) {
    for (const auto& [node, d] : *raw.diagnostics) {
      result.diagnostics.emplace_hint(
          result.diagnostics.end(), node,
          NodeDiagnostic{std::string(d.fit_class), std::string(d.reason),
                         std::string(d.device_source), std::string(d.profile),
                         std::vector<std::string>(d.notes.begin(), d.notes.end())});
    }
  }
  result.called = true;
  std::set<std::string, std::less<>> seen;
  if (node_cache_capable && raw.node_names) {
    for (std::string_view name : *raw.node_names) {
      const bool known = std::any_of(request.nodes.begin(), request.nodes.end(),
                                     [&](const ExtenderNode& n) { return n.name == name; });
      if (!known) {
        return make_error("extender \"" + std::string(extender_name) +
                          "\" claims a filtered node \"" + std::string(name) +
                          "\" which is not found in the input node list");
      }
      if (seen.emplace(name).second) result.passed.emplace_back(name);
    }
  } else if (raw.nodes) {
    for (const NodeText& n : *raw.nodes) {
      if (!seen.emplace(n.name).second) continue;
      result.passed.emplace_back(n.name);
      result.passed_json.emplace_back(n.json);
    }
  }
  return result;
}

}  // namespace

Result<FilterResult> decode_filter_result(std::string_view body, const ExtenderArgs& request,
                                          bool node_cache_capable, std::string_view extender_name) {
  auto raw = decode_filter_result(body);
  if (!raw) return raw.error();
  return apply_result_rules(std::move(*raw), request, node_cache_capable, extender_name);
}

// ---- the client -------------------------------------------------------------------------

struct HttpExtender::Impl {
  std::unique_ptr<http::ClientTransport> transport;
  std::string target;
};

namespace {

// kube-scheduler's makeTransport: TLS from tlsConfig, *Data winning over *File.
Result<http::TlsSettings> tls_settings(const ExtenderTlsConfig& tls, bool insecure) {
  http::TlsSettings out;
  if (insecure) {
    out.skip_verification();
  } else if (!tls.ca_data.empty()) {
    if (auto s = out.trust_pem(tls.ca_data); !s) {
      return make_error("tlsConfig.caData: " + s.error().message + " " +
                        http::take_openssl_errors());
    }
  } else if (!tls.ca_file.empty()) {
    if (auto s = out.trust_file(tls.ca_file); !s) {
      return make_error("tlsConfig.caFile " + tls.ca_file + ": " + s.error().message + " " +
                        http::take_openssl_errors());
    }
  } else if (auto s = out.trust_system(); !s) {
    return make_error("system trust store: " + s.error().message);
  }
  const bool cert = !tls.cert_data.empty() || !tls.cert_file.empty();
  const bool key = !tls.key_data.empty() || !tls.key_file.empty();
  if (cert != key) {
    return make_error(cert ? "tlsConfig: a client certificate needs a key"
                           : "tlsConfig: a client key needs a certificate");
  }
  if (cert) {
    if (!tls.cert_data.empty()) {
      if (auto s = out.use_certificate_chain_pem(tls.cert_data); !s) {
        return make_error("tlsConfig.certData: " + s.error().message);
      }
    } else if (auto s = out.use_certificate_chain_file(tls.cert_file); !s) {
      return make_error("tlsConfig.certFile " + tls.cert_file + ": " + s.error().message);
    }
    if (!tls.key_data.empty()) {
      if (auto s = out.use_private_key_pem(tls.key_data); !s) {
        return make_error("tlsConfig.keyData: " + s.error().message);
      }
    } else if (auto s = out.use_private_key_file(tls.key_file); !s) {
      return make_error("tlsConfig.keyFile " + tls.key_file + ": " + s.error().message);
    }
    if (!out.private_key_matches()) {
      return make_error("tlsConfig: the client key does not match the certificate");
    }
  }
  out.set_server_name(tls.server_name);
  return out;
}

}  // namespace

HttpExtender::HttpExtender(ExtenderConfig config, std::unique_ptr<Impl> impl)
    : config_(std::move(config)), impl_(std::move(impl)) {}
HttpExtender::~HttpExtender() = default;

Result<std::unique_ptr<HttpExtender>> HttpExtender::create(const ExtenderConfig& config) {
  if (config.url_prefix.empty()) return make_error("urlPrefix is required");
  const std::string filter_url = join_extender_url(config.url_prefix, config.filter_verb);
  auto url = parse_extender_url(filter_url);
  if (!url) return url.error();

  std::vector<std::string> warnings;
  bool skipped = false;
  std::optional<http::TlsSettings> tls;
  if (url->scheme == "https") {
    ExtenderTlsConfig tls_config = config.tls_config.value_or(ExtenderTlsConfig{});
    const bool has_ca = !tls_config.ca_file.empty() || !tls_config.ca_data.empty();
    bool insecure = tls_config.insecure;
    if (config.enable_https && !has_ca && !insecure) {
      insecure = true;
      warnings.push_back(
          "enableHTTPS without caFile or caData: the server certificate is not verified");
    } else if (tls_config.insecure) {
      warnings.push_back("tlsConfig.insecure: the server certificate is not verified");
    }
    if (insecure && has_ca) {
      return make_error(
          "specifying a root certificates file with the insecure flag is not allowed");
    }
    skipped = insecure;
    auto settings = tls_settings(tls_config, insecure);
    if (!settings) return settings.error();
    tls = std::move(*settings);
  }

  auto impl = std::make_unique<Impl>();
  impl->target = url->target;
  http::TransportOptions options;
  options.max_response_bytes = size_t(256) << 20;
  impl->transport = std::make_unique<http::ClientTransport>(
      http::Endpoint{url->host, url->port, url->host_header}, std::nullopt, std::move(tls),
      std::move(options));
  auto ext = std::unique_ptr<HttpExtender>(new HttpExtender(config, std::move(impl)));
  ext->filter_url_ = filter_url;
  for (const auto& r : config.managed_resources) ext->managed_.insert(r.name);
  ext->verification_skipped_ = skipped;
  ext->warnings_ = std::move(warnings);
  return ext;
}

bool HttpExtender::is_interested(const model::Pod& pod) const {
  return extender::is_interested(pod, managed_);
}

HttpExtenderStats HttpExtender::stats() const {
  const http::TransportStats s = impl_->transport->stats();
  return HttpExtenderStats{s.exchanges, s.connections_opened};
}

Result<FilterResult> HttpExtender::filter(const ExtenderArgs& request) const {
  if (!config_.is_filter()) {
    FilterResult unchanged;
    for (const auto& n : request.nodes) unchanged.passed.emplace_back(n.name);
    return unchanged;
  }
  const auto deadline = http::Clock::now() + std::chrono::duration_cast<http::Clock::duration>(
                                                 config_.effective_timeout());
  const std::string body = encode_extender_args(request, config_.node_cache_capable);
  const std::string post = "Post \"" + filter_url_ + "\": ";

  http::Request wire;
  wire.method = "POST";
  wire.target = impl_->target;
  wire.content_type = "application/json";
  wire.body = body;
  http::RoundTrip trip = impl_->transport->round_trip(wire, deadline);
  if (!trip.ok()) {
    const http::Failure& f = trip.failure;
    // Go's http.Client reports any failure past its deadline as the client's timeout.
    if (f.why == http::Failure::Why::kTimeout ||
        (f.stage == http::Failure::Stage::kConnect && http::Clock::now() >= deadline)) {
      return make_error(post + "timeout after " + go::format_duration(config_.effective_timeout()) +
                        " (Client.Timeout exceeded)");
    }
    return make_error(post + f.message);
  }
  if (trip.response->status != 200) {
    return make_error("failed " + config_.filter_verb + " with extender at URL " + filter_url_ +
                      ", code " + std::to_string(trip.response->status));
  }
  auto raw = decode_filter_result(trip.response->body);
  if (!raw) {
    return make_error("failed to decode filter response from extender at URL " + filter_url_ +
                      ": " + raw.error().message);
  }
  return apply_result_rules(std::move(*raw), request, config_.node_cache_capable, name());
}

}  // namespace hamisim::extender

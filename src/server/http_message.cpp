// The public request and response types of http_server.h: auth group names, header lookup and
// the JSON answers.
#include "model/json_writer.h"
#include "server/http_server.h"
#include "server/http_text.h"

namespace hamisim::server {

std::string_view to_string(AuthGroup g) {
  switch (g) {
    case AuthGroup::kNone:
      return "none";
    case AuthGroup::kLive:
      return "live";
    case AuthGroup::kSimulation:
      return "simulation";
    case AuthGroup::kWebhook:
      return "webhook";
  }
  return "unknown";
}

std::string_view HttpRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (iequals(k, name)) return v;
  }
  return {};
}

HttpResponse HttpResponse::json(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

HttpResponse HttpResponse::error(int status, std::string_view message) {
  std::string body = R"({"Error":)";
  model::append_go_json_string(body, message);  // adds the quotes
  body += "}";
  return json(status, std::move(body));
}

}  // namespace hamisim::server

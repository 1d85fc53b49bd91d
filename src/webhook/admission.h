#pragma once
// HAMi's mutating admission webhook (reference hami-scheduler-core.md §2.6, §10) as a pure
// function from the HTTP request to the HTTP answer; the server only moves bytes.
//
// Answers follow controller-runtime's admission.Webhook, which HAMi serves: always HTTP 200
// with an AdmissionReview body, the verdict inside `response`. Errors are `allowed:false` with
// `status.code` 400 (the request cannot be read) or 500 (the pod cannot be mutated); denials are
// `status.code` 403 with `reason:"Forbidden"`. See docs/webhook.md for every answer.

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "device/registry.h"
#include "model/objects.h"

namespace hamisim::webhook {

struct WebhookOptions {
  std::string scheduler_name;                     // --scheduler-name (may be empty)
  bool force_overwrite_default_scheduler = true;  // --force-overwrite-default-scheduler
};

// nullopt when the pod fits its namespace's device quota; otherwise why not (used in the
// denial message). An empty function = no quota information (everything fits).
using QuotaCheck = std::function<std::optional<std::string>(const model::Pod&)>;

struct AdmissionResult {
  // Always 200: controller-runtime writes every answer, errors included, as an AdmissionReview
  // with HTTP 200 (the API server reads the verdict from the body). Size limits (413) and auth
  // (403) are the HTTP server's, before this function runs.
  int http_status = 200;
  std::string body;     // the AdmissionReview response JSON (echoes apiVersion, response.uid)
  std::string outcome;  // "allowed", "patched", "denied", "error" (for metrics/logs)
};

AdmissionResult handle_admission(std::string_view body, std::string_view content_type,
                                 const device::DeviceRegistry& registry,
                                 const WebhookOptions& options, const QuotaCheck& quota_check);

}  // namespace hamisim::webhook

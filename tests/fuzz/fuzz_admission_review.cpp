// The whole /webhook handler on arbitrary bytes: AdmissionReview decoding, pod decoding, the
// NVIDIA mutation (with every optional behaviour switched on) and the patch. Any input must
// give an AdmissionReview answer, never a crash, a hang or a sanitizer report; a patch must
// apply cleanly to the pod it was made from and change it.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json/parse.hpp>

#include "../webhook/json_patch_apply.h"
#include "device/catalog/device_config.h"
#include "webhook/admission.h"

namespace {

namespace json = boost::json;

const hamisim::device::DeviceRegistry& registry() {
  static const hamisim::device::DeviceRegistry r = [] {
    hamisim::device::DeviceConfig config;
    config.nvidia.gpu_core_policy = "force";
    config.nvidia.overwrite_env = true;
    config.nvidia.runtime_class_name = "nvidia";
    return hamisim::device::build_registry(config);
  }();
  return r;
}

// Denies pods of namespaces with an odd-length name, so that both quota outcomes are reached.
std::optional<std::string> quota(const hamisim::model::Pod& pod) {
  if (pod.metadata.namespace_.size() % 2 == 1) return "odd namespace";
  return std::nullopt;
}

void check_patch(std::string_view body, const json::object& response) {
  const json::value* patch = response.if_contains("patch");
  if (!patch) return;
  // The request decoded (a patch exists), so request.object is there.
  const json::value original = json::parse(body).at("request").at("object");
  const json::value ops = json::parse(hamisim::testing::base64_decode(patch->as_string()));
  const json::value patched = hamisim::testing::apply_patch(original, ops.as_array());
  if (patched == original || ops.as_array().empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  static const hamisim::webhook::WebhookOptions options{"hami-scheduler", true};
  static const hamisim::webhook::QuotaCheck quota_check = quota;
  const auto result = hamisim::webhook::handle_admission(body, "application/json", registry(),
                                                         options, quota_check);
  if (result.http_status != 200 || result.body.empty() || result.body.back() != '\n') std::abort();
  if (result.outcome != "allowed" && result.outcome != "patched" && result.outcome != "denied" &&
      result.outcome != "error") {
    std::abort();
  }
  try {
    const json::value answer = json::parse(result.body);
    const json::object& response = answer.at("response").as_object();
    const bool allowed = response.at("allowed").as_bool();
    if (allowed != (result.outcome == "allowed" || result.outcome == "patched")) std::abort();
    if ((result.outcome == "patched") != response.contains("patch")) std::abort();
    check_patch(body, response);
  } catch (const std::exception&) {
    std::abort();  // an answer we cannot read back, or a patch that does not fit its pod
  }
  return 0;
}

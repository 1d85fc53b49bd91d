#include "webhook/admission.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/parse_options.hpp>
#include <boost/json/serialize.hpp>
#include <exception>
#include <optional>
#include <utility>

#include "model/base64.h"
#include "model/decode.h"
#include "model/strict_json.h"
#include "webhook/json_patch.h"
#include "webhook/mutation.h"
#include "webhook/pod_json.h"

namespace hamisim::webhook {
namespace {

namespace json = boost::json;

constexpr std::string_view kReviewKind = "AdmissionReview";
constexpr std::string_view kReviewV1 = "admission.k8s.io/v1";
constexpr std::string_view kReviewV1beta1 = "admission.k8s.io/v1beta1";
// A real Pod with managedFields nests about 20 levels inside its AdmissionReview. The bound
// keeps every recursive walk (diff, serialization, destruction) shallow whatever the input.
constexpr unsigned kMaxJsonDepth = 128;

// controller-runtime's admission.Response, reduced to what reaches the wire.
struct Verdict {
  bool allowed = false;
  int code = 200;
  std::string message;
  std::string reason;
  std::string patch;  // base64 JSON Patch; empty = none
  std::string outcome;
};

Verdict errored(int code, std::string message) {
  return {false, code, std::move(message), "", "", "error"};
}
Verdict denied(std::string message) {
  return {false, 403, std::move(message), "Forbidden", "", "denied"};
}
Verdict allowed(std::string message) {
  return {true, 200, std::move(message), "", "", "allowed"};
}
Verdict patched(std::string patch) {
  return {true, 200, "", "", std::move(patch), "patched"};
}

// An AdmissionReview holding `verdict`. Without `api_version` the review is written without
// kind and apiVersion, as controller-runtime does for a request it could not decode (it has no
// version to answer in).
AdmissionResult render(const std::optional<std::string>& api_version, std::string_view uid,
                       const Verdict& v) {
  json::object status;
  status["metadata"] = json::object();
  if (!v.message.empty()) status["message"] = v.message;
  if (!v.reason.empty()) status["reason"] = v.reason;
  status["code"] = v.code;
  json::object response;
  response["uid"] = uid;
  response["allowed"] = v.allowed;
  response["status"] = std::move(status);
  if (!v.patch.empty()) {
    response["patch"] = v.patch;
    response["patchType"] = "JSONPatch";
  }
  json::object review;
  if (api_version) {
    review["kind"] = kReviewKind;
    review["apiVersion"] = *api_version;
  }
  review["response"] = std::move(response);
  AdmissionResult out;
  // Go's json.Encoder ends the body with a newline.
  out.body = json::serialize(review) + "\n";
  out.outcome = v.outcome;
  return out;
}

struct Review {
  std::string api_version;
  std::string uid;
  std::string namespace_;
  // Why the webhook is not registered for this request (a DELETE, a Node, a subresource);
  // empty when it is. The API server sends only what the registration names (deploy/: pods,
  // CREATE), so anything else is a misconfigured registration or a hand-made request, and the
  // answer leaves it alone instead of patching or blocking it.
  std::string not_handled;
  const json::value* object = nullptr;  // request.object; nullptr when missing or null
};

// An optional string field: absent and null are "", any other type is a decode error.
std::optional<std::string> string_field(const json::object& o, std::string_view key,
                                        std::string_view path, std::string& error) {
  const json::value* v = o.if_contains(key);
  if (!v || v->is_null()) return std::string();
  if (!v->is_string()) {
    error = "couldn't decode AdmissionReview: " + std::string(path) + ": expected a string";
    return std::nullopt;
  }
  return std::string(v->get_string());
}

// The decoding controller-runtime does before the handler runs: v1 and v1beta1 (same shape);
// a missing kind or apiVersion defaults to admission.k8s.io/v1 AdmissionReview, as the
// Kubernetes decoder fills them from the type it decodes into.
std::optional<Review> decode_review(const json::value& doc, std::string& error) {
  const json::object* root = doc.if_object();
  if (!root) {
    error = "couldn't decode AdmissionReview: expected a JSON object";
    return std::nullopt;
  }
  Review r;
  auto api_version = string_field(*root, "apiVersion", "apiVersion", error);
  if (!api_version) return std::nullopt;
  auto kind = string_field(*root, "kind", "kind", error);
  if (!kind) return std::nullopt;
  if (kind->empty()) *kind = kReviewKind;
  if (api_version->empty()) *api_version = kReviewV1;
  if (*kind != kReviewKind || (*api_version != kReviewV1 && *api_version != kReviewV1beta1)) {
    error = "no kind \"" + *kind + "\" is registered for version \"" + *api_version +
            "\" (expected AdmissionReview in admission.k8s.io/v1 or v1beta1)";
    return std::nullopt;
  }
  r.api_version = std::move(*api_version);

  const json::value* request = root->if_contains("request");
  if (!request || request->is_null()) return r;
  const json::object* req = request->if_object();
  if (!req) {
    error = "couldn't decode AdmissionReview: request: expected an object";
    return std::nullopt;
  }
  auto uid = string_field(*req, "uid", "request.uid", error);
  if (!uid) return std::nullopt;
  auto ns = string_field(*req, "namespace", "request.namespace", error);
  if (!ns) return std::nullopt;
  r.uid = std::move(*uid);
  r.namespace_ = std::move(*ns);
  // operation, kind, resource and subResource: absent means what the registration names (the
  // API server always sends them; reviews made by hand often leave them out).
  auto operation = string_field(*req, "operation", "request.operation", error);
  if (!operation) return std::nullopt;
  auto sub_resource = string_field(*req, "subResource", "request.subResource", error);
  if (!sub_resource) return std::nullopt;
  // request.kind and request.resource: pods are v1 Pods of the core group.
  struct GroupVersion {
    const char* key;
    const char* last;  // the third field's name
    const char* want;  // and its value for pods
    const char* label;
    std::string other;  // "<group/>version, <Label>=<value>" when not a pod's
  };
  GroupVersion request_kind{"kind", "kind", "Pod", "Kind", {}};
  GroupVersion request_resource{"resource", "resource", "pods", "Resource", {}};
  for (GroupVersion* gv : {&request_kind, &request_resource}) {
    const json::value* v = req->if_contains(gv->key);
    if (!v || v->is_null()) continue;
    const std::string path = std::string("request.") + gv->key;
    const json::object* o = v->if_object();
    if (!o) {
      error = "couldn't decode AdmissionReview: " + path + ": expected an object";
      return std::nullopt;
    }
    auto group = string_field(*o, "group", path + ".group", error);
    if (!group) return std::nullopt;
    auto version = string_field(*o, "version", path + ".version", error);
    if (!version) return std::nullopt;
    auto last = string_field(*o, gv->last, path + "." + gv->last, error);
    if (!last) return std::nullopt;
    if (!group->empty() || *version != "v1" || *last != gv->want) {
      gv->other = (group->empty() ? "" : *group + "/") + *version + ", " + gv->label + "=" + *last;
    }
  }
  if (!operation->empty() && *operation != "CREATE") {
    r.not_handled = "operation " + *operation;
  } else if (!request_kind.other.empty()) {
    r.not_handled = "kind " + request_kind.other;
  } else if (!request_resource.other.empty()) {
    r.not_handled = "resource " + request_resource.other;
  } else if (!sub_resource->empty()) {
    r.not_handled = "subresource " + *sub_resource;
  }
  if (const json::value* object = req->if_contains("object"); object && !object->is_null()) {
    r.object = object;
  }
  return r;
}

// Kubernetes decodes the object into a Pod only when its own kind says Pod (or says nothing).
std::optional<std::string> not_a_pod(const json::object& object) {
  const json::value* api_version = object.if_contains("apiVersion");
  const json::value* kind = object.if_contains("kind");
  const auto text = [](const json::value* v) -> std::string {
    if (!v || v->is_null()) return "";
    if (v->is_string()) return std::string(v->get_string());
    return json::serialize(*v);
  };
  std::string av = text(api_version), k = text(kind);
  if ((av.empty() || av == "v1") && (k.empty() || k == "Pod")) return std::nullopt;
  if (av.empty()) av = "v1";
  if (k.empty()) k = "Pod";
  const size_t slash = av.find('/');
  const std::string gv = slash == std::string::npos ? "/" + av : av;
  return "unable to decode " + gv + ", Kind=" + k + " into *v1.Pod";
}

bool is_privileged(const json::object& container) {
  const json::object* sc = find_object(container, "securityContext");
  const json::value* p = sc ? find(*sc, "privileged") : nullptr;
  return p && p->is_bool() && p->get_bool();
}

// HAMi's webhook.Handle, steps 2-8 (reference §10), on a pod that decoded.
Verdict admit(const json::value& original, const Review& review,
              const device::DeviceRegistry& registry, const WebhookOptions& options,
              const QuotaCheck& quota_check) {
  json::object pod = original.get_object();
  json::object& spec = ensure_object(pod, "spec");

  const json::value* containers_v = find(spec, "containers");
  if (!containers_v || !containers_v->is_array() || containers_v->get_array().empty()) {
    return denied("pod has no containers");
  }

  const std::string_view scheduler = find_string(spec, "schedulerName");
  if (!scheduler.empty() &&
      (scheduler != "default-scheduler" || !options.force_overwrite_default_scheduler) &&
      (options.scheduler_name.empty() || scheduler != options.scheduler_name)) {
    return allowed("pod already has different scheduler assigned");
  }

  std::vector<std::pair<const device::DeviceBackend*, ContainerMutator>> mutators;
  for (const auto& backend : registry.backends()) {
    if (ContainerMutator m = mutator_for(*backend)) mutators.emplace_back(backend.get(), m);
  }

  bool has_resource = false;
  for (std::string_view list : {"initContainers", "containers"}) {
    json::value* v = spec.if_contains(list);
    if (!v || !v->is_array()) continue;
    for (json::value& c : v->get_array()) {
      if (!c.is_object()) continue;
      for (const auto& [backend, mutate] : mutators) {
        Result<bool> found = mutate(*backend, ContainerAdmission{c.get_object(), spec, pod});
        if (!found) return errored(500, found.error().message);
        has_resource = has_resource || *found;
      }
    }
  }

  if (has_resource) {
    for (std::string_view list : {"initContainers", "containers"}) {
      const json::value* v = find(spec, list);
      if (!v || !v->is_array()) continue;
      for (const json::value& c : v->get_array()) {
        if (c.is_object() && is_privileged(c.get_object())) {
          return denied("container " + std::string(container_name(c.get_object())) +
                        " is privileged");
        }
      }
    }
    if (!options.scheduler_name.empty()) {
      spec["schedulerName"] = options.scheduler_name;
      if (!find_string(spec, "nodeName").empty()) return denied("pod has node assigned");
    }
  }

  const json::value mutated(std::move(pod));
  if (quota_check) {
    auto decoded = model::decode_pod_json(json::serialize(mutated));
    if (!decoded) return errored(500, "decoding the mutated pod: " + decoded.error().message);
    // The API server fills metadata.namespace before admission; the request names it too, and
    // is the authority when the object leaves it out.
    if (decoded->metadata.namespace_.empty()) decoded->metadata.namespace_ = review.namespace_;
    if (std::optional<std::string> why = quota_check(*decoded)) {
      std::string message = "exceeding resource quota";
      if (!why->empty()) message += ": " + *why;
      return denied(std::move(message));
    }
  }

  const json::array ops = diff(original, mutated);
  if (ops.empty()) return allowed("");
  return patched(model::encode_base64(json::serialize(ops)));
}

AdmissionResult handle(std::string_view body, std::string_view content_type,
                       const device::DeviceRegistry& registry, const WebhookOptions& options,
                       const QuotaCheck& quota_check) {
  // controller-runtime's checks before decoding, in its order.
  if (body.empty()) return render(std::nullopt, "", errored(400, "request body is empty"));
  if (content_type != "application/json") {
    return render(
        std::nullopt, "",
        errored(400, "contentType=" + std::string(content_type) + ", expected application/json"));
  }

  // What the API server's decoder refuses and Boost.JSON would take: a repeated key (two
  // `uid`s: which one would the answer echo?) and numbers beyond float64.
  if (Status strict = model::check_strict_json(body, {.max_depth = kMaxJsonDepth}); !strict) {
    return render(std::nullopt, "",
                  errored(400, "couldn't decode AdmissionReview: " + strict.error().message));
  }
  json::parse_options opts;
  opts.max_depth = kMaxJsonDepth;
  std::error_code ec;
  const json::value doc =
      json::parse(json::string_view(body.data(), body.size()), ec, json::storage_ptr(), opts);
  if (ec) {
    return render(std::nullopt, "",
                  errored(400, "couldn't decode AdmissionReview: invalid JSON: " + ec.message()));
  }
  std::string error;
  const std::optional<Review> review = decode_review(doc, error);
  if (!review) return render(std::nullopt, "", errored(400, error));

  const auto answer = [&](const Verdict& v) { return render(review->api_version, review->uid, v); };
  if (!review->not_handled.empty()) {
    return answer(
        allowed(review->not_handled + " is not handled: the webhook mutates pods on CREATE only"));
  }
  if (!review->object) return answer(errored(400, "there is no content to decode"));
  const json::object* object = review->object->if_object();
  if (!object) {
    return answer(errored(400, "couldn't decode the pod: request.object: expected a JSON object"));
  }
  if (std::optional<std::string> why = not_a_pod(*object)) return answer(errored(400, *why));
  // The model decoder is the one every other path reads pods with: a pod it refuses (a wrong
  // type, a malformed quantity) is refused here too, as Go's decoder would.
  if (auto pod = model::decode_pod_json(json::serialize(*review->object)); !pod) {
    return answer(errored(400, "couldn't decode the pod: " + pod.error().message));
  }
  return answer(admit(*review->object, *review, registry, options, quota_check));
}

}  // namespace

AdmissionResult handle_admission(std::string_view body, std::string_view content_type,
                                 const device::DeviceRegistry& registry,
                                 const WebhookOptions& options, const QuotaCheck& quota_check) {
  try {
    return handle(body, content_type, registry, options, quota_check);
  } catch (const std::exception& e) {
    // Only allocation failures can get here; the answer still has to be an AdmissionReview.
    return render(std::nullopt, "", errored(500, std::string("internal: ") + e.what()));
  } catch (...) {
    return render(std::nullopt, "", errored(500, "internal: unknown error"));
  }
}

}  // namespace hamisim::webhook

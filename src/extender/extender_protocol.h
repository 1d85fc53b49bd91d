#pragma once
// kube-scheduler extender wire types (k8s.io/kube-scheduler/extender/v1), decoded and encoded
// exactly as kube-scheduler and Cluster Autoscaler write and read them: keys are Go field
// names, matched case-insensitively, unknown keys ignored; every response key is written,
// unset values as null.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fit/description.h"
#include "model/objects.h"
#include "model/result.h"

namespace hamisim::extender {

struct ExtenderNode {
  std::shared_ptr<const fit::KeyedNode> decoded;  // may be shared with a NodeCache
  std::string_view raw;  // the Node object exactly as received (points into ExtenderArgs)
  const model::Node& node() const { return decoded->node; }
};

struct ExtenderArgs {
  std::shared_ptr<const model::Pod> pod;  // null when absent; may be shared with a PodCache
  bool nodes_present = false;             // "Nodes" was a NodeList (not null / absent)
  std::vector<ExtenderNode> nodes;
  bool node_names_present = false;  // "NodeNames" was a list (not null / absent)
  std::vector<std::string> node_names;
  // Extension: pods already placed on a node earlier in the caller's simulation.
  std::map<std::string, std::vector<model::Pod>, std::less<>> simulated_pods;

  // Backing storage for the raw views (a copy of the request body plus simdjson padding);
  // empty when the caller's buffer backs them (decode_extender_args_in_buffer).
  std::shared_ptr<const std::string> buffer;
};

struct DecodedObjects;

// Decodes an ExtenderArgs body. Errors name the key and the problem; they become
// `invalid request: ...`. With a cache, the Pod and Nodes already decoded from the same bytes
// are taken from it and new ones are added to it.
Result<ExtenderArgs> decode_extender_args(std::string_view body, DecodedObjects* cache = nullptr);
// The same without copying the body: `body` must be followed by model::kJsonPadding readable
// bytes, and the result points into it (ExtenderArgs::buffer stays empty), so `body` must
// outlive it.
Result<ExtenderArgs> decode_extender_args_in_buffer(std::string_view body,
                                                    DecodedObjects* cache = nullptr);

// What decode_extender_args_in_buffer does first with a cache: reads a body made only of
// objects the cache keeps, in the shape Cluster Autoscaler and kube-scheduler write, without
// running a JSON parser over those objects' bytes. Whatever it accepts, it decodes exactly as
// the full decoder would; nullopt for anything else. Declared for tests.
std::optional<ExtenderArgs> decode_kept_extender_args(std::string_view body, DecodedObjects& cache);

struct ExtenderBindingArgs {
  std::string pod_name;
  std::string pod_namespace;
  std::string pod_uid;
  std::string node;
};
Result<ExtenderBindingArgs> decode_binding_args(std::string_view body);

// Error class words that start every `Error` text (spec §4.2).
inline constexpr std::string_view kInvalidRequest = "invalid request: ";
inline constexpr std::string_view kNotReady = "not ready: ";
inline constexpr std::string_view kInternal = "internal: ";

// {"Nodes":null,"NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":"..."}
std::string encode_filter_error(std::string_view error);
std::string encode_binding_result(std::string_view error);

}  // namespace hamisim::extender

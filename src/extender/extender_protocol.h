#pragma once
// kube-scheduler extender wire types (k8s.io/kube-scheduler/extender/v1) with hamisim's
// extensions, one set for both directions, decoded and encoded exactly as kube-scheduler and
// Cluster Autoscaler write and read them: keys are Go field names, matched case-insensitively,
// unknown keys ignored; every key of a result is written, unset values as null. The servers
// decode ExtenderArgs and encode ExtenderFilterResult; the client (http_extender.h) encodes
// the one and decodes the other with the same functions.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fit/description.h"
#include "model/objects.h"
#include "model/result.h"

namespace hamisim::extender {

// ---- ExtenderArgs ----------------------------------------------------------------------
// A server decodes the objects it is sent; a client sends objects it already has as JSON text
// (the planner encodes each once), so each object travels as its text and, once decoded, the
// object as well.

// A Node of ExtenderArgs.Nodes.
struct ExtenderNode {
  std::string_view name;  // metadata.name
  std::string_view json;  // the Node object exactly as sent or received
  std::shared_ptr<const fit::KeyedNode> decoded =
      nullptr;  // once decoded; may be shared (NodeCache)
  const model::Node& node() const { return decoded->node; }
};

// hamisim extension `SimulatedPods` as a client sends it: node name -> each Pod's JSON text.
using SimulatedPods = std::map<std::string, std::vector<std::string>, std::less<>>;

struct ExtenderArgs {
  std::shared_ptr<const model::Pod> pod;  // decoded; null when absent; may be shared (PodCache)
  std::string_view pod_json;              // sent: the Pod's text; empty sends null
  bool nodes_present = false;             // "Nodes" was a NodeList (not null / absent)
  std::vector<ExtenderNode> nodes;
  bool node_names_present = false;  // "NodeNames" was a list (not null / absent)
  std::vector<std::string> node_names;
  // Extension: pods already placed on a node earlier in the caller's simulation, decoded...
  std::map<std::string, std::vector<model::Pod>, std::less<>> simulated_pods;
  // ... or, to be sent, as texts (written when not null and not empty).
  const SimulatedPods* simulated_pods_json = nullptr;

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

// The body a client sends, in the form kube-scheduler's HTTPExtender chooses: with
// `node_cache_capable` {"Pod":...,"Nodes":null,"NodeNames":[the nodes' names]}, otherwise
// {"Pod":...,"Nodes":{"metadata":{},"items":[the nodes' texts]},"NodeNames":null}; then
// "SimulatedPods" when given.
std::string encode_extender_args(const ExtenderArgs& args, bool node_cache_capable);

struct ExtenderBindingArgs {
  std::string pod_name;
  std::string pod_namespace;
  std::string pod_uid;
  std::string node;
};
Result<ExtenderBindingArgs> decode_binding_args(std::string_view body);

// ---- ExtenderFilterResult --------------------------------------------------------------
// Its texts are views: into the request and the decision for an answer a server encodes, into
// the result's own `storage` for a decoded one. Maps are lists in key order, each key once, as
// Go writes them; the decoder applies Go's rules (a key given twice keeps the last value).

using Annotations = std::map<std::string, std::string, std::less<>>;
// FailedNodesMap, owned: node name -> why.
using NodeReasons = std::map<std::string, std::string, std::less<>>;

// hamisim extension `Diagnostics`, one per node: what the simulation made of it.
template <typename Text>
struct BasicNodeDiagnostic {
  Text fit_class;  // "Class"
  Text reason;
  Text device_source;
  Text profile;
  std::vector<Text> notes;
};
using NodeDiagnostic = BasicNodeDiagnostic<std::string>;  // kept by a caller

// A Node of a NodeList as it travels: its metadata.name and its JSON text.
struct NodeText {
  std::string_view name;
  std::string_view json;
};
struct NodeReason {
  std::string_view node;
  std::string_view reason;
};
struct NodeAllocation {
  std::string_view node;
  std::vector<std::pair<std::string_view, std::string_view>> annotations;  // key order
};
struct NodeDiagnosticText {
  std::string_view node;
  BasicNodeDiagnostic<std::string_view> diagnostic;
};

// ExtenderFilterResult, with hamisim's extensions `Allocations` and `Diagnostics`. An absent
// optional is Go's nil: written as null (the extensions: not written at all).
struct ExtenderFilterResult {
  std::optional<std::vector<NodeText>> nodes;  // Nodes.items
  std::optional<std::vector<std::string_view>> node_names;
  std::optional<std::vector<NodeReason>> failed_nodes;
  std::optional<std::vector<NodeReason>> failed_and_unresolvable_nodes;
  std::string_view error;
  std::optional<std::vector<NodeAllocation>> allocations;
  std::optional<std::vector<NodeDiagnosticText>> diagnostics;
  // A decoded result's copy of the body and its unescaped texts, which the views point into.
  std::shared_ptr<const void> storage;
};

// Where a Node text left out of an encoded result belongs: at offset `at` of the body.
struct TextInsertion {
  size_t at = 0;
  std::string_view text;
};

// Go's encoding: keys in the struct's order. With `insertions`, the texts of Nodes.items are
// left out of the body and listed there, in order, for a server to send from where they are
// instead of copying them.
std::string encode_filter_result(const ExtenderFilterResult& result,
                                 std::vector<TextInsertion>* insertions = nullptr);
// Go's decoding: keys case-insensitively, unknown keys ignored, a map decoded into adds its
// entries; null makes Nodes and NodeNames nil and leaves the other fields as they were (as the
// client always read them). Errors name the field.
Result<ExtenderFilterResult> decode_filter_result(std::string_view body);

// Error class words that start every `Error` text (spec §4.2).
inline constexpr std::string_view kInvalidRequest = "invalid request: ";
inline constexpr std::string_view kNotReady = "not ready: ";
inline constexpr std::string_view kInternal = "internal: ";

// An ExtenderFilterResult with only `error` set:
// {"Nodes":null,"NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":"..."}
std::string encode_filter_error(std::string_view error);
std::string encode_binding_result(std::string_view error);

}  // namespace hamisim::extender

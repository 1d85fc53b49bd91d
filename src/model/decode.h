#pragma once
// Decoding Kubernetes objects from JSON (and YAML, via a JSON conversion).
//
// Tolerant like Go's encoding/json as HAMi uses it: unknown keys are ignored, keys match
// case-insensitively (Go's folding, go/json_key.h), the last of duplicate keys wins, null
// means "unset". Strict where the type is wrong: a string where a list belongs is an error
// whose message starts with the field path
// ("spec.containers[1].resources.limits[nvidia.com/gpu]: ..."). Nesting depth is bounded; no
// input crashes the decoder.
//
// Details (see decode.cpp for the full list): duplicate objects/maps merge and duplicate lists
// decode element-wise into the earlier one, as Go does; quantities accept JSON strings (trimmed)
// and numbers; only the first JSON value of the input is read, anything after it is ignored
// (Go's json.Decoder); invalid UTF-8 is an error. YAML scalars resolve with the YAML 1.2 core
// schema (`yes`/`on` stay strings, 0x1F and 0o17 are numbers, quoted scalars stay strings).
//
// One part of the API server's validation is applied on top, because placement depends on it:
// a pod's spec.resourceClaims entries need a name that is a DNS label unique in the pod, and
// exactly one of resourceClaimName and resourceClaimTemplateName, an object name
// ("spec.resourceClaims[1].name: \"gpu\" is used twice").

#include <string>
#include <string_view>
#include <vector>

#include "model/objects.h"
#include "model/result.h"

namespace hamisim::model {

Result<Pod> decode_pod_json(std::string_view json);
Result<Node> decode_node_json(std::string_view json);

// Bytes that must stay readable past the end of a view given to the *_in_buffer decoders
// (simdjson's padding). A view into a larger padded document (an item of a List, the Pod of
// an ExtenderArgs) satisfies this for free, so items are decoded without copying.
inline constexpr size_t kJsonPadding = 64;
// JSON's four whitespace bytes (RFC 8259 `ws`).
inline bool is_json_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
// `path` prefixes every error message ("Nodes.items[3]").
Result<Pod> decode_pod_json_in_buffer(std::string_view json, std::string_view path = {});
Result<Node> decode_node_json_in_buffer(std::string_view json, std::string_view path = {});

// An item of a List that was not decoded (its kind is not one asked for), as found: enough
// for a caller to say which item it was (model/input.h decides whether that is an error).
struct SkippedItem {
  std::string path;  // "items[3]", "items[0].items[2]"; empty for a single object
  std::string kind;  // as written, or taken from a typed list; empty when it has none
  std::string api_version;
  std::string name;  // metadata.name, when it is a string
  std::string namespace_;
};

// An item of a resource.k8s.io kind, kept as JSON for the DRA layer to decode
// (dra::decode_object; model does not depend on dra).
struct RawObject {
  std::string path;  // as SkippedItem::path ("items[3]"; load_objects prefixes the file)
  std::string kind;
  std::string api_version;
  // The item minified, a document of its own (checked to be valid JSON): an item of a typed
  // list (ResourceSliceList) gets the kind and apiVersion it takes from the list written
  // after its own members.
  std::string json;
};

// The kinds decode_objects decodes; items of the others are skipped (and listed).
struct DecodeKinds {
  bool nodes = true;
  bool pods = true;
  bool quotas = true;
  // ResourceSlices, DeviceClasses, ResourceClaims and ResourceClaimTemplates (is_dra_kind):
  // kept in ObjectSet::dra_objects instead of skipped. Off for callers that do not read DRA.
  bool dra = false;
};

// The DRA kinds DecodeKinds::dra keeps: the four kinds above in resource.k8s.io v1, v1beta2,
// v1beta1 and v1alpha3, the versions dra::decode_object reads.
bool is_dra_kind(std::string_view api_version, std::string_view kind);

// A Kubernetes List, NodeList, PodList, ResourceQuotaList, or a single object, as
// `kubectl get -o json` prints them. Items of other kinds are counted and listed, not decoded;
// with DecodeKinds::dra, items of the DRA kinds are kept as JSON instead. Items without a kind
// take it from a typed list ("NodeList" -> Node; a ResourceSliceList's items also take its
// apiVersion); items that are lists themselves are flattened (a few levels deep); a top-level
// JSON array is read as a list of items.
struct ObjectSet {
  std::vector<Node> nodes;
  std::vector<Pod> pods;
  std::vector<ResourceQuota> quotas;
  std::vector<std::string> node_json;  // raw JSON of each node, same order as `nodes`
  int skipped_items = 0;
  std::vector<SkippedItem> skipped;    // the skipped items that are objects (nulls are counted)
  std::vector<RawObject> dra_objects;  // in input order; not counted as skipped
  void append(ObjectSet&& other);
};
Result<ObjectSet> decode_objects_json(std::string_view json, const DecodeKinds& kinds = {});
// The same on a view with kJsonPadding readable bytes past its end: no copy (a cluster file
// is tens of MiB; its copy was a fifth of a large plan's peak memory).
Result<ObjectSet> decode_objects_json_in_buffer(std::string_view json,
                                                const DecodeKinds& kinds = {});

// YAML documents (one or many, `---` separated) converted to JSON text, then decoded as above.
// One document converts to itself, several (or none) to {"kind":"List","items":[...]}; empty
// documents are dropped. Errors carry the YAML line and column.
Result<std::string> yaml_to_json(std::string_view yaml);
// Where the mapping keys of yaml_to_json's JSON were in the YAML, for messages that name a line.
struct JsonLineMap {
  // (offset of a key's opening quote in the JSON, 1-based YAML line), ascending by offset.
  std::vector<std::pair<size_t, size_t>> keys;
  // The line of the last key at or before `offset` (an alias's expansion has the alias's line);
  // 0 before the first key.
  size_t line_at(size_t offset) const;
};
// yaml_to_json, filling `lines` as well.
Result<std::string> yaml_to_json(std::string_view yaml, JsonLineMap& lines);
// Detects JSON vs YAML by the first non-space character ('{' or '[' is JSON). decode_pod and
// decode_node require exactly one YAML document.
Result<ObjectSet> decode_objects(std::string_view text, const DecodeKinds& kinds = {});
// The same, decoding JSON text in place when the string has kJsonPadding bytes of spare
// capacity (as read_file's have).
Result<ObjectSet> decode_objects_in_place(const std::string& text, const DecodeKinds& kinds = {});
// True when the text holds no YAML document and no JSON value (only space and comments).
bool is_empty_document(std::string_view text);
Result<Pod> decode_pod(std::string_view text);
Result<Node> decode_node(std::string_view text);

// Reads a file, or every *.json/*.yaml/*.yml regular file of a directory (not recursive,
// sorted by name); errors start with the file's path. read_file refuses files over 256 MiB;
// its text has kJsonPadding bytes of spare capacity.
// "-" is standard input for both (named "<stdin>" in errors). Skipped items' and DRA objects'
// paths are prefixed with the file they came from ("dir/a.yaml: items[2]").
Result<ObjectSet> load_objects(const std::string& path, const DecodeKinds& kinds = {});
Result<std::string> read_file(const std::string& path);
// The files load_objects reads for `path`: the path itself (or "-"), or a directory's files.
Result<std::vector<std::string>> input_files(const std::string& path);
// The name of a path in messages: "<stdin>" for "-", else the path.
std::string display_name(const std::string& path);

}  // namespace hamisim::model

#pragma once
// What a file flag reads, as kubectl gives it: the one place that reads a flag's input, unwraps
// a List or a ConfigMap around it and checks the kinds inside. Every loader of a file flag
// (fit, plan, doctor, profile check, serve) goes through here, so every flag accepts the same
// shapes and refuses the same mistakes.
//
// A flag's value is a path, `-` for standard input, or `PATH:KEY` to pick one data key of a
// ConfigMap (`-:KEY` for a ConfigMap on standard input). A path that exists is always a path,
// colons included.
//
// Single-document flags (--scheduler-config, --node, --priority-config, ...) accept:
//  - the document itself (YAML or JSON);
//  - a List (kind List or any *List, or several YAML documents) holding exactly one item of the
//    flag's kind, or one ConfigMap holding it;
//  - a ConfigMap: the data key the flag expects (DocumentSpec::configmap_keys), else its only
//    key, else the one key whose document has the flag's kind; when several could fit, the
//    error lists them and asks for PATH:KEY.
// Refused, with an error naming the input and the item (index and name): an empty input, an
// empty List, a List of several candidates, an item of another kind, a document of another
// kind. A document without a kind goes to the flag's own parser, which says what it misses.
//
// Object-set flags (--cluster, --pods, --pods-on-node, --cluster-snapshot) read Lists of many
// objects (model::load_objects); check_skipped_items() then judges what was not decoded: a
// misspelt or unknown kind (`kind: Nod`), an item without a kind, a Kubernetes kind that is a
// mistake for the flag (a Node given to --pods) or a hamisim configuration are errors; other
// Kubernetes objects (Events, Services, Deployments... of a `kubectl get all -o yaml` dump)
// and custom resources are skipped with a warning naming them. A flag that reads DRA objects
// (DecodeKinds::dra) refuses a DRA kind of resource.k8s.io in a version it does not read.

#include <string>
#include <string_view>
#include <vector>

#include "model/decode.h"
#include "model/result.h"

namespace hamisim::model {

// ---- unknown fields ----

// What a reader does with the unknown fields of the Kubernetes objects it reads
// (model/unknown_fields.h): nothing, a warning per field naming the file, line and field path
// (`kubectl --validate=warn`), or an error on the first one (the CLI's --strict). hamisim's own
// files (node groups, device profiles) and the scheduler configuration always refuse unknown
// fields, as their readers (and kube-scheduler) do.
enum class UnknownFields { kIgnore, kWarn, kError };

// The findings of model::find_unknown_fields on one file's text, as `policy` wants them: added
// to `warnings` ("<flag>: <file>:<line>: unknown field \"spec.x\""), or an error naming the
// first and how many there are. `readable_past_end` as model::find_unknown_fields takes it.
Status judge_unknown_fields(std::string_view text, const std::string& file, const std::string& flag,
                            UnknownFields policy, std::vector<std::string>& warnings,
                            size_t readable_past_end = 0);

// ---- where the bytes come from ----

// A flag and the path it was given.
struct FlagInput {
  std::string flag;  // "--pod"
  std::string path;  // as given, "-" for standard input
};

// Standard input can be read once: two flags (or one flag twice) given `-` is an error naming
// both.
Status check_stdin_once(const std::vector<FlagInput>& inputs);

// ---- single documents ----

struct DocumentSpec {
  std::string flag;  // "--scheduler-config": errors name it
  // The kinds the flag reads ("KubeSchedulerConfiguration"). Empty: a document without a kind
  // (HAMi's device-config.yaml, CA's priorities map); then any `kind` but List and ConfigMap
  // is refused.
  std::vector<std::string> kinds;
  // What the flag reads, for messages: "a KubeSchedulerConfiguration".
  std::string what;
  // ConfigMap data keys that hold the document, the usual one first ("config.yaml").
  std::vector<std::string> configmap_keys;
  // For flags that read Kubernetes objects (fit's --pod and --node): the whole input is
  // checked, and the warnings go to Document::warnings.
  UnknownFields unknown_fields = UnknownFields::kIgnore;
};

struct Document {
  // What errors about the document start with: "cm.yaml", "cm.yaml:config.yaml" (a ConfigMap's
  // key), "list.yaml: items[1]" (a List's item), "<stdin>".
  std::string source;
  // The document's text for the flag's parser: the input unchanged when it was the bare
  // document (so YAML line numbers stay right), the ConfigMap value, or a List item as JSON.
  std::string text;
  // Unknown fields found under DocumentSpec::unknown_fields = kWarn, for the caller to print.
  std::vector<std::string> warnings{};
};

// Reads the flag's input (a path, `-` or PATH:KEY) and returns the one document it holds.
Result<Document> read_document(const std::string& path, const DocumentSpec& spec);
// The same on text already read; `name` is the input's name in messages, `key` the ConfigMap
// key asked for (empty: choose as above).
Result<Document> unwrap_document(std::string_view text, const std::string& name,
                                 const std::string& key, const DocumentSpec& spec);

// ---- object sets ----

struct ObjectKinds {
  std::string flag;    // "--cluster"
  DecodeKinds decode;  // the kinds decoded (Node, Pod, ResourceQuota) or kept (DRA objects)
  // Kinds the caller reads by other means (the snapshot store's Leases and Events), skipped
  // here without a word.
  std::vector<std::string> also_read;
  // Kinds that are not read but are expected in the input (Pods in the cluster dump that
  // `profile check --cluster` reads for its Nodes), skipped without a word.
  std::vector<std::string> quiet;
  // Unknown fields of the objects read: warned about unless the command asks otherwise.
  UnknownFields unknown_fields = UnknownFields::kWarn;
};

// What check_skipped_items found acceptable to skip: one line per kind, naming the first item.
struct SkipWarnings {
  std::vector<std::string> lines;
};

// Errors on the first item that must not be skipped; returns the warnings for the others.
// `file` (when given) prefixes the items' paths. A file met in a directory (`from_directory`)
// whose whole content is not a Kubernetes object (no kind, a configuration kind, an unknown
// kind: the other files people keep next to a snapshot) is skipped with a warning instead;
// Lists inside files stay strict.
Result<SkipWarnings> check_skipped_items(std::vector<SkippedItem> skipped, const ObjectKinds& kinds,
                                         const std::string& file = {}, bool from_directory = false);

// load_objects(path) with the kinds checked, and an empty input (no document at all, or a
// directory without one file to read) refused. Warnings go to `warnings`.
Result<ObjectSet> load_checked_objects(const std::string& path, const ObjectKinds& kinds,
                                       std::vector<std::string>& warnings);

// Whether `kind` (of `api_version`) is one the Kubernetes API serves, or a custom resource's:
// the kinds a cluster dump may hold that nobody here needs to read.
bool is_kubernetes_kind(std::string_view kind, std::string_view api_version);

}  // namespace hamisim::model

#pragma once
// Encoding Pods and Nodes as Kubernetes JSON, for objects the planner builds or edits (renamed
// template copies, pods carrying allocation annotations) and sends to scheduler extenders.
//
// The output is what Go's encoding/json writes for the k8s.io/api object holding the same
// fields: "kind" then "apiVersion", fields in the API's declaration order, map keys sorted,
// no whitespace, Go string escaping. Only fields the model holds are written, each following
// its Go tag: `omitempty` fields are left out when empty, the others are always written (so an
// empty Pod still has "creationTimestamp":null, "containers":null, "resources":{}), exactly as
// Kubernetes clients print them. Quantities are written with Quantity::to_string: the same
// value as Kubernetes' text, but not always the same text, since the model does not keep the
// suffix a quantity was written with ("1Gi" goes out as "1073741824", "1k" as "1000").
//
// decode_*_json(encode_*_json(x)) == x for every value the decoder can produce: strings are
// valid UTF-8 (invalid bytes become U+FFFD, as in Go) and quantities within Quantity::parse's
// range. Where that needs a departure from Go, encode.cpp says so at the field.

#include <string>

#include "model/json_writer.h"
#include "model/objects.h"

namespace hamisim::model {

// Writes the object as one JSON value at the writer's current position (a top-level value,
// an array element or after a key), so it can be embedded in ExtenderArgs and lists.
void write_pod(JsonWriter& w, const Pod& pod);
void write_node(JsonWriter& w, const Node& node);

std::string encode_pod_json(const Pod& pod);
std::string encode_node_json(const Node& node);

}  // namespace hamisim::model

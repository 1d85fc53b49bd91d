#pragma once
// The simulation filter (spec §5.1–§5.4): which of the given nodes could take the pod, with
// the usage of the pods the caller already placed on them, and why the others cannot.
// Stateless and side-effect free: it reads only the request and immutable configuration, so
// any replica can answer any request and retries are idempotent. (It keeps the template nodes
// it decoded, by their bytes, to skip decoding them again; that changes no answer.)

#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "server/decoded_cache.h"
#include "server/extender_protocol.h"

namespace hamisim::server {

struct NodeOutcome {
  fit::FitClass fit_class = fit::FitClass::kFits;
  std::string reason;   // HAMi failure string (empty when the node fits)
  std::string profile;  // device profile that described the node, if any
  size_t notes = 0;     // warnings about the description (sample divergence, mismatches)
};

struct SimulationResult {
  std::string body;  // ExtenderFilterResult JSON
  // Only from filter(body, NodeTexts::kLeftOut): the texts of the Nodes sent back, left out of
  // `body`, each to be inserted at its offset there (in order). They point into the request.
  struct Insertion {
    size_t at = 0;
    std::string_view text;
  };
  std::vector<Insertion> insertions;
  bool invalid_request = false;       // body carries an `invalid request:` error
  std::vector<NodeOutcome> outcomes;  // one per node of the request, in request order
};

class SimulationFilter {
 public:
  explicit SimulationFilter(const engine::Engine& engine) : engine_(engine) {}

  // `/filter-simulation`: body -> ExtenderFilterResult. Never throws for any input. With
  // kLeftOut, the Nodes it sends back are left out of the result's body and listed as
  // insertions pointing into `body` (when the body was decoded where it is; `body` must then
  // outlive the result), so that a server sends them from the request's bytes instead of
  // copying them.
  enum class NodeTexts { kCopied, kLeftOut };
  SimulationResult filter(const std::string& body, NodeTexts node_texts = NodeTexts::kCopied) const;
  // decode_extender_args with this filter's cache of decoded objects. A body with
  // model::kJsonPadding bytes of spare capacity (HttpServer reads bodies so) is decoded where
  // it is, and the result points into it; any other is copied.
  Result<ExtenderArgs> decode(const std::string& body) const;
  Result<ExtenderArgs> decode(std::string&&) const = delete;  // would point into a temporary
  // Same for already decoded arguments (`/filter` carrying Nodes). `require_no_node_names`
  // enforces the simulation route's rule that NodeNames must be absent.
  SimulationResult filter(const ExtenderArgs& args, bool require_no_node_names) const;

 private:
  SimulationResult filter(const ExtenderArgs& args, bool require_no_node_names,
                          NodeTexts node_texts) const;
  const engine::Engine& engine_;
  mutable DecodedObjects decoded_;
};

}  // namespace hamisim::server

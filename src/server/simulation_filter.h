#pragma once
// The simulation filter (spec §5.1–§5.4): which of the given nodes could take the pod, with
// the usage of the pods the caller already placed on them, and why the others cannot.
// Stateless and side-effect free: it reads only the request and immutable configuration, so
// any replica can answer any request and retries are idempotent. (It keeps the template nodes
// it decoded, by their bytes, to skip decoding them again, and watches for callers that do not
// send SimulatedPods (SimulatedPodsWatch); neither changes an answer.)

#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "extender/decoded_cache.h"
#include "extender/extender_protocol.h"
#include "server/simulated_pods_watch.h"

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
  using Insertion = extender::TextInsertion;
  std::vector<Insertion> insertions;
  bool invalid_request = false;       // body carries an `invalid request:` error
  std::vector<NodeOutcome> outcomes;  // one per node of the request, in request order
  // Set when the request shows that its caller does not send the pods it placed
  // (SimulatedPodsWatch): the template copy it asked about, which carries
  // kUnsentPlacementsNote in its Diagnostics.Notes.
  std::string unsent_placements_node;
};

// The note a template copy gets in Diagnostics.Notes when SimulatedPodsWatch recognises the
// request (issue #33).
inline constexpr std::string_view kUnsentPlacementsNote =
    "asked about this template copy again for another pod without SimulatedPods after it was "
    "answered Fits: the caller does not send the pods it placed, so they are not counted and "
    "node counts come out too low when device memory or cores bound the packing; the Cluster "
    "Autoscaler build must send SimulatedPods (docs/ca-side.md)";

class SimulationFilter {
 public:
  explicit SimulationFilter(const engine::Engine& engine) : engine_(engine) {}

  // `/filter-simulation`: body -> ExtenderFilterResult. Never throws for any input. With
  // kLeftOut, the Nodes it sends back are left out of the result's body and listed as
  // insertions pointing into `body` (when the body was decoded where it is; `body` must then
  // outlive the result), so that a server sends them from the request's bytes instead of
  // copying them. `caller` is the client's identity (HttpRequest::client_identity), which
  // keeps callers apart for SimulatedPodsWatch.
  enum class NodeTexts { kCopied, kLeftOut };
  SimulationResult filter(const std::string& body, NodeTexts node_texts = NodeTexts::kCopied,
                          std::string_view caller = {}) const;
  // decode_extender_args with this filter's cache of decoded objects. A body with
  // model::kJsonPadding bytes of spare capacity (HttpServer reads bodies so) is decoded where
  // it is, and the result points into it; any other is copied.
  Result<extender::ExtenderArgs> decode(const std::string& body) const;
  Result<extender::ExtenderArgs> decode(std::string&&) const =
      delete;  // would point into a temporary
  // Same for already decoded arguments (`/filter` carrying Nodes). `require_no_node_names`
  // enforces the simulation route's rule that NodeNames must be absent.
  SimulationResult filter(const extender::ExtenderArgs& args, bool require_no_node_names,
                          std::string_view caller = {}) const;

 private:
  SimulationResult filter(const extender::ExtenderArgs& args, bool require_no_node_names,
                          NodeTexts node_texts, std::string_view caller) const;
  // SimulatedPodsWatch's view of this request: the index of the node to note, or npos.
  size_t watch(const extender::ExtenderArgs& args, const std::vector<engine::Verdict>& answers,
               std::string_view caller) const;
  const engine::Engine& engine_;
  mutable extender::DecodedObjects decoded_;
  mutable SimulatedPodsWatch watch_;
};

}  // namespace hamisim::server

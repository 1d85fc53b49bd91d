#pragma once
// The client side of one scheduler extender, with kube-scheduler's HTTPExtender semantics
// (reference ca-scale-up.md §1, §2.1-§2.3): the URL join, ExtenderArgs with Go field names
// (`Nodes` or `NodeNames` per nodeCacheCapable), case-insensitive decoding of
// ExtenderFilterResult, the error texts, a timeout covering the whole exchange, and TLS
// configured exactly as kube-scheduler's makeTransport does.
//
// Pods and nodes arrive here already encoded (the device stage encodes each object once and
// caches it); this layer only splices those bytes into the request, it never re-serializes them.

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "extender/extender_protocol.h"
#include "extender/scheduler_config.h"
#include "model/objects.h"
#include "model/result.h"

namespace hamisim::extender {

// One candidate node: its name (the planner knows it already) and its Node object as JSON,
// as ExtenderArgs carries it. The views must stay valid during the call.
using CandidateNode = ExtenderNode;

// What HTTPExtender.Filter makes of an ExtenderFilterResult (decode_filter_result below).
struct FilterResult {
  // Nodes the extender let through, in the order of its answer, each name once. With
  // nodeCacheCapable every name is one of the input's; in Nodes mode they are whatever the
  // extender returned (kube-scheduler does not check; the chain intersects by name).
  std::vector<std::string> passed;
  // Nodes mode: the returned Node objects as received, parallel to `passed`. Empty otherwise.
  std::vector<std::string> passed_json;
  NodeReasons failed_nodes;
  NodeReasons failed_and_unresolvable_nodes;
  // Extensions, when the extender sent them (hamisim's /filter-simulation does).
  std::map<std::string, Annotations, std::less<>> allocations;
  std::map<std::string, NodeDiagnostic, std::less<>> diagnostics;
  bool called = false;  // false when the extender has no filterVerb (input returned unchanged)
};

// The chain's view of an extender. Implementations are thread-safe.
class Extender {
 public:
  virtual ~Extender() = default;
  virtual const std::string& name() const = 0;  // urlPrefix, as kube-scheduler's Name()
  virtual bool is_filter() const = 0;
  virtual bool is_ignorable() const = 0;
  virtual bool is_interested(const model::Pod& pod) const = 0;
  // `args` holds the pod's and the nodes' texts (ExtenderArgs::pod_json, ExtenderNode::json)
  // and SimulatedPods as texts (simulated_pods_json); the extender sends them in its form.
  virtual Result<FilterResult> filter(const ExtenderArgs& args) const = 0;
};

// kube-scheduler IsInterested: true when `managed` is empty, otherwise when any container or
// init container names a managed resource in requests or limits (any quantity, even 0).
bool is_interested(const model::Pod& pod, const std::set<std::string, std::less<>>& managed);

// Decodes a 200 body and applies HTTPExtender.Filter's result rules (§2.3): `Error` set is an
// error with that text; with nodeCacheCapable a non-null NodeNames must name input nodes only;
// otherwise Nodes.items; neither means every node was filtered out. `extender_name` is used
// in messages.
Result<FilterResult> decode_filter_result(std::string_view body, const ExtenderArgs& request,
                                          bool node_cache_capable, std::string_view extender_name);

struct HttpExtenderStats {
  uint64_t requests = 0;            // HTTP exchanges attempted (retries included)
  uint64_t connections_opened = 0;  // new TCP(+TLS) connections
};

class HttpExtender final : public Extender {
 public:
  // Loads TLS material and checks the URL. Errors say what is wrong (CA's NewHandle wraps
  // them as `couldn't create HTTP extender for "<urlPrefix>": ...`).
  static Result<std::unique_ptr<HttpExtender>> create(const ExtenderConfig& config);
  ~HttpExtender() override;
  HttpExtender(const HttpExtender&) = delete;
  HttpExtender& operator=(const HttpExtender&) = delete;

  const std::string& name() const override { return config_.url_prefix; }
  bool is_filter() const override { return config_.is_filter(); }
  bool is_ignorable() const override { return config_.ignorable; }
  bool is_interested(const model::Pod& pod) const override;

  // POSTs ExtenderArgs to <urlPrefix>/<filterVerb>. Errors (kube-scheduler's texts):
  //   Post "<url>": <transport problem>            connect, TLS, write, read, timeout
  //   failed filter with extender at URL <url>, code <n>
  //   <the Error text>
  //   extender "<urlPrefix>" claims a filtered node "<n>" which is not found in the input node list
  //   failed to decode filter response from extender at URL <url>: <why>
  // Keep-alive connections are reused; a reused connection the server closed while idle is
  // replaced once, within the same deadline.
  Result<FilterResult> filter(const ExtenderArgs& request) const override;

  const ExtenderConfig& config() const { return config_; }
  const std::string& filter_url() const { return filter_url_; }
  std::chrono::nanoseconds timeout() const { return config_.effective_timeout(); }
  // The server certificate is not verified: tlsConfig.insecure, or enableHTTPS with neither
  // caFile nor caData (kube-scheduler forces insecure then). Only meaningful for https URLs.
  bool tls_verification_skipped() const { return verification_skipped_; }
  // Human-readable notes about the configuration (e.g. why verification is off).
  const std::vector<std::string>& warnings() const { return warnings_; }
  HttpExtenderStats stats() const;

  struct Impl;

 private:
  HttpExtender(ExtenderConfig config, std::unique_ptr<Impl> impl);
  ExtenderConfig config_;
  std::string filter_url_;
  std::set<std::string, std::less<>> managed_;
  bool verification_skipped_ = false;
  std::vector<std::string> warnings_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hamisim::extender

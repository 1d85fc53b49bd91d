#pragma once
// The live path's cluster source over the Kubernetes API (spec §4.5): one reflector per kind
// (Nodes, Pods of all namespaces, ResourceQuotas, and the kube-scheduler Lease when
// configured) lists, then watches from the list's resourceVersion; bookmarks advance it; on
// 410 Gone it relists and emits kDeleted for objects that vanished meanwhile and kAdded /
// kModified only for objects whose resourceVersion changed; other failures reconnect with
// exponential backoff and jitter. Reflector threads decode objects and queue them; one
// dispatcher thread calls the handler, so handler calls never overlap.
//
// Writes: JSON merge patches built from MetadataPatch, Bindings, and Events. Events go into a
// bounded queue (the oldest is dropped, and counted, when it is full) drained by a background
// thread; `record_event` never blocks on the network.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "kube/client.h"
#include "kube/kube_config.h"
#include "state/cluster_source.h"

namespace spdlog {
class logger;
}

namespace hamisim::kube {

struct KubeSourceOptions {
  std::string scheduler_name = "hami-scheduler";  // Events' source.component
  // The Lease to observe (--leader-elect-resource-namespace / -name); empty name = none.
  std::string lease_namespace = "kube-system";
  std::string lease_name;
  int watch_timeout_seconds = 300;  // each watch is re-opened after this (randomized 1x-2x)
  RetryPolicy reconnect{.max_attempts = 0,
                        .initial = std::chrono::milliseconds(200),
                        .factor = 2.0,
                        .max_delay = std::chrono::seconds(30),
                        .jitter = 0.5};
  RetryPolicy write_retry{};     // writes retried on kUnavailable
  size_t dispatch_queue = 4096;  // decoded objects waiting for the handler
  size_t event_queue = 1000;     // Events waiting to be sent
  size_t event_batch = 100;      // Events sent per wake-up
  std::chrono::milliseconds event_flush_timeout{std::chrono::seconds(2)};  // in stop()
  std::chrono::milliseconds event_timeout{std::chrono::seconds(5)};        // per Event POST
  std::shared_ptr<spdlog::logger> logger;  // null = spdlog's default logger
};

struct KubeSourceStats {
  uint64_t lists = 0;
  uint64_t watches = 0;
  uint64_t relists_after_gone = 0;
  uint64_t watch_errors = 0;
  uint64_t decode_errors = 0;  // objects skipped because they did not decode
  uint64_t events_sent = 0;
  uint64_t events_failed = 0;
  uint64_t events_dropped = 0;  // queue full: the oldest was dropped
};

class KubeSource final : public state::ClusterSource {
 public:
  KubeSource(std::shared_ptr<KubeClient> client, KubeSourceOptions options);
  static Result<std::unique_ptr<KubeSource>> create(const KubeConfig& config,
                                                    const ClientOptions& client_options,
                                                    KubeSourceOptions options);
  ~KubeSource() override;  // stops

  void start(state::ClusterHandler& handler) override;
  void stop() override;
  std::string describe() const override;

  state::ApiResult<model::Node> get_node(std::string_view name) override;
  state::ApiResult<model::Pod> get_pod(std::string_view namespace_, std::string_view name) override;
  state::ApiStatus patch_node_annotations(std::string_view name,
                                          const state::MetadataPatch& annotations,
                                          std::string_view resource_version) override;
  state::ApiStatus patch_pod_metadata(std::string_view namespace_, std::string_view name,
                                      const state::MetadataPatch& annotations,
                                      const state::MetadataPatch& labels) override;
  state::ApiStatus bind_pod(std::string_view namespace_, std::string_view name,
                            std::string_view uid, std::string_view node) override;
  void record_event(state::PodEvent event) override;

  KubeSourceStats stats() const;
  bool synced() const;
  KubeClient& client() { return *client_; }

  struct Impl;

 private:
  std::shared_ptr<KubeClient> client_;
  std::unique_ptr<Impl> impl_;
  std::string description_;  // the config's, when created from one
};

// The merge patch `{"metadata":{"annotations":{...},"labels":{...},"resourceVersion":"rv"}}`
// (null deletes a key; empty maps and an empty resourceVersion are left out).
std::string metadata_merge_patch(const state::MetadataPatch& annotations,
                                 const state::MetadataPatch& labels,
                                 std::string_view resource_version);

// A coordination.k8s.io/v1 Lease from JSON.
Result<state::Lease> decode_lease_json(std::string_view json);

}  // namespace hamisim::kube

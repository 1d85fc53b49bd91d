#include "cli/gen_command.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>

namespace hamisim::cli {

void add_gen_options(CLI::App& app, GenCommandOptions& o) {
  app.add_option("--nodes", o.gen.nodes, "GPU nodes")->capture_default_str();
  app.add_option("--pods-per-node", o.gen.pods_per_node,
                 "Running pods per node (device pods while the node's GPUs have room)")
      ->capture_default_str();
  app.add_option("--pending", o.gen.pending, "Pending fractional-GPU pods")->capture_default_str();
  app.add_option("--groups", o.gen.groups, "Equivalence groups (ReplicaSets) of the pending pods")
      ->capture_default_str();
  app.add_option("--node-groups", o.gen.node_groups,
                 "Node groups (GPU models in turn; every fourth one cold-zero)")
      ->capture_default_str();
  app.add_option("--gpus-per-node", o.gen.gpus_per_node, "GPUs per node")->capture_default_str();
  app.add_option("--seed", o.gen.seed, "Seed: the same seed writes the same bytes")
      ->capture_default_str();
  app.add_flag("--dra", o.gen.dra,
               "Write the same cluster in HAMi's DRA form: ResourceSlices, a DeviceClass, "
               "ResourceClaims and ResourceClaimTemplates instead of HAMi annotations");
  app.add_option("--out", o.out_dir, "Directory to write into (created; must be empty)")
      ->required();
  app.add_flag("--force", o.force,
               "Write into a --out directory that is not empty (files of the same names are "
               "replaced, others kept)");
}

namespace {

// A generated cluster mixed into a folder holding something else (an earlier cluster of
// another size, a user's files) is read back as one by `plan --cluster <dir>`: refuse unless
// asked. Errors name the folder and what is in it.
Status check_out_dir(const std::string& dir, bool force) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return ok_status();
  if (!std::filesystem::is_directory(dir, ec)) {
    return make_error("--out " + dir + ": exists and is not a directory");
  }
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return make_error("--out " + dir + ": " + ec.message());
  if (it == std::filesystem::directory_iterator() || force) return ok_status();
  return make_error("--out " + dir + " is not empty (it holds " + it->path().filename().string() +
                    "): choose an empty or new directory, or --force to write into it");
}

}  // namespace

int run_gen(const GenCommandOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  if (Status s = check_out_dir(o.out_dir, o.force); !s) {
    std::fprintf(stderr, "hamisim gen: %s\n", s.error().message.c_str());
    return 2;
  }
  auto cluster = gen::generate(o.gen);
  if (!cluster) {
    std::fprintf(stderr, "hamisim gen: %s\n", cluster.error().message.c_str());
    return 2;
  }
  if (auto s = gen::write_cluster(*cluster, o.out_dir); !s) {
    std::fprintf(stderr, "hamisim gen: %s\n", s.error().message.c_str());
    return 1;
  }
  const auto& st = cluster->stats;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr,
               "hamisim gen: %d nodes (largest %zu bytes), %d running pods (%d with devices), "
               "%d pending pods, %d node groups; cluster.json %.1f MiB; %.1f s -> %s\n",
               st.nodes, st.largest_node_bytes, st.running_pods, st.running_device_pods,
               st.pending_pods, st.node_groups, static_cast<double>(st.cluster_bytes) / 1048576.0,
               seconds, o.out_dir.c_str());
  if (o.gen.dra) {
    std::fprintf(stderr,
                 "hamisim gen: DRA form: %d ResourceSlices, %d ResourceClaims, "
                 "%d ResourceClaimTemplates, 1 DeviceClass\n",
                 st.resource_slices, st.resource_claims, st.claim_templates);
  }
  return 0;
}

}  // namespace hamisim::cli

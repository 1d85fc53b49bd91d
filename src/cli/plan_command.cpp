#include "cli/plan_command.h"

#include <fmt/format.h>
#include <malloc.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cstdlib>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>

#include "cli/build_paths.h"
#include "device/catalog/device_config.h"
#include "go/duration.h"
#include "model/decode.h"
#include "model/input.h"
#include "model/json_to_yaml.h"
#include "planner/expander/expander.h"
#include "planner/modes/compare_modes.h"
#include "planner/nodegroups/node_groups.h"
#include "planner/report/report.h"
#include "planner/scaleup/plan_input.h"
#include "planner/scaleup/planning.h"
#include "profile/device_profiles.h"

namespace hamisim::cli {
namespace {

int fail(int code, const std::string& message) {
  std::fprintf(stderr, "hamisim plan: %s\n", message.c_str());
  return code;
}

// A progress bar on stderr, only on a terminal and only once a run has taken a second.
class Progress {
 public:
  Progress() : tty_(isatty(STDERR_FILENO) == 1), start_(std::chrono::steady_clock::now()) {}
  ~Progress() {
    if (drawn_) std::fputs("\r\033[K", stderr);
  }
  void operator()(size_t done, size_t total) {
    if (!tty_ || total == 0) return;
    if (std::chrono::steady_clock::now() - start_ < std::chrono::seconds(1)) return;
    constexpr size_t kWidth = 30;
    const size_t filled = done * kWidth / total;
    std::fprintf(stderr, "\r[%s%s] %zu/%zu node groups estimated", std::string(filled, '#').c_str(),
                 std::string(kWidth - filled, ' ').c_str(), done, total);
    std::fflush(stderr);
    drawn_ = true;
  }

 private:
  bool tty_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
};

// Hex SHA-256 of the file's bytes; of a directory, of its files' names and bytes in name
// order (what --cluster reads of it); "" for stdin, for what is not a regular file (a pipe:
// reading it would take bytes from the plan, which reads it at the same time) and for what
// cannot be read.
std::string digest_of(const std::string& path) {
  if (path == "-") return "";
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec) && !std::filesystem::is_regular_file(path, ec)) {
    return "";
  }
  if (std::filesystem::is_directory(path, ec)) {
    for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
      if (e.is_regular_file(ec)) files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
  } else {
    files.emplace_back(path);
  }
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return "";
  std::vector<char> buf(1 << 16);
  for (const auto& f : files) {
    if (files.size() > 1 || f != std::filesystem::path(path)) {
      const std::string name = f.filename().string();
      EVP_DigestUpdate(ctx.get(), name.data(), name.size() + 1);  // with its NUL: unambiguous
    }
    std::ifstream in(f, std::ios::binary);
    if (!in) return "";
    while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
      EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(in.gcount()));
    }
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx.get(), md, &len) != 1) return "";
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

// The argument as a POSIX shell reads it back.
std::string shell_quoted(std::string_view arg) {
  const bool plain = !arg.empty() && arg.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789_./=:,@%+-") == std::string_view::npos;
  if (plain) return std::string(arg);
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The digest of each input given (digest_of), in the order of `inputs`.
std::vector<std::string> digests_of(const std::vector<model::FlagInput>& inputs) {
  std::vector<std::string> out;
  for (const auto& in : inputs) out.push_back(in.path.empty() ? "" : digest_of(in.path));
  return out;
}

planner::report::Provenance provenance(const PlanOptions& o,
                                       const std::vector<model::FlagInput>& inputs,
                                       const std::vector<std::string>& digests,
                                       const std::string& live_description) {
  planner::report::Provenance p;
  p.version = o.version;
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &utc);
  p.time = when;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].path.empty()) continue;
    p.inputs.push_back({inputs[i].flag, inputs[i].path, digests[i]});
  }
  if (o.live.any()) {
    // The cluster read live: where from; its objects have no digest of a file.
    p.inputs.push_back({o.live.flag(), live_description, ""});
  }
  for (const std::string& arg : o.command) {
    p.command += (p.command.empty() ? "" : " ") + shell_quoted(arg);
  }
  return p;
}

}  // namespace

void add_plan_options(CLI::App& app, PlanOptions& o) {
  app.add_option("--cluster", o.cluster_paths,
                 "Nodes, pods, resource quotas and DRA objects as Kubernetes Lists (kubectl get "
                 "nodes,pods,resourcequotas,resourceslices,deviceclasses,resourceclaims,"
                 "resourceclaimtemplates -A -o json); files or directories");
  app.add_flag("--live", o.live.live,
               "Read the cluster itself instead of --cluster, found as kubectl finds it "
               "($KUBECONFIG, ~/.kube/config, else the pod's service account): one paged LIST "
               "per kind --cluster reads");
  app.add_option("--kubeconfig", o.live.kubeconfig, "Read the cluster of this kubeconfig");
  app.add_option("--context", o.live.context, "kubeconfig context (default: current)");
  app.add_flag("--in-cluster", o.live.in_cluster,
               "Read the cluster with the pod's service account");
  app.add_option("--node-groups", o.node_groups_path, "Node groups (YAML, kind NodeGroups)");
  app.add_option("--device-profiles", o.device_profiles_path, "Device profiles (YAML)");
  add_device_flags(app, o.device, "HAMi device-config.yaml");
  app.add_option("--scheduler-config", o.scheduler_config_path,
                 "KubeSchedulerConfiguration CA would load (its extenders decide device fit)");
  app.add_option("--pods", o.pods_path,
                 "What-if pending pods (default: the snapshot's pods without a node)");
  app.add_option("--expander", o.planner.expander, "Expander chain, e.g. priority,least-waste")
      ->capture_default_str();
  app.add_option("--priority-config", o.priority_config_path,
                 "Priority expander config (CA ConfigMap `priorities` YAML)");
  app.add_option("--max-nodes-total", o.planner.max_nodes_total, "0 = no limit")
      ->capture_default_str();
  app.add_option("--max-nodes-per-scaleup", o.planner.max_nodes_per_scaleup)->capture_default_str();
  // Left at their defaults, the two durations are budgets of work (the same plan on any
  // machine under any load); named on the command line, they are CA's, on the wall clock
  // (docs/plan.md).
  const auto named = [&o](const std::string&) { o.planner.binpacking_wall_clock = true; };
  app.add_option("--max-nodegroup-binpacking-duration", o.max_nodegroup_binpacking_duration)
      ->capture_default_str()
      ->each(named);
  app.add_option("--max-binpacking-time", o.max_binpacking_time)
      ->capture_default_str()
      ->each(named);
  app.add_flag("--balance-similar-node-groups", o.planner.balance_similar_node_groups);
  app.add_flag("--fastpath-binpacking-enabled", o.planner.fastpath_binpacking);
  app.add_option("--expendable-pods-priority-cutoff", o.planner.expendable_pods_priority_cutoff)
      ->capture_default_str();
  app.add_option("--seed", o.planner.seed, "Seed of the random expander")->capture_default_str();
  app.add_flag("--compare-unpatched-ca", o.planner.compare_unpatched_ca,
               "Also plan as a Cluster Autoscaler whose extender calls carry no SimulatedPods "
               "would (it sees every node's devices unused), and show its node counts and the "
               "pods its scale-up leaves pending next to this plan (docs/ca-side.md)");
  app.add_flag("--compare-modes", o.compare_modes,
               "Also plan the same workload in HAMi's DRA mode (pods converted as HAMi-DRA's "
               "webhook converts them, GPUs published as HAMi's k8s-dra-driver publishes them) "
               "and show node counts, placements, pods that fit in one mode only, and what DRA "
               "mode does not model (docs/dra.md)");
  app.add_option("--output,-o", o.output, "table, json, yaml or html")->capture_default_str();
  app.add_flag("--strict", o.strict,
               "Unknown fields in the Kubernetes objects read (--cluster, --pods) are errors, not "
               "warnings");
  app.add_flag("--verbose", o.verbose,
               "Table: every pod and every new node on its own line and lists in full (without "
               "it, pods of one owner and outcome are one row, identically packed nodes one "
               "entry, lists show 5 names)");
}

namespace {

// This program's file: /proc/self/exe, else (no /proc, as in a bare chroot) argv[0] as the
// shell found it: a path when it has a '/', else the first executable of that name on $PATH.
std::filesystem::path own_binary(std::string_view argv0) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) return self;
  if (argv0.find('/') != std::string_view::npos) return std::filesystem::absolute(argv0, ec);
  const char* path = std::getenv("PATH");
  for (std::string_view rest = path != nullptr ? path : ""; !rest.empty();) {
    const size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    const auto candidate = std::filesystem::path(dir.empty() ? "." : dir) / argv0;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

}  // namespace

Result<std::string> bundled_example_dir(std::string_view argv0) {
  // An installed binary finds the examples next to it (<prefix>/share/hamisim/examples, as
  // `cmake --install` and the image lay them out); a build tree uses the source checkout it
  // was built from. Neither there (a binary copied elsewhere): say where it looked.
  std::error_code ec;
  std::string installed;
  const auto self = own_binary(argv0);
  if (!self.empty()) {
    installed = (self.parent_path().parent_path() / "share/hamisim/examples/plan").string();
    if (std::filesystem::is_directory(installed, ec)) return installed;
  }
  const std::string source = std::string(source_examples_dir()) + "/plan";
  if (std::filesystem::is_directory(source, ec)) return source;
  return make_error("no input files, and no bundled example to plan (looked in " +
                    (installed.empty() ? std::string() : installed + " and ") + source +
                    "); give --cluster (see `hamisim plan --help`)");
}

int run_plan(PlanOptions o) {
  // A large plan allocates and frees decoding buffers by the hundred thousand. With glibc's
  // defaults the heap top is trimmed and grown again between them, and each regrowth faults
  // in (and, with huge pages, zeroes 2 MiB of) fresh memory: a third of the estimate's time
  // (docs/performance.md). Freed memory stays in the process instead; it exits soon anyway.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  // No input file at all: the bundled example, in any output and with any CA option (issue
  // #30: `hamisim plan -o html` shows the report of the example).
  const bool no_inputs = o.cluster_paths.empty() && !o.live.any() && o.node_groups_path.empty() &&
                         o.device_profiles_path.empty() && o.pods_path.empty();
  // --live reads the cluster; --kubeconfig or --in-cluster say which (alone, they imply --live).
  if (!o.cluster_paths.empty() && o.live.any()) {
    return fail(2, "give one of --cluster, --live, --kubeconfig, --in-cluster");
  }
  if (!o.live.kubeconfig.empty() && o.live.in_cluster) {
    return fail(2,
                "give --kubeconfig or --in-cluster, not both: they say which cluster --live reads");
  }
  if (!o.live.context.empty() && !o.live.any()) {
    return fail(2, "--context needs --live or --kubeconfig");
  }
  if (no_inputs) {
    const auto found = bundled_example_dir(o.command.empty() ? "" : o.command.front());
    if (!found) return fail(2, found.error().message);
    const std::string& dir = *found;
    o.cluster_paths = {dir + "/cluster.yaml"};
    o.node_groups_path = dir + "/node-groups.yaml";
    o.device_profiles_path = dir + "/device-profiles.yaml";
    std::fprintf(stderr,
                 "hamisim plan: no input files; planning the bundled example in %s "
                 "(see `hamisim plan --help`)\n",
                 dir.c_str());
  }
  if (o.output != "table" && o.output != "json" && o.output != "yaml" && o.output != "html") {
    return fail(2, "--output must be table, json, yaml or html, not \"" + o.output + "\"");
  }
  if (o.cluster_paths.empty() && !o.live.any()) {
    return fail(2,
                "--cluster (or --live, --kubeconfig, --in-cluster) is required, or no input "
                "file at all");
  }
  if (o.node_groups_path.empty()) {
    return fail(2, "--node-groups is required (or no input file at all)");
  }
  for (auto [flag, text, target] :
       {std::tuple{"--max-nodegroup-binpacking-duration", &o.max_nodegroup_binpacking_duration,
                   &o.planner.max_nodegroup_binpacking_duration},
        std::tuple{"--max-binpacking-time", &o.max_binpacking_time,
                   &o.planner.max_binpacking_time}}) {
    auto d = go::parse_duration(*text);
    if (!d) return fail(2, std::string(flag) + ": " + go::invalid_duration_text(*text));
    if (d->count() < 0) return fail(2, std::string(flag) + ": must not be negative");
    *target = *d;
  }
  if (o.planner.max_nodes_per_scaleup < 0) {
    return fail(2, "--max-nodes-per-scaleup: must not be negative");
  }
  if (o.planner.max_nodes_total < 0) {
    return fail(2, "--max-nodes-total: must not be negative (0: no limit)");
  }

  std::vector<model::FlagInput> inputs{{"--node-groups", o.node_groups_path},
                                       {"--device-profiles", o.device_profiles_path},
                                       {"--device-config-file", o.device.config_path},
                                       {"--scheduler-config", o.scheduler_config_path},
                                       {"--priority-config", o.priority_config_path},
                                       {"--pods", o.pods_path}};
  for (const auto& path : o.cluster_paths) inputs.push_back({"--cluster", path});
  if (auto once = model::check_stdin_once(inputs); !once) return fail(2, once.error().message);
  // The provenance's digests are taken on another core while the plan is made: hashing a
  // 1,000-node cluster's 78 MB took 50-80 ms of the run.
  std::future<std::vector<std::string>> digests;
  if (o.output == "json" || o.output == "yaml" || o.output == "html") {
    digests = std::async(std::launch::async, [inputs] { return digests_of(inputs); });
  }

  auto config = load_device_flags(o.device);
  if (!config) return fail(2, config.error().message);
  auto registry = std::make_shared<const device::DeviceRegistry>(device::build_registry(*config));
  std::shared_ptr<const profile::DeviceProfiles> profiles;
  if (!o.device_profiles_path.empty()) {
    auto loaded = profile::load_device_profiles(o.device_profiles_path, *registry);
    if (!loaded) return fail(2, loaded.error().message);
    profiles = std::make_shared<const profile::DeviceProfiles>(std::move(loaded).value());
  }
  std::optional<extender::SchedulerConfig> scheduler;
  if (!o.scheduler_config_path.empty()) {
    auto loaded = extender::load_scheduler_config(o.scheduler_config_path);
    if (!loaded) return fail(2, loaded.error().message);
    scheduler = std::move(loaded).value();
  }
  if (!o.priority_config_path.empty()) {
    // CA reads the `priorities` key of its cluster-autoscaler-priority-expander ConfigMap.
    static const model::DocumentSpec kSpec{
        "--priority-config",
        {},
        "the priority expander's priorities (a map of priority to node-group name regexes)",
        {"priorities"}};
    auto doc = model::read_document(o.priority_config_path, kSpec);
    if (!doc) return fail(2, doc.error().message);
    if (auto parsed = planner::expander::PriorityConfig::parse(doc->text); !parsed) {
      return fail(2, "--priority-config: " + doc->source + ": " + parsed.error().message);
    }
    o.planner.priority_config = std::move(doc->text);
  }
  auto warn = [](const std::vector<std::string>& warnings) {
    for (const auto& w : warnings) std::fprintf(stderr, "hamisim plan: warning: %s\n", w.c_str());
  };

  const model::UnknownFields unknown =
      o.strict ? model::UnknownFields::kError : model::UnknownFields::kWarn;
  planner::scaleup::PlanInputBuilder builder;
  for (const auto& path : o.cluster_paths) {
    std::vector<std::string> warnings;
    auto objects =
        model::load_checked_objects(path, {"--cluster", {.dra = true}, {}, {}, unknown}, warnings);
    if (!objects) return fail(2, objects.error().message);
    warn(warnings);
    if (Status s = builder.add_cluster(std::move(objects).value()); !s) {
      return fail(2, s.error().message);
    }
  }
  std::string live_description;
  if (o.live.any()) {
    std::vector<std::string> warnings;
    auto listed = list_cluster(o.live, warnings);
    warn(warnings);
    if (!listed) return fail(2, listed.error().message);
    live_description = listed->description;
    if (Status s = builder.add_cluster(std::move(listed->objects)); !s) {
      return fail(2, s.error().message);
    }
  }
  if (!o.pods_path.empty()) {
    std::vector<std::string> warnings;
    auto objects = model::load_checked_objects(
        o.pods_path, {"--pods", {.nodes = false, .pods = true, .quotas = false}, {}, {}, unknown},
        warnings);
    if (!objects) return fail(2, objects.error().message);
    warn(warnings);
    builder.set_pending(std::move(objects->pods));
  }
  auto groups = planner::nodegroups::load_node_groups(o.node_groups_path);
  if (!groups) return fail(2, groups.error().message);
  builder.set_node_groups(std::move(groups).value());
  // Shared so a run that keeps its state until exit can hand it over (see below).
  auto input_state = std::make_shared<planner::scaleup::PlanInput>(std::move(builder).finish());
  planner::scaleup::PlanInput& input = *input_state;
  if (profiles) {
    for (const auto& g : input.node_groups.groups) {
      if (!g.device_profile.empty() && profiles->find(g.device_profile) == nullptr) {
        return fail(2, o.node_groups_path + ": node group " + g.name + ": deviceProfile \"" +
                           g.device_profile + "\" is not in " + o.device_profiles_path);
      }
    }
  } else {
    for (const auto& g : input.node_groups.groups) {
      if (!g.device_profile.empty()) {
        return fail(2, o.node_groups_path + ": node group " + g.name + " names deviceProfile \"" +
                           g.device_profile + "\" but no --device-profiles was given");
      }
    }
  }

  auto planning = planner::scaleup::Planning::create(registry, profiles, std::move(scheduler));
  if (!planning) return fail(2, planning.error().message);
  Progress progress;
  auto plan = o.compare_modes ? planner::modes::plan_comparing_modes(**planning, input, o.planner,
                                                                     std::ref(progress))
                              : (*planning)->plan(input_state, o.planner, std::ref(progress));
  if (!plan) {
    const bool internal = plan.error().message.rfind("internal", 0) == 0;
    return fail(internal ? 1 : 2, plan.error().message);
  }
  std::string out;
  if (o.output == "json" || o.output == "yaml") {
    const planner::report::Provenance p = provenance(o, inputs, digests.get(), live_description);
    out = planner::report::render_json(*plan, &p);
    if (o.output == "yaml") {
      auto yaml = model::json_to_yaml(out);
      if (!yaml) return fail(1, "internal error: " + yaml.error().message);
      out = std::move(yaml).value();
    }
  } else if (o.output == "html") {
    const planner::report::Provenance p = provenance(o, inputs, digests.get(), live_description);
    out = planner::report::render_html(*plan, &p);
  } else {
    planner::report::TableOptions t;
    t.color = isatty(STDOUT_FILENO) == 1;
    t.verbose = o.verbose;
    out = planner::report::render_table(*plan, t);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (!out.empty() && out.back() != '\n') std::fputc('\n', stdout);
  const int code = plan->extender_failures.empty() ? 0 : planner::scaleup::kExitExtenderFailed;
  if (code != 0) {
    std::fprintf(stderr, "hamisim plan: a non-ignorable extender failed: %s\n",
                 plan->extender_failures.front().c_str());
  }
  if (o.planner.keep_state_until_exit) {
    planner::scaleup::keep_until_exit(std::move(input_state));
    planner::scaleup::keep_until_exit(std::make_shared<planner::scaleup::Plan>(std::move(*plan)));
  }
  return code;
}

}  // namespace hamisim::cli

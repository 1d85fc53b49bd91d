// hamisim: HAMi-compatible scheduler extender and Cluster Autoscaler scale-up simulator.
// The subcommands are thin drivers over the libraries.

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/completion.h"
#include "cli/doctor_command.h"
#include "cli/fit_command.h"
#include "cli/gen_command.h"
#include "cli/hami_flags.h"
#include "cli/plan_command.h"
#include "cli/profile_command.h"
#include "cli/profile_slices_command.h"
#include "cli/serve_command.h"

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
constexpr bool kSanitized = __has_feature(address_sanitizer) || __has_feature(thread_sanitizer);
#else
constexpr bool kSanitized = false;
#endif

// Below this many bytes of cluster and pod input, `plan` does not restart itself with huge
// pages (below): the second process start (about 10 ms on the machines this runs on) costs
// more than huge pages save. A 360 KB cluster planned 10-20 ms faster without the restart; a
// 5.4 MB one (100 nodes, 2,000 pods) twice as fast with it (docs/performance.md).
constexpr uintmax_t kHugePagesFromBytes = 1 << 20;

// The bytes the files of one --cluster or --pods value hold (a directory: its files, as
// plan reads them); UINTMAX_MAX for stdin, whose size is unknown. What cannot be read counts as
// nothing: plan reports it itself.
uintmax_t input_bytes(const char* path) {
  if (std::strcmp(path, "-") == 0) return UINTMAX_MAX;
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    const uintmax_t size = std::filesystem::file_size(path, ec);
    return ec ? 0 : size;
  }
  uintmax_t total = 0;
  // increment(ec), not ++: nothing here may throw (this runs before main's error handling).
  std::filesystem::directory_iterator it(path, ec);
  for (const std::filesystem::directory_iterator end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const uintmax_t size = it->file_size(ec);
    if (!ec) total += size;
    ec.clear();
  }
  return total;
}

// Whether the inputs named by `plan`'s arguments are large enough for huge pages to pay. No
// --cluster at all is the bundled example (or an error): small. A flag may be followed by
// several paths (CLI11 takes values until the next option) or carry one after '='.
bool large_plan_inputs(int argc, char** argv) {
  uintmax_t total = 0;
  auto add = [&](const char* path) {
    const uintmax_t bytes = input_bytes(path);
    total = bytes > UINTMAX_MAX - total ? UINTMAX_MAX : total + bytes;
  };
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    for (std::string_view flag : {"--cluster", "--pods"}) {
      if (arg == flag) {
        while (i + 1 < argc && (argv[i + 1][0] != '-' || std::strcmp(argv[i + 1], "-") == 0)) {
          add(argv[++i]);
        }
      } else if (arg.size() > flag.size() && arg.substr(0, flag.size()) == flag &&
                 arg[flag.size()] == '=') {
        add(argv[i] + flag.size() + 1);
      }
    }
  }
  return total >= kHugePagesFromBytes;
}

// `plan` builds a few hundred MiB of small objects for a large cluster. On the virtual
// machines this runs on, 4 KiB pages make that slow: page faults and TLB misses took half the
// time of a 1,000-node plan (docs/performance.md). glibc backs its heap with transparent huge
// pages only when the GLIBC_TUNABLES variable asks for it at start-up, so `plan` starts itself
// once more with glibc.malloc.hugetlb=1 (and a larger tcache) when its inputs are large. Any
// GLIBC_TUNABLES already set (even empty) is left as it is, which is also how to turn this off; so
// is a kernel without transparent huge pages.
void restart_plan_with_huge_pages(int argc, char** argv) {
  if (kSanitized || argc < 2 || std::strcmp(argv[1], "plan") != 0) return;
  if (std::getenv("GLIBC_TUNABLES") != nullptr) return;
  if (!large_plan_inputs(argc, argv)) return;
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!std::getline(mode, line) || line.find("[never]") != std::string::npos) return;
  // A large tcache too: an estimate frees the pods it placed and places as many again, and
  // with glibc's 7 cached chunks per size they went back through the bins, whose sorting and
  // consolidation took a fifth of the run (docs/performance.md).
  if (setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1:glibc.malloc.tcache_count=65535", 0) != 0)
    return;
  execv("/proc/self/exe", argv);
  unsetenv("GLIBC_TUNABLES");  // exec failed: go on as we are
}

// HAMi's `version` subcommand: six lines on stderr, as cobra prints them.
int print_scheduler_version() {
  std::fputs("version:          " HAMISIM_VERSION
             "\n"
             "revision:         " HAMISIM_REVISION
             "\n"
             "build date:       " __DATE__ " " __TIME__
             "\n"
             "go version:       none (hamisim is C++)\n"
             "compiler:         " __VERSION__
             "\n"
             "platform:         linux\n",
             stderr);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  restart_plan_with_huge_pages(argc, argv);
  // HAMi's chart runs the extender as `scheduler ...` (hami-dropin.md §2.7): a `scheduler`
  // link to hamisim is `hamisim scheduler`.
  std::vector<std::string> words(argv, argv + argc);
  const std::string self = words[0].substr(words[0].rfind('/') + 1);
  if (self == "scheduler") words.insert(words.begin() + 1, "scheduler");

  hamisim::cli::ServeOptions serve;
  hamisim::cli::ServeOptions scheduler;
  hamisim::cli::apply_hami_defaults(scheduler);
  // HAMi's own flag names and syntax, for both; the rest is hamisim's parser's.
  if (words.size() > 1 && (words[1] == "serve" || words[1] == "scheduler")) {
    auto& target = words[1] == "serve" ? serve : scheduler;
    if (words.size() > 2 && words[1] == "scheduler" && words[2] == "version") {
      return print_scheduler_version();
    }
    auto rest = hamisim::cli::take_hami_flags({words.begin() + 2, words.end()}, target);
    if (!rest) {
      std::fprintf(stderr, "%s: %s\n", target.component.c_str(), rest.error().message.c_str());
      return 2;
    }
    words.resize(2);
    words.insert(words.end(), rest->begin(), rest->end());
  }
  std::vector<char*> args;
  for (auto& w : words) args.push_back(w.data());
  argc = static_cast<int>(args.size());
  argv = args.data();

  CLI::App app{"hamisim: GPU scale-up simulation for HAMi devices"};
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", "hamisim " HAMISIM_VERSION);
  // A flag given twice takes its last value, as pflag (HAMi, kube-scheduler, Cluster
  // Autoscaler) does: a chart's fixed flags followed by an extraArgs override must start. List
  // flags keep every value. Subcommands copy these defaults when they are added, below.
  app.option_defaults()->take_last();

  CLI::App* version_cmd = app.add_subcommand("version", "Print hamisim's version and revision");

  hamisim::cli::FitOptions fit;
  CLI::App* fit_cmd =
      app.add_subcommand("fit", "Explain whether a pod fits a node's HAMi devices, and why not");
  fit_cmd->add_option("--pod", fit.pod_path, "Pod (YAML or JSON)")->required();
  fit_cmd->add_option("--node", fit.node_path, "Node (YAML or JSON)")->required();
  fit_cmd->add_option("--pods-on-node", fit.pods_on_node_path,
                      "Pods already on the node (a List, file or directory)");
  fit_cmd->add_option("--device-profiles", fit.device_profiles_path,
                      "Device profiles (YAML): describe a template node as serve and plan do");
  hamisim::cli::add_device_flags(*fit_cmd, fit.device,
                                 "HAMi device-config.yaml (resource names, defaults)");
  fit_cmd->add_option("--gpu-scheduler-policy", fit.gpu_policy, "Default GPU policy")
      ->capture_default_str();
  fit_cmd->add_option("--node-scheduler-policy", fit.node_policy, "Default node policy")
      ->capture_default_str();
  fit_cmd->add_option("--output,-o", fit.output, "table, json or yaml")->capture_default_str();
  fit_cmd->add_flag("--strict", fit.strict,
                    "Unknown fields in the Kubernetes objects read are errors, not warnings");

  CLI::App* serve_cmd = app.add_subcommand("serve", "Run the scheduler extender service");
  hamisim::cli::add_serve_options(*serve_cmd, serve);
  serve_cmd->footer(hamisim::cli::hami_flags_help());

  CLI::App* scheduler_cmd = app.add_subcommand(
      "scheduler",
      "HAMi's scheduler extender as HAMi's Helm chart runs it: HAMi's flags and defaults, the "
      "live path from $KUBECONFIG, ~/.kube/config or the pod's service account "
      "(`scheduler version` prints the build)");
  hamisim::cli::add_serve_options(*scheduler_cmd, scheduler);
  scheduler_cmd->footer(hamisim::cli::hami_flags_help());

  hamisim::cli::PlanOptions plan;
  CLI::App* plan_cmd = app.add_subcommand(
      "plan",
      "Which node group Cluster Autoscaler should grow for the pending pods, by how many nodes, "
      "and why (no input files: the bundled example)");
  hamisim::cli::add_plan_options(*plan_cmd, plan);

  hamisim::cli::ProfileCheckOptions check;
  CLI::App* profile_cmd = app.add_subcommand("profile", "Device profiles of node groups");
  profile_cmd->require_subcommand(1);
  CLI::App* check_cmd = profile_cmd->add_subcommand(
      "check", "Compare real nodes' registrations with their profiles (exit 1 on any mismatch)");
  check_cmd->add_option("--device-profiles", check.device_profiles_path, "Device profiles (YAML)")
      ->required();
  check_cmd->add_option(
      "--cluster", check.cluster_paths,
      "Nodes as a Kubernetes List (kubectl get nodes -o json); files or directories");
  check_cmd->add_option("--kubeconfig", check.kubeconfig, "Read the nodes from this cluster");
  check_cmd->add_option("--context", check.kube_context, "kubeconfig context (default: current)");
  check_cmd->add_flag("--in-cluster", check.in_cluster,
                      "Read the nodes with the pod's service account");
  hamisim::cli::add_device_flags(*check_cmd, check.device, "HAMi device-config.yaml");
  check_cmd->add_option("--output,-o", check.output, "table, json or yaml")->capture_default_str();
  check_cmd->add_flag("--strict", check.strict,
                      "Unknown fields in the Kubernetes objects read are errors, not warnings");

  hamisim::cli::ProfileSlicesOptions slices;
  CLI::App* slices_cmd = profile_cmd->add_subcommand(
      "slices",
      "The ResourceSlices a node of a group would publish under DRA, from its device profile");
  slices_cmd->add_option("--device-profiles", slices.device_profiles_path, "Device profiles (YAML)")
      ->required();
  slices_cmd
      ->add_option("--node-group", slices.node_group,
                   "The node group (a profile's match.nodeGroups)")
      ->required();
  slices_cmd->add_option("--node-name", slices.node_name,
                         "The node's name (default: template-node-for-<group>)");
  hamisim::cli::add_device_flags(*slices_cmd, slices.device, "HAMi device-config.yaml");
  slices_cmd
      ->add_option("--format", slices.format,
                   "resourceslices, or clusterapi (its capacity annotations)")
      ->capture_default_str();
  slices_cmd->add_option("--output,-o", slices.output, "yaml or json")->capture_default_str();

  hamisim::cli::DoctorOptions doctor;
  CLI::App* doctor_cmd = app.add_subcommand(
      "doctor",
      "Check the scheduler configurations of a deployment and probe the HAMi extenders "
      "(exit 1 on any error or warning)");
  hamisim::cli::add_doctor_options(*doctor_cmd, doctor);

  hamisim::cli::GenCommandOptions gen;
  CLI::App* gen_cmd = app.add_subcommand(
      "gen",
      "Write a seeded synthetic cluster (nodes, running and pending pods, node groups, "
      "device profiles) for benchmarks");
  hamisim::cli::add_gen_options(*gen_cmd, gen);

  std::string shell;
  CLI::App* completion_cmd = app.add_subcommand(
      "completion",
      "Print a shell completion script (bash, zsh or fish), made from these commands' own flags");
  completion_cmd->add_option("shell", shell, "bash, zsh or fish")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (*version_cmd) {
    std::fputs("hamisim " HAMISIM_VERSION " (revision " HAMISIM_REVISION ")\n", stdout);
    return 0;
  }
  if (*completion_cmd) {
    auto script = hamisim::cli::completion_script(app, "hamisim", shell);
    if (!script) {
      std::fprintf(stderr, "hamisim %s\n", script.error().message.c_str());
      return 2;
    }
    std::fputs(script->c_str(), stdout);
    return 0;
  }
  if (*fit_cmd) return hamisim::cli::run_fit(fit);
  if (*serve_cmd) return hamisim::cli::run_serve(serve);
  if (*scheduler_cmd) return hamisim::cli::run_serve(scheduler);
  if (*plan_cmd) {
    // The process ends with the plan: it need not free the plan's state (sanitized builds
    // do, so their checks still see every destructor).
    plan.planner.keep_state_until_exit = !kSanitized;
    plan.command.assign(argv, argv + argc);
    plan.version = HAMISIM_VERSION " (" HAMISIM_REVISION ")";
    return hamisim::cli::run_plan(std::move(plan));
  }
  if (*check_cmd) return hamisim::cli::run_profile_check(check);
  if (*slices_cmd) return hamisim::cli::run_profile_slices(slices);
  if (*doctor_cmd) return hamisim::cli::run_doctor(doctor);
  if (*gen_cmd) return hamisim::cli::run_gen(gen);
  std::fputs(app.help().c_str(), stdout);
  return 0;
}

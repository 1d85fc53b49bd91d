// The tests' fake Kubernetes API server (tests/support/fake_apiserver.h) as a program, so that
// bench/run-all can run `hamisim serve --kubeconfig` against an API server over HTTP without a
// cluster. Not a Google Benchmark.
//
//   bench_apiserver --kubeconfig OUT [--device-plugin] [--dump FILE] FILE|DIR...
//
// Loads every Kubernetes List file (JSON; a directory: its *.json files in name order) into
// one object store, serves it on 127.0.0.1 (an ephemeral port), writes a kubeconfig naming it
// to OUT, prints "ready URL" and serves until SIGTERM or SIGINT. On SIGUSR1 and on the way
// out it prints the requests served so far ("requests N: VERB resource n; ..."). --dump writes
// every object as one List on the way out (what a bench checks the cluster's state against).
//
// --device-plugin plays HAMi's device plugin as `serve --snapshot-device-plugin` does: a pod
// bound with `hami.io/bind-phase: allocating` gets `success`, and the node lock its bind left
// on the node (`hami.io/mutex.lock` naming that pod) is removed. Here it happens as soon as the
// bind is seen on the store, not when a kubelet would start the pod: the node lock is held for
// the least time a real cluster allows.

#include <signal.h>

#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fake_apiserver.h"
#include "state/object_store.h"

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using hamisim::state::Kind;
using hamisim::state::ObjectStore;

constexpr std::string_view kBindPhase = "hami.io/bind-phase";
constexpr std::string_view kNodeLock = "hami.io/mutex.lock";

bool load(ObjectStore& store, const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) {
    std::fprintf(stderr, "%s: cannot read\n", path.c_str());
    return false;
  }
  auto added = store.load(text.str());
  if (!added) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), added.error().message.c_str());
    return false;
  }
  std::fprintf(stderr, "%s: %zu objects\n", path.c_str(), *added);
  return true;
}

const json::string* string_at(const json::value& v, std::initializer_list<std::string_view> path) {
  const json::value* at = &v;
  for (auto key : path) {
    if (!at->is_object()) return nullptr;
    at = at->as_object().if_contains(key);
    if (at == nullptr) return nullptr;
  }
  return at->is_string() ? &at->as_string() : nullptr;
}

// One bound pod: what the device plugin's Allocate leaves.
void allocate(ObjectStore& store, const json::value& pod) {
  const json::string* node = string_at(pod, {"spec", "nodeName"});
  const json::string* phase = string_at(pod, {"metadata", "annotations", kBindPhase});
  const json::string* ns = string_at(pod, {"metadata", "namespace"});
  const json::string* name = string_at(pod, {"metadata", "name"});
  if (!node || node->empty() || !phase || *phase != "allocating" || !ns || !name) return;
  const std::string patch =
      R"({"metadata":{"annotations":{")" + std::string(kBindPhase) + R"(":"success"}}})";
  if (auto r = store.merge_patch(Kind::kPod, *ns, *name, patch); !r) {
    std::fprintf(stderr, "device plugin: pod %s/%s: %s\n", ns->c_str(), name->c_str(),
                 r.error().message.c_str());
  }
  auto n = store.get(Kind::kNode, "", *node);
  if (!n) return;
  std::error_code ec;
  const json::value node_json = json::parse(n->json, ec);
  const json::string* lock =
      ec ? nullptr : string_at(node_json, {"metadata", "annotations", kNodeLock});
  const std::string owner = "," + std::string(*ns) + "," + std::string(*name);
  if (lock == nullptr || !std::string_view(*lock).ends_with(owner)) return;
  // No resourceVersion precondition: the registration pass patches nodes too, and a lock
  // naming this pod changes hands only through this release.
  const std::string unlock =
      R"({"metadata":{"annotations":{")" + std::string(kNodeLock) + R"(":null}}})";
  if (auto r = store.merge_patch(Kind::kNode, "", *node, unlock); !r) {
    std::fprintf(stderr, "device plugin: node %s: %s\n", node->c_str(), r.error().message.c_str());
  }
}

void play_device_plugin(ObjectStore& store, const std::atomic<bool>& stopping) {
  uint64_t seen = store.resource_version();
  while (!stopping) {
    store.wait_for_change(seen, std::chrono::steady_clock::now() + std::chrono::milliseconds(200));
    // Read before the changes: every pod change after `now` is still ahead of `seen` below.
    const uint64_t now = store.resource_version();
    auto changes = store.changes_since(Kind::kPod, seen);
    if (!changes) {  // history lost: look at every pod once
      seen = now;
      for (const auto& item : store.list(Kind::kPod).items) {
        std::error_code ec;
        const json::value pod = json::parse(item.json, ec);
        if (!ec) allocate(store, pod);
      }
      continue;
    }
    for (const auto& event : *changes) {
      seen = std::max(seen, event.object.resource_version);
      if (event.type != hamisim::state::EventType::kModified) continue;
      std::error_code ec;
      const json::value pod = json::parse(event.object.json, ec);
      if (!ec) allocate(store, pod);
    }
    // Versions of other kinds up to `now` count as seen too, or the wait above would return
    // at once.
    seen = std::max(seen, now);
  }
}

// "PATCH /api/v1/namespaces/ns/pods/p?x" -> "PATCH pods"; a subresource is kept ("POST
// pods/binding").
std::string request_kind(const std::string& entry) {
  const size_t space = entry.find(' ');
  std::string path = entry.substr(space + 1);
  path = path.substr(0, path.find('?'));
  std::vector<std::string> parts;
  for (size_t at = 0; at < path.size();) {
    const size_t next = std::min(path.find('/', at + 1), path.size());
    if (next > at + 1) parts.push_back(path.substr(at + 1, next - at - 1));
    at = next;
  }
  // Skip the API prefix (api/v1 or apis/GROUP/VERSION) and namespaces/NS.
  size_t i = parts.size() > 0 && parts[0] == "apis" ? 3 : 2;
  if (i + 1 < parts.size() && parts[i] == "namespaces") i += 2;
  std::string kind = i < parts.size() ? parts[i] : path;
  if (i + 2 < parts.size()) kind += "/" + parts[i + 2];
  return entry.substr(0, space) + " " + kind;
}

int usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s --kubeconfig OUT [--device-plugin] [--dump FILE] FILE|DIR...\n",
               argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string kubeconfig, dump;
  bool device_plugin = false;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--kubeconfig" && i + 1 < argc) {
      kubeconfig = argv[++i];
    } else if (a == "--dump" && i + 1 < argc) {
      dump = argv[++i];
    } else if (a == "--device-plugin") {
      device_plugin = true;
    } else if (a.rfind("--", 0) == 0) {
      return usage(argv[0]);
    } else {
      inputs.emplace_back(a);
    }
  }
  if (kubeconfig.empty() || inputs.empty()) return usage(argv[0]);

  // Every thread started below inherits the mask; main takes the signals with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // A history long enough for the watches of a bench run (every bind is a few changes).
  ObjectStore store(ObjectStore::Options{.history = 200000});
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& input : inputs) {
    std::vector<fs::path> files;
    if (fs::is_directory(input)) {
      for (const auto& e : fs::directory_iterator(input)) {
        if (e.path().extension() == ".json") files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(input);
    }
    for (const auto& f : files) {
      if (!load(store, f)) return 1;
    }
  }
  hamisim::testing::FakeApiServer server(store);
  if (auto started = server.start(); !started) {
    std::fprintf(stderr, "cannot start: %s\n", started.error().message.c_str());
    return 1;
  }
  {
    std::ofstream out(kubeconfig);
    out << "apiVersion: v1\nkind: Config\nclusters:\n- name: bench\n  cluster:\n    server: "
        << server.url()
        << "\nusers:\n- name: bench\n  user: {}\ncontexts:\n- name: bench\n"
           "  context: {cluster: bench, user: bench}\ncurrent-context: bench\n";
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", kubeconfig.c_str());
      return 1;
    }
  }
  std::atomic<bool> stopping{false};
  std::thread plugin;
  if (device_plugin) plugin = std::thread([&] { play_device_plugin(store, stopping); });
  std::printf("ready %s (loaded in %.1f s)\n", server.url().c_str(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  std::fflush(stdout);

  // SIGUSR1: the requests served so far, by verb and resource (a bench reads them before and
  // after a run).
  auto print_requests = [&] {
    std::map<std::string, size_t> requests;
    const auto log = server.request_log();
    for (const auto& entry : log) ++requests[request_kind(entry)];
    std::printf("requests %zu:", log.size());
    for (const auto& [kind, n] : requests) std::printf(" %s %zu;", kind.c_str(), n);
    std::printf("\n");
    std::fflush(stdout);
  };
  int signal = 0;
  while (sigwait(&signals, &signal) == 0 && signal == SIGUSR1) print_requests();
  stopping = true;
  store.wake_all();
  if (plugin.joinable()) plugin.join();
  print_requests();
  server.stop();
  if (!dump.empty()) std::ofstream(dump) << store.dump_list();
  return 0;
}

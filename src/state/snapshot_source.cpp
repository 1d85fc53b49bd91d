#include "state/snapshot_source.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "go/rfc3339.h"
#include "model/decode.h"
#include "model/input.h"
#include "model/json_writer.h"

namespace hamisim::state {
namespace json = boost::json;
namespace fs = std::filesystem;

namespace {

constexpr Kind kWatched[] = {Kind::kNode, Kind::kPod, Kind::kResourceQuota, Kind::kLease};
constexpr std::string_view kBindPhase = "hami.io/bind-phase";
constexpr std::string_view kNodeLock = "hami.io/mutex.lock";
// Cambricon's own lock, which its device plugin clears after Allocate.
constexpr std::string_view kCambriconLock = "cambricon.com/dsmlu.lock";

void write_patch(model::JsonWriter& w, std::string_view key, const MetadataPatch& patch) {
  if (patch.empty()) return;
  w.key(key).begin_object();
  for (const auto& [k, v] : patch) {
    w.key(k);
    if (v) {
      w.string(*v);
    } else {
      w.null();
    }
  }
  w.end_object();
}

std::string metadata_patch(const MetadataPatch& annotations, const MetadataPatch& labels,
                           std::string_view resource_version) {
  model::JsonWriter w;
  w.begin_object().key("metadata").begin_object();
  write_patch(w, "annotations", annotations);
  write_patch(w, "labels", labels);
  if (!resource_version.empty()) w.key("resourceVersion").string(resource_version);
  w.end_object().end_object();
  return w.take();
}

ApiStatus status_of(const ApiResult<StoredObject>& r) {
  if (!r) return r.error();
  return Done{};
}

}  // namespace

Result<Lease> decode_lease_json(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return make_error("Lease: invalid JSON");
  const json::object& o = v.get_object();
  Lease lease;
  auto str = [](const json::object& obj, std::string_view key) {
    auto it = obj.find(key);
    return it != obj.end() && it->value().is_string() ? std::string(it->value().get_string())
                                                      : std::string();
  };
  if (auto m = o.find("metadata"); m != o.end() && m->value().is_object()) {
    lease.namespace_ = str(m->value().get_object(), "namespace");
    lease.name = str(m->value().get_object(), "name");
    lease.resource_version = str(m->value().get_object(), "resourceVersion");
  }
  if (auto s = o.find("spec"); s != o.end() && s->value().is_object()) {
    const json::object& spec = s->value().get_object();
    lease.holder_identity = str(spec, "holderIdentity");
    if (auto d = spec.find("leaseDurationSeconds"); d != spec.end()) {
      if (d->value().is_int64()) {
        lease.lease_duration_seconds = d->value().get_int64();
      } else if (!d->value().is_null()) {
        return make_error("Lease " + lease.name +
                          ": spec.leaseDurationSeconds: must be an integer");
      }
    }
  }
  if (lease.name.empty()) return make_error("Lease: metadata.name is required");
  return lease;
}

SnapshotSource::SnapshotSource(Options options, std::string description)
    : options_(std::move(options)),
      description_(std::move(description)),
      store_(ObjectStore::Options{.history = 100000}) {}

SnapshotSource::~SnapshotSource() {
  stop();
}

Result<std::unique_ptr<SnapshotSource>> SnapshotSource::load(const std::vector<std::string>& paths,
                                                             Options options) {
  if (paths.empty()) return make_error("--cluster-snapshot: no file given");
  std::string joined;
  for (const auto& p : paths) joined += (joined.empty() ? "" : ", ") + p;
  std::unique_ptr<SnapshotSource> source(
      new SnapshotSource(std::move(options), "snapshot " + joined));
  for (const auto& path : paths) {
    auto files = model::input_files(path);
    if (!files) return files.error();
    if (files->empty()) {
      return make_error(path + ": no *.json, *.yaml or *.yml file in the directory");
    }
    for (const auto& given : *files) {
      const std::string file = model::display_name(given);
      auto text = model::read_file(given);
      if (!text) return text.error();
      if (model::is_empty_document(*text)) {
        return make_error(file + ": empty, want a List of Nodes, Pods, ResourceQuotas, Leases");
      }
      const size_t start = text->find_first_not_of(" \t\r\n");
      const bool is_json =
          start != std::string::npos && ((*text)[start] == '{' || (*text)[start] == '[');
      std::string json_text = std::move(text).value();
      if (!is_json) {
        auto converted = model::yaml_to_json(json_text);
        if (!converted) return make_error(file + ": " + converted.error().message);
        json_text = std::move(converted).value();
      }
      std::vector<model::SkippedItem> skipped;
      if (auto n = source->store_.load(json_text, &skipped); !n) {
        return make_error(file + ": " + n.error().message);
      }
      const model::ObjectKinds kinds{"--cluster-snapshot", {}, {"Lease", "Event"}, {}};
      auto checked = model::check_skipped_items(std::move(skipped), kinds, file, given != path);
      if (!checked) return checked.error();
      for (const auto& w : checked->lines) spdlog::warn("{}", w);
    }
  }
  return source;
}

std::string SnapshotSource::describe() const {
  return description_;
}

void SnapshotSource::start(ClusterHandler& handler) {
  thread_ = std::thread([this, &handler] { run(handler); });
}

void SnapshotSource::stop() {
  stopping_ = true;
  store_.wake_all();
  if (thread_.joinable()) thread_.join();
}

void SnapshotSource::deliver(ClusterHandler& handler, EventType type, const StoredObject& object) {
  auto key = std::make_tuple(object.kind, object.namespace_, object.name);
  if (type == EventType::kDeleted) {
    known_.erase(key);
  } else {
    known_[key] = object.resource_version;
  }
  auto complain = [&](const Error& e) {
    spdlog::warn("snapshot: {} {}/{}: not delivered: {}", to_string(object.kind), object.namespace_,
                 object.name, e.message);
  };
  switch (object.kind) {
    case Kind::kNode: {
      auto node = model::decode_node_json(object.json);
      if (!node) return complain(node.error());
      handler.on_node(type, *node);
      return;
    }
    case Kind::kPod: {
      auto pod = model::decode_pod_json(object.json);
      if (!pod) return complain(pod.error());
      handler.on_pod(type, *pod);
      return;
    }
    case Kind::kResourceQuota: {
      auto set = model::decode_objects_json(object.json);
      if (!set) return complain(set.error());
      for (const auto& q : set->quotas) handler.on_quota(type, q);
      return;
    }
    case Kind::kLease: {
      auto lease = decode_lease_json(object.json);
      if (!lease) return complain(lease.error());
      handler.on_lease(type, *lease);
      return;
    }
    case Kind::kEvent:
      return;
  }
}

void SnapshotSource::resync(ClusterHandler& handler) {
  std::map<std::tuple<Kind, std::string, std::string>, uint64_t> stale = known_;
  uint64_t version = store_.resource_version();
  for (Kind kind : kWatched) {
    ObjectStore::Listing listing = store_.list(kind);
    version = std::min(version, listing.resource_version);
    for (const StoredObject& o : listing.items) {
      auto key = std::make_tuple(o.kind, o.namespace_, o.name);
      auto it = stale.find(key);
      if (it == stale.end()) {
        deliver(handler, EventType::kAdded, o);
      } else {
        if (it->second != o.resource_version) deliver(handler, EventType::kModified, o);
        stale.erase(it);
      }
    }
  }
  for (const auto& [key, rv] : stale) {
    StoredObject gone;
    std::tie(gone.kind, gone.namespace_, gone.name) = key;
    gone.resource_version = rv;
    // The last state is no longer known; handlers of deletes need only the identity.
    model::JsonWriter w;
    w.begin_object().key("metadata").begin_object();
    w.key("name").string(gone.name);
    if (!gone.namespace_.empty()) w.key("namespace").string(gone.namespace_);
    w.end_object().end_object();
    gone.json = w.take();
    deliver(handler, EventType::kDeleted, gone);
  }
  delivered_version_ = version;
}

void SnapshotSource::run(ClusterHandler& handler) {
  resync(handler);
  handler.on_synced();
  while (!stopping_) {
    store_.wait_for_change(delivered_version_,
                           std::chrono::steady_clock::now() + std::chrono::seconds(1));
    if (stopping_) break;
    ++wakeups_;
    // Every watched change up to `seen` is fetched below. Advancing to it even when nothing
    // watched changed (an Event was recorded) keeps wait_for_change from returning at once
    // forever, which spun a core on an idle snapshot.
    const uint64_t seen = store_.resource_version();
    std::vector<WatchEvent> events;
    bool gone = false;
    for (Kind kind : kWatched) {
      auto changes = store_.changes_since(kind, delivered_version_);
      if (!changes) {
        gone = true;
        break;
      }
      for (auto& e : *changes) events.push_back(std::move(e));
    }
    if (gone) {
      resync(handler);
      continue;
    }
    std::sort(events.begin(), events.end(), [](const WatchEvent& a, const WatchEvent& b) {
      return a.object.resource_version < b.object.resource_version;
    });
    for (const WatchEvent& e : events) {
      deliver(handler, e.type, e.object);
      delivered_version_ = std::max(delivered_version_, e.object.resource_version);
    }
    delivered_version_ = std::max(delivered_version_, seen);
  }
}

ApiResult<model::Node> SnapshotSource::get_node(std::string_view name) {
  auto o = store_.get(Kind::kNode, "", name);
  if (!o) return o.error();
  auto node = model::decode_node_json(o->json);
  if (!node)
    return ApiError{ApiCode::kOther, "node " + std::string(name) + ": " + node.error().message};
  return std::move(node).value();
}

ApiResult<model::Pod> SnapshotSource::get_pod(std::string_view namespace_, std::string_view name) {
  auto o = store_.get(Kind::kPod, namespace_, name);
  if (!o) return o.error();
  auto pod = model::decode_pod_json(o->json);
  if (!pod) {
    return ApiError{ApiCode::kOther, "pod " + std::string(namespace_) + "/" + std::string(name) +
                                         ": " + pod.error().message};
  }
  return std::move(pod).value();
}

ApiStatus SnapshotSource::patch_node_annotations(std::string_view name,
                                                 const MetadataPatch& annotations,
                                                 std::string_view resource_version) {
  return status_of(
      store_.merge_patch(Kind::kNode, "", name, metadata_patch(annotations, {}, resource_version)));
}

ApiStatus SnapshotSource::patch_pod_metadata(std::string_view namespace_, std::string_view name,
                                             const MetadataPatch& annotations,
                                             const MetadataPatch& labels) {
  return status_of(
      store_.merge_patch(Kind::kPod, namespace_, name, metadata_patch(annotations, labels, {})));
}

ApiStatus SnapshotSource::bind_pod(std::string_view namespace_, std::string_view name,
                                   std::string_view uid, std::string_view node) {
  auto bound = store_.bind(namespace_, name, uid, node);
  if (!bound) return bound.error();
  if (options_.play_device_plugin) {
    // The device plugin's Allocate: allocation done, lock released.
    auto phase = patch_pod_metadata(namespace_, name, {{std::string(kBindPhase), "success"}}, {});
    if (!phase) spdlog::warn("snapshot device plugin: {}", phase.error().message);
    auto unlock = patch_node_annotations(
        node, {{std::string(kNodeLock), std::nullopt}, {std::string(kCambriconLock), std::nullopt}},
        {});
    if (!unlock) spdlog::warn("snapshot device plugin: {}", unlock.error().message);
  }
  return Done{};
}

void SnapshotSource::record_event(PodEvent event) {
  model::JsonWriter w;
  const std::string now = go::format_rfc3339_utc(std::chrono::system_clock::now());
  w.begin_object();
  w.key("metadata").begin_object().key("generateName").string(event.pod_name + ".").end_object();
  w.key("involvedObject").begin_object();
  w.key("kind").string(event.kind);
  if (event.kind != "Node") w.key("namespace").string(event.namespace_);
  w.key("name").string(event.pod_name).key("uid").string(event.pod_uid);
  w.end_object();
  w.key("type").string(event.type).key("reason").string(event.reason);
  w.key("message").string(event.message);
  w.key("source").begin_object().key("component").string(options_.scheduler_name).end_object();
  w.key("firstTimestamp").string(now).key("lastTimestamp").string(now).key("count").number(1);
  w.end_object();
  auto created = store_.create(Kind::kEvent, w.str(), event.namespace_);
  if (!created) {
    spdlog::warn("snapshot: event not recorded: {}", created.error().message);
    return;
  }
  std::lock_guard lock(events_mu_);
  recorded_events_.emplace_back(created->namespace_, created->name);
  while (recorded_events_.size() > options_.max_recorded_events) {
    const auto& [ns, name] = recorded_events_.front();
    (void)store_.remove(Kind::kEvent, ns, name);
    recorded_events_.pop_front();
  }
}

Status SnapshotSource::write_snapshot(const std::string& path) const {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return make_error(path + ": cannot open for writing");
    const std::string text = store_.dump_list();
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out.flush()) return make_error(path + ": write failed");
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return make_error(path + ": " + ec.message());
  return ok_status();
}

}  // namespace hamisim::state

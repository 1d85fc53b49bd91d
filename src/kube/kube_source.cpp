#include "kube/kube_source.h"

#include <simdjson.h>
#include <spdlog/spdlog.h>

#include <condition_variable>
#include <ctime>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <variant>
#include <vector>

#include "go/rfc3339.h"
#include "model/decode.h"
#include "model/json_writer.h"
#include "state/object_store.h"

namespace hamisim::kube {

namespace od = simdjson::ondemand;
using state::ApiCode;
using state::ApiError;
using state::ApiResult;
using state::ApiStatus;
using state::EventType;
using Clock = std::chrono::steady_clock;

// ---- patches and leases -----------------------------------------------------------------

namespace {

void write_patch_map(model::JsonWriter& w, const state::MetadataPatch& patch) {
  std::map<std::string_view, const std::optional<std::string>*> sorted;  // last wins
  for (const auto& [key, value] : patch) sorted[key] = &value;
  w.begin_object();
  for (const auto& [key, value] : sorted) {
    w.key(key);
    if (value->has_value()) {
      w.string(**value);
    } else {
      w.null();
    }
  }
  w.end_object();
}

}  // namespace

std::string metadata_merge_patch(const state::MetadataPatch& annotations,
                                 const state::MetadataPatch& labels,
                                 std::string_view resource_version) {
  model::JsonWriter w;
  w.begin_object().key("metadata").begin_object();
  if (!annotations.empty()) {
    w.key("annotations");
    write_patch_map(w, annotations);
  }
  if (!labels.empty()) {
    w.key("labels");
    write_patch_map(w, labels);
  }
  if (!resource_version.empty()) w.key("resourceVersion").string(resource_version);
  w.end_object().end_object();
  return w.take();
}

namespace {

Status read_optional_string(od::value v, std::string_view where, std::string& out) {
  od::json_type t;
  if (auto e = v.type().get(t))
    return make_error(std::string(where) + ": " + simdjson::error_message(e));
  if (t == od::json_type::null) return ok_status();
  std::string_view s;
  if (v.get_string().get(s)) return make_error(std::string(where) + ": expected a string");
  out = std::string(s);
  return ok_status();
}

Result<state::Lease> decode_lease_padded(const simdjson::padded_string_view& json) {
  od::parser parser;
  od::document doc;
  if (auto e = parser.iterate(json).get(doc)) return make_error(simdjson::error_message(e));
  od::object obj;
  if (doc.get_object().get(obj)) return make_error("a Lease must be a JSON object");
  state::Lease lease;
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return make_error(simdjson::error_message(e));
    od::value v;
    if (auto e = field.value().get(v)) return make_error(simdjson::error_message(e));
    od::json_type t;
    if (auto e = v.type().get(t)) return make_error(simdjson::error_message(e));
    if (t == od::json_type::null) continue;
    if (key == "metadata") {
      od::object meta;
      if (v.get_object().get(meta)) return make_error("metadata: expected an object");
      for (auto mf : meta) {
        std::string_view mkey;
        if (auto e = mf.unescaped_key().get(mkey)) return make_error(simdjson::error_message(e));
        std::string* target = mkey == "name"              ? &lease.name
                              : mkey == "namespace"       ? &lease.namespace_
                              : mkey == "resourceVersion" ? &lease.resource_version
                                                          : nullptr;
        if (target == nullptr) continue;
        od::value mv;
        if (auto e = mf.value().get(mv)) return make_error(simdjson::error_message(e));
        if (Status s = read_optional_string(mv, "metadata." + std::string(mkey), *target); !s)
          return s.error();
      }
    } else if (key == "spec") {
      od::object spec;
      if (v.get_object().get(spec)) return make_error("spec: expected an object");
      for (auto sf : spec) {
        std::string_view skey;
        if (auto e = sf.unescaped_key().get(skey)) return make_error(simdjson::error_message(e));
        od::value sv;
        if (auto e = sf.value().get(sv)) return make_error(simdjson::error_message(e));
        if (skey == "holderIdentity") {
          if (Status s = read_optional_string(sv, "spec.holderIdentity", lease.holder_identity); !s)
            return s.error();
        } else if (skey == "leaseDurationSeconds") {
          od::json_type st;
          if (auto e = sv.type().get(st)) return make_error(simdjson::error_message(e));
          if (st == od::json_type::null) continue;
          int64_t seconds = 0;
          if (sv.get_int64().get(seconds) || seconds < 0 || seconds > (int64_t(1) << 31)) {
            return make_error("spec.leaseDurationSeconds: expected a 32-bit integer");
          }
          lease.lease_duration_seconds = seconds;
        }
      }
    }
  }
  if (lease.name.empty()) return make_error("metadata.name: required");
  return lease;
}

}  // namespace

Result<state::Lease> decode_lease_json(std::string_view json) {
  simdjson::padded_string padded(json);
  return decode_lease_padded(padded);
}

// ---- the source -------------------------------------------------------------------------

// Named, not anonymous: KubeSource::Impl holds these types; GCC warns
// (-Wsubobject-linkage) when they come from an anonymous namespace. Named for this file, so
// unity batches see no clash.
namespace kube_source_detail {

using Object = std::variant<model::Node, model::Pod, model::ResourceQuota, state::Lease>;

struct Decoded {
  std::string key;
  std::string resource_version;
  Object object;
};

// What the reflector keeps of an object it delivered: its version, to tell a change from a
// repeat, and its uid, which with its key (name, or namespace/name) is the identity it is
// reported deleted by when a relist no longer has it (ClusterHandler). Keeping whole objects
// here was most of `serve`'s memory on a large cluster (docs/performance.md).
struct Cached {
  std::string resource_version;
  std::string uid;
};

std::string uid_of(const Object& object) {
  return std::visit(
      [](const auto& o) -> std::string {
        if constexpr (std::is_same_v<std::decay_t<decltype(o)>, state::Lease>) {
          return {};
        } else {
          return o.metadata.uid;
        }
      },
      object);
}

// The object a deletion found by a relist is reported as: its identity only.
Object tombstone(state::Kind kind, std::string_view key, const std::string& uid) {
  const size_t slash = key.find('/');
  const std::string namespace_(slash == std::string_view::npos ? std::string_view()
                                                               : key.substr(0, slash));
  const std::string name(slash == std::string_view::npos ? key : key.substr(slash + 1));
  auto with_identity = [&](auto object) -> Object {
    object.metadata.name = name;
    object.metadata.namespace_ = namespace_;
    object.metadata.uid = uid;
    return object;
  };
  switch (kind) {
    case state::Kind::kNode:
      return with_identity(model::Node{});
    case state::Kind::kPod:
      return with_identity(model::Pod{});
    case state::Kind::kResourceQuota:
      return with_identity(model::ResourceQuota{});
    default:
      return state::Lease{.namespace_ = namespace_, .name = name};
  }
}

struct Item {
  bool synced_marker = false;
  EventType type = EventType::kAdded;
  Object object;
};

struct QueuedEvent {
  state::PodEvent event;
  std::chrono::system_clock::time_point time;
};

// Decodes one object of `kind` in a padded buffer.
Result<Decoded> decode_object(state::Kind kind, std::string_view json) {
  Decoded d;
  switch (kind) {
    case state::Kind::kNode: {
      auto node = model::decode_node_json_in_buffer(json);
      if (!node) return node.error();
      d.key = node->metadata.name;
      d.resource_version = node->metadata.resource_version;
      d.object = std::move(*node);
      break;
    }
    case state::Kind::kPod: {
      auto pod = model::decode_pod_json_in_buffer(json);
      if (!pod) return pod.error();
      d.key = pod->metadata.namespace_ + "/" + pod->metadata.name;
      d.resource_version = pod->metadata.resource_version;
      d.object = std::move(*pod);
      break;
    }
    case state::Kind::kResourceQuota: {
      // List items carry no kind: a typed list supplies it.
      std::string wrapped = R"({"kind":"ResourceQuotaList","items":[)";
      wrapped += json;
      wrapped += "]}";
      auto set = model::decode_objects_json(wrapped);
      if (!set) return set.error();
      if (set->quotas.size() != 1) return make_error("not a ResourceQuota");
      model::ResourceQuota& q = set->quotas.front();
      d.key = q.metadata.namespace_ + "/" + q.metadata.name;
      d.resource_version = q.metadata.resource_version;
      d.object = std::move(q);
      break;
    }
    case state::Kind::kLease: {
      auto lease = decode_lease_padded(simdjson::padded_string_view(
          json.data(), json.size(), json.size() + model::kJsonPadding));
      if (!lease) return lease.error();
      d.key = lease->namespace_ + "/" + lease->name;
      d.resource_version = lease->resource_version;
      d.object = std::move(*lease);
      break;
    }
    default:
      return make_error("unsupported kind");
  }
  if (d.key.empty() || d.key == "/") return make_error("metadata.name: required");
  return d;
}

// metadata.resourceVersion of a BOOKMARK object.
std::string bookmark_version(std::string_view json) {
  simdjson::padded_string padded(json);
  od::parser parser;
  od::document doc;
  if (parser.iterate(padded).get(doc)) return {};
  std::string_view rv;
  if (doc.at_pointer("/metadata/resourceVersion").get_string().get(rv)) return {};
  return std::string(rv);
}

struct ReflectorSpec {
  state::Kind kind;
  std::string path;  // collection path
  std::string field_selector;
  std::string what;
  std::string lease_namespace, lease_name;  // for the Lease: keep only this one
};

}  // namespace kube_source_detail
using namespace kube_source_detail;

struct KubeSource::Impl {
  KubeClient& client;
  KubeSourceOptions options;
  state::ClusterHandler* handler = nullptr;

  std::atomic<bool> stop_flag{false};
  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool started = false;
  bool stopped = false;

  std::mutex qmu;
  std::condition_variable q_not_empty, q_not_full;
  std::deque<Item> queue;
  std::thread dispatcher;
  std::vector<std::thread> reflectors;
  std::atomic<int> pending_initial{0};
  std::atomic<bool> synced{false};

  std::mutex emu;
  std::condition_variable ecv;
  std::deque<QueuedEvent> events;
  bool events_stop = false;
  std::atomic<bool> events_cancel{false};
  std::thread event_thread;
  std::atomic<uint64_t> event_serial{0};

  mutable std::mutex stats_mu;
  KubeSourceStats stats;

  // Fetched once on the constructing thread: the default logger's registry is initialized
  // lazily, which must not happen concurrently on the worker threads.
  std::shared_ptr<spdlog::logger> log;

  Impl(KubeClient& c, KubeSourceOptions o) : client(c), options(std::move(o)) {
    log = options.logger ? options.logger : spdlog::default_logger();
  }

  template <class F>
  void bump(F&& f) {
    std::lock_guard lock(stats_mu);
    f(stats);
  }
  // Sleeps unless stopping; false when stopping.
  bool sleep_for(std::chrono::milliseconds d) {
    std::unique_lock lock(stop_mu);
    return !stop_cv.wait_for(lock, d, [&] { return stop_flag.load(); });
  }
  bool push(Item item) {
    std::unique_lock lock(qmu);
    q_not_full.wait(lock,
                    [&] { return stop_flag.load() || queue.size() < options.dispatch_queue; });
    if (stop_flag) return false;
    queue.push_back(std::move(item));
    q_not_empty.notify_one();
    return true;
  }
  void run_dispatcher();
  void run_reflector(const ReflectorSpec& spec);
  void run_events();
  void send_events(std::vector<QueuedEvent> batch, Clock::time_point deadline);
};

void KubeSource::Impl::run_dispatcher() {
  for (;;) {
    Item item;
    {
      std::unique_lock lock(qmu);
      q_not_empty.wait(lock, [&] { return stop_flag.load() || !queue.empty(); });
      if (stop_flag) return;
      item = std::move(queue.front());
      queue.pop_front();
      q_not_full.notify_one();
    }
    try {
      if (item.synced_marker) {
        synced = true;
        handler->on_synced();
        continue;
      }
      std::visit(
          [&](auto& obj) {
            using T = std::decay_t<decltype(obj)>;
            if constexpr (std::is_same_v<T, model::Node>) {
              handler->on_node(item.type, obj);
            } else if constexpr (std::is_same_v<T, model::Pod>) {
              handler->on_pod(item.type, obj);
            } else if constexpr (std::is_same_v<T, model::ResourceQuota>) {
              handler->on_quota(item.type, obj);
            } else {
              handler->on_lease(item.type, obj);
            }
          },
          item.object);
    } catch (const std::exception& e) {
      log->error("cluster handler threw: {}", e.what());
    } catch (...) {
      log->error("cluster handler threw");
    }
  }
}

void KubeSource::Impl::run_reflector(const ReflectorSpec& spec) {
  std::map<std::string, Cached> cache;
  std::string rv;
  bool first = true;
  int failures = 0;
  thread_local std::minstd_rand rng{std::random_device{}()};
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto backoff = [&] {
    ++failures;
    return sleep_for(backoff_delay(options.reconnect, failures - 1, unit(rng)));
  };
  auto wanted = [&](const Decoded& d) {
    if (spec.kind != state::Kind::kLease) return true;
    const auto& lease = std::get<state::Lease>(d.object);
    return lease.name == spec.lease_name && lease.namespace_ == spec.lease_namespace;
  };

  while (!stop_flag) {
    // LIST, then replace the cache: what changed is delivered, what vanished is deleted.
    std::string path = spec.path;
    if (!spec.field_selector.empty()) path += "?fieldSelector=" + url_escape(spec.field_selector);
    bump([](KubeSourceStats& s) { ++s.lists; });
    // Each object is handed on as its page is decoded, so the list is never held whole;
    // `fresh` keeps what was delivered. Deletions wait for the whole list.
    std::map<std::string, Cached> fresh;
    // What was delivered stays known when a list fails part way or starts over whole, so it
    // is not delivered as new again.
    auto keep_delivered = [&] {
      for (auto& [key, entry] : fresh) cache.insert_or_assign(key, std::move(entry));
      fresh.clear();
    };
    uint64_t decode_errors = 0;
    bool stopped = false;
    auto listed = client.list_each_page(
        path, "list " + spec.what, &stop_flag, [&](std::string& page, bool restarted) -> Status {
          if (restarted) {
            log->info("list {}: a continue token expired between pages; listing again, whole",
                      spec.what);
            keep_delivered();
          }
          auto page_rv = for_each_list_item(page, [&](std::string_view item) -> Status {
            auto d = decode_object(spec.kind, item);
            if (!d) {
              ++decode_errors;
              log->warn("list {}: skipping an object: {}", spec.what, d.error().message);
              return ok_status();
            }
            if (!wanted(*d)) return ok_status();
            Cached entry{std::move(d->resource_version), uid_of(d->object)};
            const auto old = cache.find(d->key);
            if (old == cache.end() || old->second.resource_version != entry.resource_version) {
              const EventType type = old == cache.end() ? EventType::kAdded : EventType::kModified;
              if (!push(Item{false, type, std::move(d->object)})) {
                stopped = true;
                return make_error("stopping");
              }
            }
            fresh.insert_or_assign(std::move(d->key), std::move(entry));
            return ok_status();
          });
          if (!page_rv) return page_rv.error();
          return ok_status();
        });
    if (decode_errors > 0) bump([&](KubeSourceStats& s) { s.decode_errors += decode_errors; });
    if (stopped || stop_flag) return;
    if (!listed) {
      keep_delivered();
      log->warn("{}", listed.error().message);
      if (!backoff()) break;
      continue;
    }
    for (auto it = cache.begin(); it != cache.end(); ++it) {
      if (fresh.count(it->first) == 0) {
        if (!push(
                Item{false, EventType::kDeleted, tombstone(spec.kind, it->first, it->second.uid)}))
          return;
      }
    }
    cache = std::move(fresh);
    rv = std::move(listed->resource_version);
    if (first) {
      first = false;
      if (--pending_initial == 0) {
        if (!push(Item{true, EventType::kAdded, {}})) return;
      }
    }
    failures = 0;

    // WATCH from the list's version until it expires (410) or stop.
    bool relist = false;
    while (!stop_flag && !relist) {
      WatchRequest req;
      req.path = spec.path;
      req.resource_version = rv;
      req.timeout_seconds = int(options.watch_timeout_seconds * (1.0 + unit(rng)));
      req.field_selector = spec.field_selector;
      req.what = spec.what;
      bump([](KubeSourceStats& s) { ++s.watches; });
      bool stopped_in_callback = false;
      auto status = client.watch(
          req,
          [&](const WatchEventView& ev) {
            if (ev.type == "BOOKMARK") {
              if (std::string v = bookmark_version(ev.object); !v.empty()) rv = std::move(v);
              return true;
            }
            auto d = decode_object(spec.kind, ev.object);
            if (!d) {
              bump([](KubeSourceStats& s) { ++s.decode_errors; });
              log->warn("watch {}: skipping an object: {}", spec.what, d.error().message);
              return true;
            }
            if (!d->resource_version.empty()) rv = d->resource_version;
            if (!wanted(*d)) return true;
            auto it = cache.find(d->key);
            if (ev.type == "DELETED") {
              if (it == cache.end()) return true;  // never delivered
              cache.erase(it);
              if (!push(Item{false, EventType::kDeleted, std::move(d->object)})) {
                stopped_in_callback = true;
                return false;
              }
              return true;
            }
            if (it != cache.end() && it->second.resource_version == d->resource_version) {
              return true;  // already delivered
            }
            const EventType type = it == cache.end() ? EventType::kAdded : EventType::kModified;
            cache[d->key] = Cached{d->resource_version, uid_of(d->object)};
            if (!push(Item{false, type, std::move(d->object)})) {
              stopped_in_callback = true;
              return false;
            }
            return !stop_flag;
          },
          &stop_flag);
      if (stop_flag || stopped_in_callback) return;
      ClientObserver* observer = client.observer();
      if (status.ok()) {
        failures = 0;
        if (observer != nullptr)
          observer->watch_restarted(request_kind("WATCH", spec.path).resource, "timeout");
        continue;  // the server closed the stream: watch again from rv
      }
      if (observer != nullptr) {
        observer->watch_restarted(request_kind("WATCH", spec.path).resource,
                                  status.code() == ApiCode::kGone ? "expired" : "error");
      }
      if (status.code() == ApiCode::kGone) {
        bump([](KubeSourceStats& s) { ++s.relists_after_gone; });
        log->info("{}; relisting", status.error().message);
        relist = true;
        break;
      }
      bump([](KubeSourceStats& s) { ++s.watch_errors; });
      log->warn("{}", status.error().message);
      if (!backoff()) return;
    }
  }
}

void KubeSource::Impl::send_events(std::vector<QueuedEvent> batch, Clock::time_point deadline) {
  // Identical events of one batch become one Event with a count.
  struct Group {
    const QueuedEvent* first = nullptr;
    std::chrono::system_clock::time_point last;
    int count = 0;
  };
  std::vector<Group> groups;
  std::map<std::tuple<std::string_view, std::string_view, std::string_view, std::string_view,
                      std::string_view, std::string_view>,
           size_t>
      index;
  for (const QueuedEvent& q : batch) {
    const auto& e = q.event;
    auto key = std::make_tuple(std::string_view(e.namespace_), std::string_view(e.pod_name),
                               std::string_view(e.pod_uid), std::string_view(e.type),
                               std::string_view(e.reason), std::string_view(e.message));
    auto [it, inserted] = index.try_emplace(key, groups.size());
    if (inserted) groups.push_back(Group{&q, q.time, 0});
    Group& g = groups[it->second];
    ++g.count;
    g.last = std::max(g.last, q.time);
  }
  for (const Group& g : groups) {
    const state::PodEvent& e = g.first->event;
    const auto now = Clock::now();
    if (now >= deadline || events_cancel.load()) {
      bump([&](KubeSourceStats& s) { s.events_failed += 1; });
      continue;
    }
    const std::string ns = e.namespace_.empty() ? "default" : e.namespace_;
    const auto nanos =
        std::chrono::duration_cast<std::chrono::nanoseconds>(g.first->time.time_since_epoch())
            .count();
    char name_suffix[48];
    std::snprintf(name_suffix, sizeof name_suffix, ".%llx%llx",
                  static_cast<unsigned long long>(nanos),
                  static_cast<unsigned long long>(event_serial++ & 0xfff));
    model::JsonWriter w;
    w.begin_object();
    w.key("apiVersion").string("v1");
    w.key("kind").string("Event");
    w.key("metadata").begin_object();
    w.key("name").string(e.pod_name + name_suffix);
    w.key("namespace").string(ns);
    w.end_object();
    w.key("involvedObject").begin_object();
    w.key("apiVersion").string("v1");
    w.key("kind").string(e.kind);
    if (e.kind != "Node") w.key("namespace").string(ns);  // nodes are cluster-scoped
    w.key("name").string(e.pod_name);
    if (!e.pod_uid.empty()) w.key("uid").string(e.pod_uid);
    w.end_object();
    w.key("reason").string(e.reason);
    w.key("message").string(e.message);
    w.key("type").string(e.type.empty() ? "Normal" : e.type);
    w.key("source").begin_object().key("component").string(options.scheduler_name).end_object();
    w.key("firstTimestamp").string(go::format_rfc3339_utc(g.first->time));
    w.key("lastTimestamp").string(go::format_rfc3339_utc(g.last));
    w.key("count").number(g.count);
    w.key("reportingComponent").string(options.scheduler_name);
    w.end_object();
    Request req;
    req.verb = "POST";
    req.path = "/api/v1/namespaces/" + url_escape(ns) + "/events";
    req.body = w.take();
    req.what = "event " + e.reason + " for pod " + ns + "/" + e.pod_name;
    req.timeout = std::min(options.event_timeout,
                           std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now));
    req.cancel = &events_cancel;
    req.event = true;
    auto result = client.call(req);
    if (result) {
      bump([](KubeSourceStats& s) { ++s.events_sent; });
    } else {
      bump([](KubeSourceStats& s) { ++s.events_failed; });
      log->warn("{}", result.error().message);
    }
  }
}

void KubeSource::Impl::run_events() {
  for (;;) {
    std::vector<QueuedEvent> batch;
    bool flushing = false;
    {
      std::unique_lock lock(emu);
      ecv.wait(lock, [&] { return events_stop || !events.empty(); });
      flushing = events_stop;
      if (flushing) {
        batch.assign(std::make_move_iterator(events.begin()),
                     std::make_move_iterator(events.end()));
        events.clear();
      } else {
        const size_t n = std::min(events.size(), std::max<size_t>(options.event_batch, 1));
        batch.assign(std::make_move_iterator(events.begin()),
                     std::make_move_iterator(events.begin() + std::ptrdiff_t(n)));
        events.erase(events.begin(), events.begin() + std::ptrdiff_t(n));
      }
    }
    if (flushing) {
      send_events(std::move(batch), Clock::now() + options.event_flush_timeout);
      return;
    }
    send_events(std::move(batch), Clock::time_point::max());
  }
}

KubeSource::KubeSource(std::shared_ptr<KubeClient> client, KubeSourceOptions options)
    : client_(std::move(client)), impl_(std::make_unique<Impl>(*client_, std::move(options))) {}

KubeSource::~KubeSource() {
  stop();
}

Result<std::unique_ptr<KubeSource>> KubeSource::create(const KubeConfig& config,
                                                       const ClientOptions& client_options,
                                                       KubeSourceOptions options) {
  auto client = KubeClient::create(config, client_options);
  if (!client) return client.error();
  auto source = std::make_unique<KubeSource>(std::shared_ptr<KubeClient>(std::move(*client)),
                                             std::move(options));
  source->description_ = config.description;
  return source;
}

void KubeSource::start(state::ClusterHandler& handler) {
  Impl& im = *impl_;
  {
    std::lock_guard lock(im.stop_mu);
    if (im.started || im.stopped) return;
    im.started = true;
  }
  im.handler = &handler;
  std::vector<ReflectorSpec> specs = {
      {state::Kind::kNode, "/api/v1/nodes", "", "nodes", "", ""},
      {state::Kind::kPod, "/api/v1/pods", "", "pods", "", ""},
      {state::Kind::kResourceQuota, "/api/v1/resourcequotas", "", "resourcequotas", "", ""},
  };
  if (!im.options.lease_name.empty()) {
    const std::string& ns = im.options.lease_namespace;
    specs.push_back(
        ReflectorSpec{state::Kind::kLease,
                      "/apis/coordination.k8s.io/v1/namespaces/" + url_escape(ns) + "/leases",
                      "metadata.name=" + im.options.lease_name,
                      "lease " + ns + "/" + im.options.lease_name, ns, im.options.lease_name});
  }
  im.pending_initial = int(specs.size());
  im.dispatcher = std::thread([&im] { im.run_dispatcher(); });
  im.event_thread = std::thread([&im] { im.run_events(); });
  for (const ReflectorSpec& spec : specs) {
    im.reflectors.emplace_back([&im, spec] {
      try {
        im.run_reflector(spec);
      } catch (const std::exception& e) {
        im.log->error("reflector {}: {}", spec.what, e.what());
      }
    });
  }
}

void KubeSource::stop() {
  Impl& im = *impl_;
  {
    std::lock_guard lock(im.stop_mu);
    if (im.stopped) return;
    im.stopped = true;
    im.stop_flag = true;
  }
  im.stop_cv.notify_all();
  {
    std::lock_guard lock(im.qmu);  // no waiter can miss the flag between its check and wait
  }
  im.q_not_empty.notify_all();
  im.q_not_full.notify_all();
  for (auto& t : im.reflectors) t.join();
  im.reflectors.clear();
  if (im.dispatcher.joinable()) im.dispatcher.join();
  {
    std::lock_guard lock(im.emu);
    im.events_stop = true;
  }
  im.ecv.notify_all();
  if (im.event_thread.joinable()) {
    // The flush has its own deadline, but a request sent before stop() may still be in
    // flight with the normal event timeout: abandon it once the flush deadline has passed.
    std::thread watchdog([&im] {
      const auto until =
          Clock::now() + im.options.event_flush_timeout + std::chrono::milliseconds(500);
      std::unique_lock lock(im.stop_mu);
      im.stop_cv.wait_until(lock, until, [&] { return im.events_cancel.load(); });
      im.events_cancel = true;
    });
    im.event_thread.join();
    {
      std::lock_guard lock(im.stop_mu);
      im.events_cancel = true;
    }
    im.stop_cv.notify_all();
    watchdog.join();
  }
}

std::string KubeSource::describe() const {
  std::string out = "kubernetes " + client_->server();
  if (!description_.empty()) out += " (" + description_ + ")";
  return out;
}

KubeSourceStats KubeSource::stats() const {
  std::lock_guard lock(impl_->stats_mu);
  return impl_->stats;
}

bool KubeSource::synced() const {
  return impl_->synced.load();
}

ApiResult<model::Node> KubeSource::get_node(std::string_view name) {
  const std::string what = "node " + std::string(name);
  auto body = retry_unavailable<std::string>(impl_->options.write_retry, [&] {
    return client_->get("/api/v1/nodes/" + url_escape(name), what);
  });
  if (!body) return body.error();
  auto node = model::decode_node_json(*body);
  if (!node) return ApiError{ApiCode::kOther, "GET " + what + ": " + node.error().message};
  return std::move(*node);
}

ApiResult<model::Pod> KubeSource::get_pod(std::string_view namespace_, std::string_view name) {
  const std::string what = "pod " + std::string(namespace_) + "/" + std::string(name);
  auto body = retry_unavailable<std::string>(impl_->options.write_retry, [&] {
    return client_->get(
        "/api/v1/namespaces/" + url_escape(namespace_) + "/pods/" + url_escape(name), what);
  });
  if (!body) return body.error();
  auto pod = model::decode_pod_json(*body);
  if (!pod) return ApiError{ApiCode::kOther, "GET " + what + ": " + pod.error().message};
  return std::move(*pod);
}

ApiStatus KubeSource::patch_node_annotations(std::string_view name,
                                             const state::MetadataPatch& annotations,
                                             std::string_view resource_version) {
  const std::string body = metadata_merge_patch(annotations, {}, resource_version);
  const std::string what = "node " + std::string(name);
  auto r = retry_unavailable<std::string>(impl_->options.write_retry, [&] {
    return client_->merge_patch("/api/v1/nodes/" + url_escape(name), body, what);
  });
  if (!r) return r.error();
  return state::Done{};
}

ApiStatus KubeSource::patch_pod_metadata(std::string_view namespace_, std::string_view name,
                                         const state::MetadataPatch& annotations,
                                         const state::MetadataPatch& labels) {
  const std::string body = metadata_merge_patch(annotations, labels, {});
  const std::string what = "pod " + std::string(namespace_) + "/" + std::string(name);
  auto r = retry_unavailable<std::string>(impl_->options.write_retry, [&] {
    return client_->merge_patch(
        "/api/v1/namespaces/" + url_escape(namespace_) + "/pods/" + url_escape(name), body, what);
  });
  if (!r) return r.error();
  return state::Done{};
}

ApiStatus KubeSource::bind_pod(std::string_view namespace_, std::string_view name,
                               std::string_view uid, std::string_view node) {
  model::JsonWriter w;
  w.begin_object();
  w.key("apiVersion").string("v1");
  w.key("kind").string("Binding");
  w.key("metadata").begin_object();
  w.key("name").string(name);
  w.key("namespace").string(namespace_);
  if (!uid.empty()) w.key("uid").string(uid);
  w.end_object();
  w.key("target").begin_object();
  w.key("apiVersion").string("v1");
  w.key("kind").string("Node");
  w.key("name").string(node);
  w.end_object();
  w.end_object();
  const std::string body = w.take();
  const std::string what = "binding of pod " + std::string(namespace_) + "/" + std::string(name);
  int attempts = 0;
  auto r = retry_unavailable<std::string>(impl_->options.write_retry, [&] {
    ++attempts;
    return client_->post(
        "/api/v1/namespaces/" + url_escape(namespace_) + "/pods/" + url_escape(name) + "/binding",
        body, what);
  });
  if (r) return state::Done{};
  // A retried binding whose first attempt went through (the answer was lost) conflicts with
  // itself: it succeeded if the pod is now bound to this node.
  if (r.code() == ApiCode::kConflict && attempts > 1) {
    auto pod = get_pod(namespace_, name);
    if (pod && pod->spec.node_name == node && (uid.empty() || pod->metadata.uid == uid)) {
      return state::Done{};
    }
  }
  return r.error();
}

void KubeSource::record_event(state::PodEvent event) {
  Impl& im = *impl_;
  {
    std::lock_guard lock(im.emu);
    if (im.events_stop) return;
    const size_t cap = std::max<size_t>(im.options.event_queue, 1);
    size_t dropped = 0;
    while (im.events.size() >= cap) {
      im.events.pop_front();
      ++dropped;
    }
    im.events.push_back(QueuedEvent{std::move(event), std::chrono::system_clock::now()});
    if (dropped > 0) {
      std::lock_guard slock(im.stats_mu);
      im.stats.events_dropped += dropped;
    }
    if (ClientObserver* observer = client_->observer(); observer != nullptr) {
      for (size_t i = 0; i < dropped; ++i) observer->event_dropped();
    }
  }
  im.ecv.notify_one();
}

}  // namespace hamisim::kube

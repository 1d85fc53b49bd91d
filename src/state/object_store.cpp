#include "state/object_store.h"

#include "go/rfc3339.h"

#include <boost/json.hpp>
#include <ctime>
#include <set>

namespace hamisim::state {
namespace json = boost::json;

namespace {

constexpr std::string_view kKinds[] = {"Node", "Pod", "ResourceQuota", "Lease", "Event"};

std::optional<Kind> kind_from(std::string_view text) {
  for (size_t i = 0; i < std::size(kKinds); ++i) {
    if (text == kKinds[i]) return static_cast<Kind>(i);
  }
  return std::nullopt;
}

std::string_view api_version_of(Kind kind) {
  return kind == Kind::kLease ? "coordination.k8s.io/v1" : "v1";
}

std::string object_name(Kind kind, std::string_view ns, std::string_view name) {
  std::string out(to_string(kind));
  out += ' ';
  if (!ns.empty()) out.append(ns).append("/");
  out.append(name);
  return out;
}

ApiError api_error(ApiCode code, std::string message) {
  return ApiError{code, std::move(message)};
}

const json::object* object_at(const json::object& o, std::string_view key) {
  auto it = o.find(key);
  return it != o.end() && it->value().is_object() ? &it->value().get_object() : nullptr;
}

std::string string_at(const json::object& o, std::string_view key) {
  auto it = o.find(key);
  return it != o.end() && it->value().is_string() ? std::string(it->value().get_string())
                                                  : std::string();
}

// A valid label value: at most 63 characters, alphanumerics with '-', '_', '.' inside.
bool valid_label_value(std::string_view v) {
  if (v.size() > 63) return false;
  if (v.empty()) return true;
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!alnum(v.front()) || !alnum(v.back())) return false;
  for (char c : v) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// What the API server's validation would reject in the metadata we write: non-string
// annotation or label values, invalid label values.
std::optional<std::string> validate_metadata(const json::object& metadata) {
  if (const auto it = metadata.find("annotations");
      it != metadata.end() && !it->value().is_null()) {
    if (!it->value().is_object()) return "metadata.annotations: must be an object";
    for (const auto& [k, v] : it->value().get_object()) {
      if (!v.is_string()) return "metadata.annotations." + std::string(k) + ": must be a string";
    }
  }
  if (const auto it = metadata.find("labels"); it != metadata.end() && !it->value().is_null()) {
    if (!it->value().is_object()) return "metadata.labels: must be an object";
    for (const auto& [k, v] : it->value().get_object()) {
      if (!v.is_string()) return "metadata.labels." + std::string(k) + ": must be a string";
      if (!valid_label_value(v.get_string())) {
        return "metadata.labels." + std::string(k) + ": Invalid value: \"" +
               std::string(v.get_string()) +
               "\": a valid label must be 63 characters or less, empty or beginning and ending "
               "with an alphanumeric character with '-', '_' or '.' in between";
      }
    }
  }
  return std::nullopt;
}

// RFC 7386.
void merge_into(json::value& target, const json::value& patch) {
  if (!patch.is_object()) {
    target = patch;
    return;
  }
  if (!target.is_object()) target = json::object();
  json::object& t = target.get_object();
  for (const auto& [key, value] : patch.get_object()) {
    if (value.is_null()) {
      t.erase(key);
    } else {
      merge_into(t[key], value);
    }
  }
}

Result<json::value> parse(std::string_view text) {
  json::parse_options opts;
  opts.max_depth = 64;
  boost::system::error_code ec;
  json::value v = json::parse(text, ec, {}, opts);
  if (ec) return make_error("invalid JSON: " + ec.message());
  return v;
}

}  // namespace

std::string_view to_string(Kind kind) {
  return kKinds[static_cast<size_t>(kind)];
}

std::string_view resource_name(Kind kind) {
  switch (kind) {
    case Kind::kNode:
      return "nodes";
    case Kind::kPod:
      return "pods";
    case Kind::kResourceQuota:
      return "resourcequotas";
    case Kind::kLease:
      return "leases";
    case Kind::kEvent:
      return "events";
  }
  return "";
}

bool namespaced(Kind kind) {
  return kind != Kind::kNode;
}

ObjectStore::ObjectStore() : ObjectStore(Options{}) {}
ObjectStore::ObjectStore(Options options) : options_(options) {}
ObjectStore::~ObjectStore() = default;

void ObjectStore::record(EventType type, const StoredObject& object) {
  history_.push_back(WatchEvent{type, object});
  while (history_.size() > options_.history) {
    history_floor_ = history_.front().object.resource_version;
    history_.pop_front();
  }
  changed_.notify_all();
}

namespace {

// Normalizes one object for storing: kind and apiVersion set, namespace resolved, uid and
// creationTimestamp filled in. Returns the namespace and name.
Result<std::pair<std::string, std::string>> normalize(Kind kind, json::object& o,
                                                      std::string_view namespace_,
                                                      uint64_t& next_uid) {
  o["kind"] = to_string(kind);
  if (string_at(o, "apiVersion").empty()) o["apiVersion"] = api_version_of(kind);
  json::value& mv = o["metadata"];
  if (!mv.is_object()) return make_error("metadata: must be an object");
  json::object& metadata = mv.get_object();
  std::string name = string_at(metadata, "name");
  if (name.empty()) {
    const std::string generate = string_at(metadata, "generateName");
    if (generate.empty()) return make_error("metadata.name: required");
    name = generate + std::to_string(next_uid);
    metadata["name"] = name;
  }
  std::string ns = string_at(metadata, "namespace");
  if (namespaced(kind)) {
    if (ns.empty()) ns = namespace_.empty() ? "default" : std::string(namespace_);
    if (!namespace_.empty() && ns != namespace_) {
      return make_error("metadata.namespace: \"" + ns + "\" does not match the request's \"" +
                        std::string(namespace_) + "\"");
    }
    metadata["namespace"] = ns;
  } else {
    ns.clear();
    metadata.erase("namespace");
  }
  if (string_at(metadata, "uid").empty()) {
    char uid[40];
    std::snprintf(uid, sizeof uid, "00000000-0000-4000-8000-%012llu",
                  static_cast<unsigned long long>(next_uid));
    metadata["uid"] = uid;
  }
  ++next_uid;
  if (string_at(metadata, "creationTimestamp").empty())
    metadata["creationTimestamp"] = go::format_rfc3339_utc(std::chrono::system_clock::now());
  if (auto bad = validate_metadata(metadata)) return make_error(*bad);
  return std::pair{std::move(ns), std::move(name)};
}

}  // namespace

Result<size_t> ObjectStore::load(std::string_view text, std::vector<model::SkippedItem>* skipped) {
  auto doc = parse(text);
  if (!doc) return doc.error();
  struct Item {
    Kind kind;
    json::object object;
  };
  std::vector<Item> staged;
  // Items of a List (typed lists give their kind to items without one), a JSON array, or one
  // object; nested Lists are flattened.
  auto collect = [&](auto&& self, const json::value& v, std::string_view list_kind,
                     const std::string& where) -> Status {
    if (v.is_array()) {
      size_t i = 0;
      for (const auto& item : v.get_array()) {
        if (auto s = self(self, item, list_kind, where + "[" + std::to_string(i++) + "]"); !s) {
          return s;
        }
      }
      return ok_status();
    }
    if (!v.is_object()) return make_error(where + ": must be an object");
    const json::object& o = v.get_object();
    std::string kind = string_at(o, "kind");
    if (kind.empty() && list_kind.size() > 4 && list_kind.ends_with("List")) {
      kind = std::string(list_kind.substr(0, list_kind.size() - 4));
    }
    if (kind.ends_with("List") || (kind.empty() && o.contains("items"))) {
      const auto it = o.find("items");
      if (it == o.end() || it->value().is_null()) return ok_status();
      return self(self, it->value(), kind, where.empty() ? "items" : where + ".items");
    }
    const auto k = kind_from(kind);
    if (!k) {  // kinds the live path does not read
      if (skipped != nullptr) {
        model::SkippedItem item;
        item.path = where;
        item.kind = kind;
        item.api_version = string_at(o, "apiVersion");
        if (const auto* m = o.if_contains("metadata"); m != nullptr && m->is_object()) {
          item.name = string_at(m->get_object(), "name");
          item.namespace_ = string_at(m->get_object(), "namespace");
        }
        skipped->push_back(std::move(item));
      }
      return ok_status();
    }
    staged.push_back({*k, o});
    return ok_status();
  };
  if (auto s = collect(collect, *doc, "", ""); !s) return s.error();

  std::lock_guard lock(mu_);
  // Validate everything first so that a bad item leaves the store unchanged.
  uint64_t next_uid = next_uid_;
  std::vector<Key> keys;
  std::set<Key> seen;
  for (size_t i = 0; i < staged.size(); ++i) {
    auto names = normalize(staged[i].kind, staged[i].object, {}, next_uid);
    const std::string where = std::string(to_string(staged[i].kind)) + " #" + std::to_string(i);
    if (!names) return make_error(where + ": " + names.error().message);
    Key key{staged[i].kind, names->first, names->second};
    if (objects_.count(key) != 0 || !seen.insert(key).second) {
      return make_error(where + ": duplicate " +
                        object_name(staged[i].kind, names->first, names->second));
    }
    keys.push_back(std::move(key));
  }
  for (size_t i = 0; i < staged.size(); ++i) {
    StoredObject so;
    so.kind = staged[i].kind;
    so.namespace_ = std::get<1>(keys[i]);
    so.name = std::get<2>(keys[i]);
    so.resource_version = ++version_;
    staged[i].object["metadata"].get_object()["resourceVersion"] =
        std::to_string(so.resource_version);
    so.json = json::serialize(staged[i].object);
    record(EventType::kAdded, so);
    objects_.emplace(std::move(keys[i]), std::move(so));
  }
  next_uid_ = next_uid;
  return staged.size();
}

namespace {

// The object `objects` holds under this kind, namespace (ignored for cluster-scoped kinds) and
// name, or kube-apiserver's NotFound. A template for the const and the mutable map alike.
template <class Objects>
ApiResult<decltype(std::declval<Objects&>().begin())> find_object(Objects& objects, Kind kind,
                                                                  std::string_view namespace_,
                                                                  std::string_view name) {
  auto it = objects.find(
      std::make_tuple(kind, std::string(namespaced(kind) ? namespace_ : ""), std::string(name)));
  if (it == objects.end()) {
    return api_error(ApiCode::kNotFound,
                     std::string(resource_name(kind)) + " \"" + std::string(name) + "\" not found");
  }
  return it;
}

}  // namespace

ApiResult<StoredObject> ObjectStore::get(Kind kind, std::string_view namespace_,
                                         std::string_view name) const {
  std::lock_guard lock(mu_);
  auto found = find_object(objects_, kind, namespace_, name);
  if (!found) return found.error();
  return (*found)->second;
}

ObjectStore::Listing ObjectStore::list(Kind kind, std::string_view namespace_) const {
  std::lock_guard lock(mu_);
  Listing out;
  out.resource_version = version_;
  for (auto it = objects_.lower_bound(std::make_tuple(kind, std::string(), std::string()));
       it != objects_.end() && std::get<0>(it->first) == kind; ++it) {
    if (!namespace_.empty() && it->second.namespace_ != namespace_) continue;
    out.items.push_back(it->second);
  }
  return out;
}

ApiResult<StoredObject> ObjectStore::create(Kind kind, std::string_view text,
                                            std::string_view namespace_) {
  auto doc = parse(text);
  if (!doc) return api_error(ApiCode::kInvalid, doc.error().message);
  if (!doc->is_object()) return api_error(ApiCode::kInvalid, "the body must be a JSON object");
  json::object& o = doc->get_object();
  std::lock_guard lock(mu_);
  auto names = normalize(kind, o, namespace_, next_uid_);
  if (!names) return api_error(ApiCode::kInvalid, names.error().message);
  Key key{kind, names->first, names->second};
  if (objects_.count(key) != 0) {
    return api_error(ApiCode::kConflict, std::string(resource_name(kind)) + " \"" + names->second +
                                             "\" already exists");
  }
  StoredObject so;
  so.kind = kind;
  so.namespace_ = names->first;
  so.name = names->second;
  so.resource_version = ++version_;
  o["metadata"].get_object()["resourceVersion"] = std::to_string(so.resource_version);
  so.json = json::serialize(o);
  record(EventType::kAdded, so);
  objects_.emplace(std::move(key), so);
  return so;
}

ApiResult<StoredObject> ObjectStore::merge_patch(Kind kind, std::string_view namespace_,
                                                 std::string_view name, std::string_view patch) {
  auto p = parse(patch);
  if (!p) return api_error(ApiCode::kInvalid, p.error().message);
  if (!p->is_object()) return api_error(ApiCode::kInvalid, "a merge patch must be a JSON object");
  std::lock_guard lock(mu_);
  auto found = find_object(objects_, kind, namespace_, name);
  if (!found) return found.error();
  StoredObject& so = (*found)->second;
  if (const json::object* pm = object_at(p->get_object(), "metadata")) {
    if (auto rv = pm->find("resourceVersion"); rv != pm->end() && !rv->value().is_null()) {
      const bool matches = rv->value().is_string() &&
                           rv->value().get_string() == std::to_string(so.resource_version);
      if (!matches) {
        return api_error(ApiCode::kConflict,
                         "Operation cannot be fulfilled on " + std::string(resource_name(kind)) +
                             " \"" + so.name +
                             "\": the object has been modified; please apply your changes to the "
                             "latest version and try again");
      }
    }
  }
  auto current = parse(so.json);
  if (!current) return api_error(ApiCode::kOther, "stored object: " + current.error().message);
  json::value merged = std::move(current).value();
  const json::object before_meta = merged.get_object()["metadata"].get_object();
  merge_into(merged, *p);
  if (!merged.is_object() || !merged.get_object()["metadata"].is_object()) {
    return api_error(ApiCode::kInvalid, "metadata: must be an object");
  }
  json::object& meta = merged.get_object()["metadata"].get_object();
  for (const char* fixed : {"name", "namespace", "uid", "creationTimestamp"}) {
    if (auto b = before_meta.find(fixed); b != before_meta.end()) {
      meta[fixed] = b->value();
    } else {
      meta.erase(fixed);
    }
  }
  if (auto bad = validate_metadata(meta)) {
    return api_error(ApiCode::kInvalid,
                     object_name(kind, so.namespace_, so.name) + " is invalid: " + *bad);
  }
  merged.get_object()["kind"] = to_string(kind);
  so.resource_version = ++version_;
  meta["resourceVersion"] = std::to_string(so.resource_version);
  so.json = json::serialize(merged);
  record(EventType::kModified, so);
  return so;
}

ApiResult<StoredObject> ObjectStore::bind(std::string_view namespace_, std::string_view name,
                                          std::string_view uid, std::string_view node) {
  std::lock_guard lock(mu_);
  auto found = find_object(objects_, Kind::kPod, namespace_, name);
  if (!found) return found.error();
  StoredObject& so = (*found)->second;
  auto current = parse(so.json);
  if (!current) return api_error(ApiCode::kOther, "stored object: " + current.error().message);
  json::object& pod = current->get_object();
  json::object& meta = pod["metadata"].get_object();
  if (!uid.empty() && string_at(meta, "uid") != uid) {
    return api_error(ApiCode::kConflict,
                     "Operation cannot be fulfilled on pods/binding \"" + std::string(name) +
                         "\": Precondition failed: UID in "
                         "precondition: " +
                         std::string(uid) + ", UID in object meta: " + string_at(meta, "uid"));
  }
  json::value& spec = pod["spec"];
  if (!spec.is_object()) spec = json::object();
  const std::string bound = string_at(spec.get_object(), "nodeName");
  if (!bound.empty()) {
    return api_error(ApiCode::kConflict, "Operation cannot be fulfilled on pods/binding \"" +
                                             std::string(name) + "\": pod " + std::string(name) +
                                             " is already assigned to node \"" + bound + "\"");
  }
  spec.get_object()["nodeName"] = node;
  so.resource_version = ++version_;
  meta["resourceVersion"] = std::to_string(so.resource_version);
  so.json = json::serialize(pod);
  record(EventType::kModified, so);
  return so;
}

ApiStatus ObjectStore::remove(Kind kind, std::string_view namespace_, std::string_view name) {
  std::lock_guard lock(mu_);
  auto found = find_object(objects_, kind, namespace_, name);
  if (!found) return found.error();
  StoredObject last = std::move((*found)->second);
  objects_.erase(*found);
  last.resource_version = ++version_;
  record(EventType::kDeleted, last);
  return Done{};
}

ApiResult<std::vector<WatchEvent>> ObjectStore::changes_since(Kind kind, uint64_t resource_version,
                                                              std::string_view namespace_) const {
  std::lock_guard lock(mu_);
  if (resource_version < history_floor_) {
    return api_error(ApiCode::kGone,
                     "too old resource version: " + std::to_string(resource_version) + " (" +
                         std::to_string(history_floor_ + 1) + ")");
  }
  std::vector<WatchEvent> out;
  for (const WatchEvent& e : history_) {
    if (e.object.resource_version <= resource_version || e.object.kind != kind) continue;
    if (!namespace_.empty() && e.object.namespace_ != namespace_) continue;
    out.push_back(e);
  }
  return out;
}

uint64_t ObjectStore::wait_for_change(uint64_t resource_version,
                                      std::chrono::steady_clock::time_point deadline) const {
  std::unique_lock lock(mu_);
  const uint64_t generation = wake_generation_;
  changed_.wait_until(lock, deadline, [&] {
    return version_ > resource_version || wake_generation_ != generation;
  });
  return version_;
}

void ObjectStore::wake_all() const {
  {
    std::lock_guard lock(mu_);
    ++const_cast<ObjectStore*>(this)->wake_generation_;
  }
  changed_.notify_all();
}

uint64_t ObjectStore::resource_version() const {
  std::lock_guard lock(mu_);
  return version_;
}

void ObjectStore::compact() {
  std::lock_guard lock(mu_);
  history_.clear();
  history_floor_ = version_;
}

std::string ObjectStore::dump_list() const {
  std::lock_guard lock(mu_);
  std::string out = R"({"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":")" +
                    std::to_string(version_) + R"("},"items":[)";
  bool first = true;
  for (const auto& [key, so] : objects_) {
    if (!first) out += ',';
    first = false;
    out += so.json;
  }
  out += "]}\n";
  return out;
}

}  // namespace hamisim::state

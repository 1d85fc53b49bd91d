#include "live/node_lock.h"

#include <fmt/format.h>

#include <thread>

#include "go/duration.h"
#include "go/rfc3339.h"
#include "log/structured.h"

namespace hamisim::live {
namespace {

constexpr std::string_view kRetryStrategy = "{Steps:5 Duration:100ms Factor:2 Jitter:0.5}";

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == sep) {
      out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

const std::string* lock_of(const model::Node& node) {
  return model::find_annotation(node.metadata, device::kNodeLockAnnotation);
}

bool owned_by(std::string_view value, const std::string& ns, const std::string& pod) {
  const std::string suffix = "," + ns + "," + pod;
  return value.size() > suffix.size() && value.ends_with(suffix);
}

}  // namespace

Result<ParsedNodeLock> parse_node_lock(std::string_view value) {
  ParsedNodeLock out;
  std::string_view time_text = value;
  if (value.find(',') != std::string_view::npos) {
    auto parts = split(value, ',');
    if (parts.size() != 3) {
      return make_error(fmt::format("malformed lock annotation: expected 3 parts, got {} from {}",
                                    parts.size(), value));
    }
    time_text = parts[0];
    out.namespace_ = parts[1];
    out.pod = parts[2];
  }
  auto t = parse_rfc3339(time_text);
  if (!t) return make_error(fmt::format("malformed lock annotation: bad time \"{}\"", time_text));
  out.time = *t;
  return out;
}

NodeLock::NodeLock(state::ClusterSource& source, Options options)
    : source_(source), options_(std::move(options)) {
  if (!options_.sleep) {
    options_.sleep = [](std::chrono::milliseconds d) {
      std::this_thread::sleep_for(d);
      return true;
    };
  }
  rng_ = options_.jitter_seed != 0
             ? options_.jitter_seed
             : static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

std::shared_ptr<std::mutex> NodeLock::node_mutex(const std::string& node) {
  std::lock_guard lock(mutexes_mutex_);
  auto& m = mutexes_[node];
  if (!m) m = std::make_shared<std::mutex>();
  return m;
}

void NodeLock::forget(const std::string& node) {
  std::lock_guard lock(mutexes_mutex_);
  mutexes_.erase(node);
}

bool NodeLock::with_backoff(const std::function<bool()>& attempt) {
  std::chrono::milliseconds delay{100};
  for (int step = 0; step < 5; ++step) {
    if (attempt()) return true;
    if (step == 4) break;
    double jitter;
    {
      std::lock_guard lock(rng_mutex_);
      rng_ = rng_ * 6364136223846793005ULL + 1442695040888963407ULL;
      jitter = static_cast<double>(rng_ >> 11) / static_cast<double>(1ULL << 53);
    }
    if (!options_.sleep(std::chrono::milliseconds(
            static_cast<int64_t>(static_cast<double>(delay.count()) * (1 + 0.5 * jitter))))) {
      return false;
    }
    delay *= 2;
  }
  return false;
}

LockStatus NodeLock::lock(const std::string& node, const std::string& ns, const std::string& pod) {
  auto current = source_.get_node(node);
  if (!current) return LockStatus::failure(current.error().message);
  const std::string* value = lock_of(*current);
  if (value == nullptr) return set_lock(node, ns, pod);
  auto parsed = parse_node_lock(*value);
  if (!parsed) return LockStatus::failure(parsed.error().message);
  const auto age = options_.now() - parsed->time;
  if (age > options_.timeout) {
    if (auto r = release(node, parsed->namespace_, parsed->pod, true); !r.ok) return r;
    return set_lock(node, ns, pod);
  }
  // Already ours (HAMi: Bind locks once per vendor); not written by this call.
  if (parsed->namespace_ == ns && parsed->pod == pod) return LockStatus::success(false);
  if (!parsed->pod.empty()) {
    auto owner = source_.get_pod(parsed->namespace_, parsed->pod);
    if (!owner && owner.code() == state::ApiCode::kNotFound) {
      // The owner is gone: nobody will ever release this lock.
      if (auto r = release(node, parsed->namespace_, parsed->pod, true); !r.ok) return r;
      return set_lock(node, ns, pod);
    }
    if (!owner) return LockStatus::failure(owner.error().message);
  }
  return LockStatus::failure(
      fmt::format("node {} has been locked within {}: {}", node,
                  go::format_duration(options_.timeout), kNodeLockContention),
      true);
}

LockStatus NodeLock::set_lock(const std::string& node, const std::string& ns,
                              const std::string& pod) {
  auto mutex = node_mutex(node);
  std::lock_guard in_process(*mutex);
  auto current = source_.get_node(node);
  if (!current) return LockStatus::failure(current.error().message);
  if (lock_of(*current) != nullptr) {
    return LockStatus::failure(fmt::format("node {} is locked: {}", node, kNodeLockContention),
                               true);
  }
  const std::string value = go::format_rfc3339_local(options_.now()) + "," + ns + "," + pod;
  const Written w = write_lock(
      node, std::string(device::kNodeLockAnnotation), value,
      [&](const std::string& found, bool sent) {
        // Ours: written by this call's earlier patch, or (none sent) by another bind of this pod.
        return owned_by(found, ns, pod)
                   ? LockStatus::success(sent)
                   : LockStatus::failure(
                         fmt::format("node {} is locked: {}", node, kNodeLockContention), true);
      });
  if (w.done && w.status.ok && w.status.wrote) {
    // HAMi's V0 anchor (nodelock.go), which operators grep for.
    log::info("Node lock set", {{"node", node}, {"namespace", ns}, {"podName", pod}});
  }
  if (w.done && (w.status.ok || w.status.contention)) return w.status;
  return LockStatus::failure(fmt::format("failed to set node lock (node={}, retry strategy={}): {}",
                                         node, kRetryStrategy, w.status.error),
                             false, w.sent);
}

NodeLock::Written NodeLock::write_lock(
    const std::string& node, const std::string& key, const std::string& value,
    const std::function<LockStatus(const std::string&, bool)>& found) {
  Written w{false, LockStatus::failure("no attempt made"), false};
  w.done = with_backoff([&] {
    auto n = source_.get_node(node);
    if (!n) {
      w.status = LockStatus::failure(n.error().message);
      return n.code() == state::ApiCode::kNotFound;  // no point retrying
    }
    if (const std::string* v = model::find_annotation(n->metadata, key)) {
      w.status = found(*v, w.sent);
      return true;
    }
    w.sent = true;
    auto patched =
        source_.patch_node_annotations(node, {{key, value}}, n->metadata.resource_version);
    if (patched) {
      w.status = LockStatus::success(true);
      return true;
    }
    w.status = LockStatus::failure(patched.error().message);
    return false;
  });
  return w;
}

LockStatus NodeLock::release(const std::string& node, const std::string& ns, const std::string& pod,
                             bool skip_owner_check) {
  auto mutex = node_mutex(node);
  std::lock_guard in_process(*mutex);
  auto current = source_.get_node(node);
  if (!current) return LockStatus::failure(current.error().message);
  const std::string* first = lock_of(*current);
  if (first == nullptr) return LockStatus::success();
  const std::string original = *first;
  const bool legacy = original.find(',') == std::string::npos;
  if (!legacy && !skip_owner_check && !owned_by(original, ns, pod)) return LockStatus::success();
  // Only ever remove the lock we looked at (or, owner-checked, one that is still ours).
  const Removed r =
      remove_lock(node, std::string(device::kNodeLockAnnotation), [&](const std::string& v) {
        return (legacy || skip_owner_check) ? v == original : owned_by(v, ns, pod);
      });
  if (r.removed) {
    log::info("Node lock released", {{"node", node}, {"namespace", ns}, {"podName", pod}});
  }
  if (r.done) return LockStatus::success();
  return LockStatus::failure(fmt::format("failed to release node lock on {}: {}", node, r.error));
}

NodeLock::Removed NodeLock::remove_lock(const std::string& node, const std::string& key,
                                        const std::function<bool(const std::string&)>& ours) {
  Removed r;
  r.done = with_backoff([&] {
    auto n = source_.get_node(node);
    if (!n) {
      r.error = n.error().message;
      return n.code() == state::ApiCode::kNotFound;
    }
    const std::string* v = model::find_annotation(n->metadata, key);
    if (v == nullptr || !ours(*v)) return true;  // gone, or someone else's now
    auto patched =
        source_.patch_node_annotations(node, {{key, std::nullopt}}, n->metadata.resource_version);
    if (patched) {
      r.removed = true;
      return true;
    }
    r.error = patched.error().message;
    return false;
  });
  return r;
}

LockStatus NodeLock::lock_own(const std::string& node, const device::OwnNodeLock& own) {
  const std::string key(own.annotation);
  auto mutex = node_mutex(node);
  std::lock_guard in_process(*mutex);
  auto current = source_.get_node(node);
  if (!current) return LockStatus::failure(current.error().message);
  if (const std::string* value = model::find_annotation(current->metadata, key)) {
    auto t = parse_rfc3339(*value);
    if (!t) return LockStatus::failure(fmt::format("malformed {}: bad time \"{}\"", key, *value));
    // time.Since(lockTime) > expiry: exactly the expiry still holds.
    if (options_.now() - *t <= own.expiry) {
      return LockStatus::failure(fmt::format("node {} {}", node, own.held), true);
    }
    auto removed = source_.patch_node_annotations(node, {{key, std::nullopt}},
                                                  current->metadata.resource_version);
    if (!removed) return LockStatus::failure(removed.error().message);
  }
  const std::string value = go::format_rfc3339_local(options_.now());
  const Written w = write_lock(node, key, value, [&](const std::string& found, bool sent) {
    // This call's earlier patch applied after all, or another bind took the node meanwhile.
    return sent && found == value
               ? LockStatus::success(true)
               : LockStatus::failure(fmt::format("node {} {}", node, own.held), true);
  });
  LockStatus result =
      w.done ? w.status : LockStatus::failure("setNodeLock exceeds retry count 5", false, w.sent);
  if (result.wrote) result.value = value;
  if (result.ok) log::info("Node lock set", {{"node", node}, {"annotation", key}});
  return result;
}

LockStatus NodeLock::release_own(const std::string& node, const device::OwnNodeLock& own,
                                 const std::string& value) {
  const std::string key(own.annotation);
  auto mutex = node_mutex(node);
  std::lock_guard in_process(*mutex);
  const Removed r = remove_lock(node, key, [&](const std::string& v) { return v == value; });
  if (r.done) return LockStatus::success();
  return LockStatus::failure(fmt::format("failed to release {} on {}: {}", key, node, r.error));
}

}  // namespace hamisim::live

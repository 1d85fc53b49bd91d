#pragma once
// A fake Kubernetes API server on loopback for the live path's integration tests, backed by
// state::ObjectStore. It implements exactly the subset the hamisim client uses:
//
//   GET/LIST/WATCH  /api/v1/nodes[/NAME]
//                   /api/v1/pods, /api/v1/namespaces/NS/pods[/NAME]
//                   /api/v1/resourcequotas, /api/v1/namespaces/NS/resourcequotas[/NAME]
//                   /apis/coordination.k8s.io/v1/leases, .../namespaces/NS/leases[/NAME]
//                   (fieldSelector=metadata.name=X on lists and watches; `limit` and
//                   `continue` on lists, with remainingItemCount, and 410 Expired for a
//                   continue token whose resourceVersion was compacted away)
//                   /apis/resource.k8s.io/v1/resourceslices[/NAME] (GET and LIST only, once
//                   serve_resource_slices was called; 404 before, as without DRA)
//   PATCH           any object above but ResourceSlices, application/merge-patch+json only
//   POST            /api/v1/namespaces/NS/events, /api/v1/namespaces/NS/pods/NAME/binding
//
// with the real server's metav1.Status error bodies. A watch streams newline-delimited
// `{"type":...,"object":...}` events with chunked encoding; resourceVersion "" or "0" starts
// with the current objects as ADDED; bookmarks when allowWatchBookmarks=true; after
// ObjectStore::compact() a watch from an older version gets an ERROR event carrying a 410
// Expired Status (as the watch cache does), and a LIST with resourceVersionMatch=Exact and an
// old version gets HTTP 410.
//
// Auth: an optional bearer token and/or client certificates verified against a CA. Fault
// injection: drop all watch connections, fail the next N requests of a verb and path prefix,
// delay responses, count requests. Verbs for counting and faults are "GET", "LIST", "WATCH",
// "PATCH", "POST".

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/result.h"
#include "state/object_store.h"

namespace hamisim::testing {

struct FakeApiServerOptions {
  bool tls = false;
  std::string cert_file, key_file;  // server certificate (tls)
  std::string client_ca_file;       // verify client certificates against this CA
  bool require_client_cert = false;
  std::string bearer_token;  // when set, required unless a verified client cert was shown
  std::chrono::milliseconds bookmark_interval{200};
  int max_watch_timeout_seconds = 1800;
};

class FakeApiServer {
 public:
  FakeApiServer(state::ObjectStore& store, FakeApiServerOptions options = {});
  ~FakeApiServer();  // stops
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  // Listens on 127.0.0.1 on an ephemeral port.
  Status start();
  void stop();
  uint16_t port() const;
  std::string url() const;  // "http(s)://127.0.0.1:PORT"

  // Serves these ResourceSlices (JSON objects, the items a LIST returns, sorted by name as the
  // real server returns them) from now on; the group is not served (404) until then. Kept
  // apart from the store: the live path does not watch them. An item without metadata.name,
  // or two with one name, is an error.
  Status serve_resource_slices(const std::vector<std::string>& slices);

  // ---- fault injection and observation ----
  // Closes every open watch connection without ending the stream properly.
  void drop_watches();
  // The next `count` requests with this verb whose path starts with `path_prefix` fail with
  // `status` (a Status body with the matching reason).
  void fail_next(std::string verb, std::string path_prefix, int count, int status);
  void clear_failures();
  // Every non-watch response waits until `delay` has passed since its request arrived;
  // lowering it releases the requests that have waited that long (0 releases them all).
  void set_delay(std::chrono::milliseconds delay);
  void set_bearer_token(std::string token);
  // Called with the target of every LIST before it is answered (e.g. to compact the store
  // between pages).
  void set_list_hook(std::function<void(const std::string&)> hook);
  // Requests seen with this verb and exact path (no query).
  int request_count(std::string_view verb, std::string_view path) const;
  int open_watches() const;
  int watches_started() const;
  // Every request as "VERB target" (query included), oldest first.
  std::vector<std::string> request_log() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace hamisim::testing

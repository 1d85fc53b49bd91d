#pragma once
// A Kubernetes REST client: GET, LIST (paged), WATCH, merge PATCH and POST over HTTP/1.1 with
// keep-alive connection pooling, TLS (server verification, client certificates), bearer
// token / token file / basic auth / exec credential plugins (re-run once on a 401, and the
// request retried once with the new credential), an http:// proxy (CONNECT tunnel for https
// servers, absolute-form requests for http ones), client-side rate limiting of everything but
// watches, and per-request timeouts. The wire is http::ClientTransport (src/http), behind the
// pimpl.
//
// HTTP statuses become ApiCodes (404 kNotFound, 409 kConflict, 410 kGone, 400/422 kInvalid,
// 401/403 kForbidden, 429/5xx and connection failures kUnavailable); messages name the verb,
// the object and the API's Status message: "PATCH node gpu-1: 409 Conflict: ...".
//
// Responses are untrusted: bodies and watch events have size limits, garbage is an error.
// Every method is thread-safe.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kube/kube_config.h"
#include "model/result.h"
#include "state/cluster_source.h"

namespace hamisim::kube {

// Receives the client's measurements; the Prometheus families live above this library
// (src/cli registers them). Called from request threads: implementations are thread-safe.
// `resource` is the API resource of the path ("pods", "pods/binding", "leases"); `verb` is
// GET, LIST, WATCH, PATCH, POST...; `code` the HTTP status or "<error>" when none arrived.
class ClientObserver {
 public:
  virtual ~ClientObserver() = default;
  virtual void request_done(std::string_view verb, std::string_view resource, std::string_view code,
                            double seconds) {}
  // Every rate-limited request, with how long it waited (0 when it did not).
  virtual void rate_limiter_waited(std::string_view verb, double seconds) {}
  // One run of an exec credential plugin: "success", "plugin_execution_error" or
  // "plugin_output_error".
  virtual void exec_plugin_ran(std::string_view status) {}
  // A reflector's watch ended and is re-opened: "timeout" (the server closed it), "expired"
  // (410: relist), "error".
  virtual void watch_restarted(std::string_view resource, std::string_view reason) {}
  // An Event dropped because the send queue was full.
  virtual void event_dropped() {}
};

struct ClientOptions {
  // Client-side limit on requests (not watches); Events have a second budget of the same size.
  // A bound pod costs 6-11 requests (GETs of node and pod, two pod patches, the lock, the
  // Binding; more under node-lock contention): bench/run-all's live-bind part.
  double qps = 300;
  int burst = 600;
  std::chrono::milliseconds request_timeout{std::chrono::seconds(30)};
  size_t max_idle_connections = 32;
  size_t max_response_bytes = size_t(512) << 20;
  size_t max_watch_event_bytes = size_t(64) << 20;
  // How often a token file is re-read (service-account tokens rotate).
  std::chrono::milliseconds token_refresh{std::chrono::minutes(1)};
  std::string user_agent = "hamisim";
  // LIST page size (`limit`); 0 lists in one response.
  int64_t list_page_size = 500;
  std::chrono::milliseconds exec_timeout{std::chrono::seconds(60)};
  std::shared_ptr<ClientObserver> observer;  // null: none
  // Lines an exec plugin writes to stderr, and other client warnings; null: spdlog's default
  // logger at warn level.
  std::function<void(std::string_view)> log_warning;
};

struct Request {
  std::string verb = "GET";  // GET, POST, PATCH, PUT, DELETE
  std::string path;          // "/api/v1/nodes/x", query included
  std::string body;
  std::string content_type;  // default application/json when a body is present
  // Names the object in error messages ("node gpu-1"); default: the path.
  std::string what;
  std::optional<std::chrono::milliseconds> timeout;  // default ClientOptions::request_timeout
  const std::atomic<bool>* cancel = nullptr;         // abandons the request when set
  // Counted against a rate limit of its own with the same qps and burst, as kube-scheduler's
  // Events go through a client of their own: Events never delay a bind.
  bool event = false;
};

struct WatchRequest {
  std::string path;  // collection path without a query: "/api/v1/pods"
  std::string resource_version;
  int timeout_seconds = 300;  // the server ends the stream after this
  bool bookmarks = true;
  std::string field_selector;  // e.g. "metadata.name=kube-scheduler"
  std::string what;            // error messages; default: the path
};

// One event of a watch stream. Both views point into a buffer that has at least
// model::kJsonPadding readable bytes past `object`'s end, so model::decode_*_in_buffer can
// read the object in place. Valid during the callback only.
struct WatchEventView {
  std::string_view type;    // ADDED, MODIFIED, DELETED, BOOKMARK
  std::string_view object;  // raw JSON
};

struct ClientStats {
  uint64_t requests = 0;
  uint64_t watches = 0;
  uint64_t watch_events = 0;
  uint64_t connections_opened = 0;
  uint64_t rate_limited = 0;  // requests that waited for the rate limiter
  uint64_t exec_plugin_runs = 0;
  uint64_t list_pages = 0;
  uint64_t list_fallbacks = 0;  // paged LISTs whose continue token expired: listed whole
};

// A LIST, page by page: each page's body, in order (one body after a fallback), and the
// resourceVersion of the list.
struct ListPages {
  std::vector<std::string> pages;
  std::string resource_version;
  bool fell_back = false;  // a continue token expired (410) and the list was taken whole
};

class KubeClient {
 public:
  static Result<std::unique_ptr<KubeClient>> create(const KubeConfig& config,
                                                    ClientOptions options = {});
  ~KubeClient();
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

  // Any request; the body of a 2xx response, an ApiError otherwise.
  state::ApiResult<std::string> call(const Request& request);

  state::ApiResult<std::string> get(std::string path, std::string what = {},
                                    const std::atomic<bool>* cancel = nullptr);
  state::ApiResult<std::string> merge_patch(std::string path, std::string body,
                                            std::string what = {});
  state::ApiResult<std::string> post(std::string path, std::string body, std::string what = {});

  // Streams a watch until the server ends it (returns Done), `on_event` returns false (Done),
  // `cancel` is set (kUnavailable "cancelled"), the connection fails (kUnavailable), or an
  // ERROR event arrives (its Status code mapped: 410 -> kGone). BOOKMARK events are passed on.
  state::ApiStatus watch(const WatchRequest& request,
                         const std::function<bool(const WatchEventView&)>& on_event,
                         const std::atomic<bool>* cancel = nullptr);

  // A paged LIST as client-go's pager does it: `limit` pages followed by `continue`; when a
  // continue token has expired (410) the list is taken again, whole, without a limit.
  // `path` is the collection path, query allowed ("/api/v1/pods?fieldSelector=...").
  state::ApiResult<ListPages> list(const std::string& path, const std::string& what = {},
                                   const std::atomic<bool>* cancel = nullptr);

  // The same LIST with each page handed to `on_page` as it arrives, so a large list is never
  // held whole (the body may be moved from). `restarted` is true for the one page of a list
  // taken whole after a continue token expired: it holds everything again, so what the pages
  // before it delivered is to be reconciled with it, not added to. An error from `on_page`
  // ends the list with that message.
  using PageHandler = std::function<Status(std::string& body, bool restarted)>;
  struct ListEnd {
    std::string resource_version;
    bool fell_back = false;
  };
  state::ApiResult<ListEnd> list_each_page(const std::string& path, const std::string& what,
                                           const std::atomic<bool>* cancel,
                                           const PageHandler& on_page);

  ClientStats stats() const;
  ClientObserver* observer() const;
  const std::string& server() const;

  struct Impl;

 private:
  explicit KubeClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Percent-encodes everything but RFC 3986 unreserved characters: for a path segment (an
// object name from untrusted input) or a query value.
std::string url_escape(std::string_view s);

// The verb and resource a request is measured under: ("LIST", "pods") for GET /api/v1/pods.
struct RequestKind {
  std::string verb, resource;
};
RequestKind request_kind(std::string_view verb, std::string_view path);

// A List body's metadata: resourceVersion, continue and remainingItemCount (-1 when absent).
struct ListMeta {
  std::string resource_version, continue_token;
  int64_t remaining_item_count = -1;
};
Result<ListMeta> list_meta(std::string_view body);

// Maps an HTTP status to the ApiCode callers act on.
state::ApiCode code_for_status(int status);

// Reads a List body: calls `on_item` with each item's raw JSON (in a buffer padded with
// model::kJsonPadding bytes) and returns metadata.resourceVersion. Stops at the first error
// `on_item` returns.
Result<std::string> for_each_list_item(std::string_view body,
                                       const std::function<Status(std::string_view)>& on_item);

// Retries `attempt` while it fails with kUnavailable: up to `max_attempts` in all, waiting
// initial * factor^n (capped at max_delay) with +-jitter between tries. `cancel` stops early.
struct RetryPolicy {
  int max_attempts = 5;
  std::chrono::milliseconds initial{100};
  double factor = 2.0;
  std::chrono::milliseconds max_delay{std::chrono::seconds(2)};
  double jitter = 0.5;  // fraction of the delay added at random
};
std::chrono::milliseconds backoff_delay(const RetryPolicy& policy, int retry, double unit_random);

template <class T, class F>
state::ApiResult<T> retry_unavailable(const RetryPolicy& policy, F&& attempt,
                                      const std::atomic<bool>* cancel = nullptr) {
  thread_local std::minstd_rand rng{std::random_device{}()};
  for (int i = 1;; ++i) {
    state::ApiResult<T> result = attempt();
    if (result.ok() || result.code() != state::ApiCode::kUnavailable || i >= policy.max_attempts ||
        (cancel != nullptr && cancel->load())) {
      return result;
    }
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::this_thread::sleep_for(backoff_delay(policy, i - 1, unit(rng)));
  }
}

}  // namespace hamisim::kube

#pragma once
// client-go's `exec` credential plugins (client.authentication.k8s.io/v1 and v1beta1): the
// plugin is run with fork/exec (no shell), stdin /dev/null (we are never interactive), our
// environment plus the kubeconfig's `env` and KUBERNETES_EXEC_INFO, a time limit and an output
// limit. Its stderr goes to a sink (our log), line by line. Its stdout is an ExecCredential
// whose status holds a bearer token or a client certificate and key, cached until
// `expirationTimestamp` (forever without one) or until a request with it is answered 401.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "kube/kube_config.h"
#include "model/result.h"

namespace hamisim::kube {

struct ExecCredential {
  std::string token;
  std::string client_cert_pem, client_key_pem;
  std::optional<std::chrono::system_clock::time_point> expiry;
};

// Reads a plugin's stdout; `api_version` is the one the kubeconfig asked for.
Result<ExecCredential> parse_exec_credential(std::string_view json, std::string_view api_version);

// RFC 3339 ("2026-01-02T15:04:05Z", fractions and offsets allowed), as Go's metav1.Time.
Result<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text);

struct ExecRunOptions {
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  size_t max_stdout_bytes = size_t(1) << 20;
  size_t max_stderr_bytes = size_t(64) << 10;  // forwarded to the sink; the rest is dropped
};

// Runs the plugin once and returns its stdout. Errors name the user and the command; an
// executable that is not found adds the kubeconfig's installHint.
Result<std::string> run_exec_plugin(const ExecConfig& exec, const ExecRunOptions& options,
                                    const std::function<void(std::string_view)>& on_stderr_line);

// Thread-safe owner of one user's cached credential.
class ExecAuthenticator {
 public:
  using Clock = std::chrono::system_clock;
  ExecAuthenticator(ExecConfig exec, ExecRunOptions options,
                    std::function<void(std::string_view)> on_stderr_line,
                    std::function<void(std::string_view)> on_run = {},
                    std::function<Clock::time_point()> now = {});

  // The cached credential while it is fresh; otherwise runs the plugin (one caller at a time).
  Result<std::shared_ptr<const ExecCredential>> get();
  // A request with `used` was answered 401: the next get() runs the plugin again (unless
  // another caller already replaced it).
  void invalidate(const std::shared_ptr<const ExecCredential>& used);
  uint64_t runs() const;
  const ExecConfig& config() const { return exec_; }

 private:
  ExecConfig exec_;
  ExecRunOptions options_;
  std::function<void(std::string_view)> on_stderr_line_, on_run_;
  std::function<Clock::time_point()> now_;
  mutable std::mutex mu_;
  std::shared_ptr<const ExecCredential> cached_;
  uint64_t runs_ = 0;
};

}  // namespace hamisim::kube

#include "kube/exec_credential.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <simdjson.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <vector>

#include "go/rfc3339.h"

extern char** environ;

namespace hamisim::kube {

namespace od = simdjson::ondemand;

Result<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view t) {
  const auto parsed = go::parse_rfc3339(t);
  if (!parsed) return make_error("\"" + std::string(t) + "\" is not an RFC 3339 time");
  // system_clock counts nanoseconds: beyond ~2262 it saturates instead of wrapping.
  using TimePoint = std::chrono::system_clock::time_point;
  constexpr int64_t kMaxSeconds =
      std::chrono::duration_cast<std::chrono::seconds>(TimePoint::max().time_since_epoch())
          .count() -
      1;
  const int64_t secs = parsed->unix_seconds;
  if (secs >= kMaxSeconds) return TimePoint::max();
  if (secs <= -kMaxSeconds) return TimePoint::min();
  return TimePoint(std::chrono::duration_cast<std::chrono::system_clock::duration>(
      std::chrono::seconds(secs) + std::chrono::nanoseconds(parsed->nanos)));
}

Result<ExecCredential> parse_exec_credential(std::string_view json, std::string_view api_version) {
  simdjson::padded_string padded(json);
  od::parser parser;
  od::document doc;
  auto fail = [](std::string why) { return make_error("exec plugin output: " + why); };
  if (auto e = parser.iterate(padded).get(doc)) return fail(simdjson::error_message(e));
  od::object obj;
  if (auto e = doc.get_object().get(obj)) return fail(simdjson::error_message(e));
  std::string kind, version;
  bool has_status = false;
  ExecCredential cred;
  std::string expiry;
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return fail(simdjson::error_message(e));
    od::value v;
    if (auto e = field.value().get(v))
      return fail(std::string(key) + ": " + simdjson::error_message(e));
    auto str = [&](std::string_view where, std::string& out) -> Status {
      std::string_view s;
      if (auto e = v.get_string().get(s)) {
        return fail(std::string(where) + ": " + simdjson::error_message(e));
      }
      out = std::string(s);
      return ok_status();
    };
    if (key == "kind") {
      if (Status s = str("kind", kind); !s) return s.error();
    } else if (key == "apiVersion") {
      if (Status s = str("apiVersion", version); !s) return s.error();
    } else if (key == "status") {
      od::json_type type;
      if (auto e = v.type().get(type))
        return fail(std::string("status: ") + simdjson::error_message(e));
      if (type == od::json_type::null) continue;
      od::object st;
      if (auto e = v.get_object().get(st))
        return fail(std::string("status: ") + simdjson::error_message(e));
      has_status = true;
      for (auto sf : st) {
        std::string_view skey;
        if (auto e = sf.unescaped_key().get(skey)) return fail(simdjson::error_message(e));
        std::string* out = nullptr;
        if (skey == "token") out = &cred.token;
        if (skey == "clientCertificateData") out = &cred.client_cert_pem;
        if (skey == "clientKeyData") out = &cred.client_key_pem;
        if (skey == "expirationTimestamp") out = &expiry;
        if (out == nullptr) continue;
        od::value sv;
        if (auto e = sf.value().get(sv)) return fail(simdjson::error_message(e));
        od::json_type st_type;
        if (auto e = sv.type().get(st_type)) return fail(simdjson::error_message(e));
        if (st_type == od::json_type::null) continue;
        std::string_view s;
        if (auto e = sv.get_string().get(s)) {
          return fail("status." + std::string(skey) + ": " + simdjson::error_message(e));
        }
        *out = std::string(s);
      }
    }
  }
  if (kind != "ExecCredential") return fail("kind is \"" + kind + "\", not ExecCredential");
  if (version != api_version) {
    return make_error("exec plugin is configured to use API version " + std::string(api_version) +
                      ", plugin returned version " + (version.empty() ? "(none)" : version));
  }
  if (!has_status) return make_error("exec plugin didn't return a status field");
  if (cred.client_cert_pem.empty() != cred.client_key_pem.empty()) {
    return make_error("exec plugin returned only certificate or key, not both");
  }
  if (cred.token.empty() && cred.client_cert_pem.empty()) {
    return make_error("exec plugin didn't return a token or cert/key pair");
  }
  if (!expiry.empty()) {
    auto t = parse_rfc3339(expiry);
    if (!t) return fail("status.expirationTimestamp: " + t.error().message);
    cred.expiry = *t;
  }
  return cred;
}

namespace {

struct Fd {
  int fd = -1;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

std::string command_path(const ExecConfig& exec) {
  // As clientcmd: a command with a path separator is relative to the kubeconfig's directory.
  if (exec.command.find('/') == std::string::npos || exec.command.front() == '/' ||
      exec.base_dir.empty()) {
    return exec.command;
  }
  return (std::filesystem::path(exec.base_dir) / exec.command).lexically_normal().string();
}

}  // namespace

Result<std::string> run_exec_plugin(const ExecConfig& exec, const ExecRunOptions& options,
                                    const std::function<void(std::string_view)>& on_stderr_line) {
  const std::string command = command_path(exec);
  const std::string who = "exec plugin \"" + exec.command + "\" of user \"" + exec.user + "\"";
  std::vector<std::string> argv_s = {command};
  argv_s.insert(argv_s.end(), exec.args.begin(), exec.args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  // Our environment, then the kubeconfig's env, then KUBERNETES_EXEC_INFO; later names win.
  std::vector<std::pair<std::string, std::string>> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view kv(*e);
    const size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    vars.emplace_back(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  auto set = [&](const std::string& name, const std::string& value) {
    std::erase_if(vars, [&](const auto& v) { return v.first == name; });
    vars.emplace_back(name, value);
  };
  for (const auto& [name, value] : exec.env) set(name, value);
  set("KUBERNETES_EXEC_INFO", exec.exec_info_json);
  std::vector<std::string> env_s;
  for (const auto& [name, value] : vars) env_s.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return make_error(who + ": pipe: " + std::strerror(errno));
  Fd out_r{out_pipe[0]}, out_w{out_pipe[1]};
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) return make_error(who + ": pipe: " + std::strerror(errno));
  Fd err_r{err_pipe[0]}, err_w{err_pipe[1]};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_w.fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_w.fd, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGINT);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, command.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    std::string message = who + ": " + std::strerror(rc);
    if (rc == ENOENT) {
      message = "exec: executable " + exec.command + " not found (user \"" + exec.user + "\")";
      message += exec.install_hint.empty()
                     ? "; it looks like you are trying to use a client-go credential plugin that "
                       "is not installed"
                     : "; " + exec.install_hint;
    }
    return make_error(std::move(message));
  }
  out_w.reset();
  err_w.reset();

  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  std::string out, err_line;
  size_t err_forwarded = 0;
  bool too_big = false, timed_out = false;
  auto flush_line = [&](bool partial) {
    if (err_line.empty() && partial) return;
    if (err_forwarded < options.max_stderr_bytes) on_stderr_line(err_line);
    err_forwarded += err_line.size() + 1;
    err_line.clear();
  };
  char buf[8192];
  while (out_r.fd >= 0 || err_r.fd >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[2];
    nfds_t n = 0;
    if (out_r.fd >= 0) fds[n++] = {out_r.fd, POLLIN, 0};
    if (err_r.fd >= 0) fds[n++] = {err_r.fd, POLLIN, 0};
    const int ready = ::poll(fds, n, int(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      const bool is_out = fds[i].fd == out_r.fd;
      if (got <= 0) {
        (is_out ? out_r : err_r).reset();
        continue;
      }
      if (is_out) {
        out.append(buf, size_t(got));
        if (out.size() > options.max_stdout_bytes) {
          too_big = true;
          out_r.reset();
          err_r.reset();
        }
      } else {
        for (ssize_t k = 0; k < got; ++k) {
          if (buf[k] == '\n') {
            flush_line(false);
          } else if (err_line.size() < 4096) {
            err_line += buf[k];
          }
        }
      }
    }
    if (too_big) break;
  }
  flush_line(true);
  int status = 0;
  if (timed_out || too_big) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    if (timed_out) {
      return make_error(who + ": no result within " + std::to_string(options.timeout.count()) +
                        "ms; killed");
    }
    return make_error(who + ": output larger than " + std::to_string(options.max_stdout_bytes) +
                      " bytes; killed");
  }
  // Both pipes closed: the plugin is exiting; wait for it, within the deadline.
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return make_error(who + ": waitpid: " + std::strerror(errno));
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return make_error(who + ": did not exit within " + std::to_string(options.timeout.count()) +
                        "ms; killed");
    }
    ::usleep(2000);
  }
  if (WIFSIGNALED(status)) {
    return make_error(who + ": killed by signal " + std::to_string(WTERMSIG(status)));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    return make_error("exec: executable " + exec.command + " failed with exit code " +
                      std::to_string(WEXITSTATUS(status)) + " (user \"" + exec.user + "\")");
  }
  return out;
}

ExecAuthenticator::ExecAuthenticator(ExecConfig exec, ExecRunOptions options,
                                     std::function<void(std::string_view)> on_stderr_line,
                                     std::function<void(std::string_view)> on_run,
                                     std::function<Clock::time_point()> now)
    : exec_(std::move(exec)),
      options_(options),
      on_stderr_line_(std::move(on_stderr_line)),
      on_run_(std::move(on_run)),
      now_(now ? std::move(now) : [] { return Clock::now(); }) {}

Result<std::shared_ptr<const ExecCredential>> ExecAuthenticator::get() {
  std::lock_guard lock(mu_);
  if (cached_ && (!cached_->expiry || now_() < *cached_->expiry)) return cached_;
  ++runs_;
  auto sink = [this](std::string_view line) {
    if (on_stderr_line_) on_stderr_line_(line);
  };
  auto out = run_exec_plugin(exec_, options_, sink);
  if (!out) {
    if (on_run_) on_run_("plugin_execution_error");
    return out.error();
  }
  auto cred = parse_exec_credential(*out, exec_.api_version);
  if (!cred) {
    if (on_run_) on_run_("plugin_output_error");
    return make_error("exec plugin \"" + exec_.command + "\" of user \"" + exec_.user +
                      "\": " + cred.error().message);
  }
  if (on_run_) on_run_("success");
  cached_ = std::make_shared<const ExecCredential>(std::move(*cred));
  return cached_;
}

void ExecAuthenticator::invalidate(const std::shared_ptr<const ExecCredential>& used) {
  std::lock_guard lock(mu_);
  if (cached_ == used) cached_.reset();
}

uint64_t ExecAuthenticator::runs() const {
  std::lock_guard lock(mu_);
  return runs_;
}

}  // namespace hamisim::kube

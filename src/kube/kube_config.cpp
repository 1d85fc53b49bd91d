#include "kube/kube_config.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace hamisim::kube {

namespace {

constexpr size_t kMaxFileBytes = 16u << 20;  // kubeconfig, certificates, tokens

Result<std::string> read_small_file(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return make_error("cannot read " + path + ": " + ec.message());
  if (size > kMaxFileBytes) {
    return make_error("cannot read " + path + ": larger than " + std::to_string(kMaxFileBytes) +
                      " bytes");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return make_error("cannot read " + path + ": read error");
  return buf.str();
}

// A kubeconfig being read: the file name for messages and its directory for relative paths.
struct Reader {
  std::string file;
  std::filesystem::path dir;

  Error error(const std::string& path, const std::string& message) const {
    return make_error("kubeconfig " + file + ": " + path + ": " + message);
  }
  Error error(const std::string& message) const {
    return make_error("kubeconfig " + file + ": " + message);
  }

  static std::string join(const std::string& path, const char* key) {
    return path.empty() ? std::string(key) : path + "." + key;
  }

  std::string describe(const YAML::Node& n) const {
    if (n.IsMap()) return "a map";
    if (n.IsSequence()) return "a list";
    if (n.IsNull()) return "null";
    return "\"" + n.Scalar() + "\"";
  }

  // A string field; absent or null leaves `out` empty.
  Status string(const YAML::Node& parent, const std::string& path, const char* key,
                std::string& out) const {
    const YAML::Node n = parent[key];
    if (!n.IsDefined() || n.IsNull()) return ok_status();
    if (!n.IsScalar()) {
      return error(join(path, key), "expected a string, got " + describe(n));
    }
    out = n.Scalar();
    return ok_status();
  }

  Status boolean(const YAML::Node& parent, const std::string& path, const char* key,
                 bool& out) const {
    const YAML::Node n = parent[key];
    if (!n.IsDefined() || n.IsNull()) return ok_status();
    if (n.IsScalar()) {
      const std::string& s = n.Scalar();
      // sigs.k8s.io/yaml reads YAML 1.1 booleans.
      for (const char* t : {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"}) {
        if (s == t) {
          out = true;
          return ok_status();
        }
      }
      for (const char* f : {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"}) {
        if (s == f) {
          out = false;
          return ok_status();
        }
      }
    }
    return error(join(path, key), "expected true or false, got " + describe(n));
  }

  Status base64(const YAML::Node& parent, const std::string& path, const char* key,
                std::string& out) const {
    std::string text;
    if (Status s = string(parent, path, key, text); !s) return s;
    if (text.empty()) return ok_status();
    if (!decode_base64(text, out)) return error(join(path, key), "not valid base64");
    return ok_status();
  }

  std::string resolve(const std::string& p) const {
    if (p.empty() || std::filesystem::path(p).is_absolute()) return p;
    return (dir / p).lexically_normal().string();
  }

  // A file-valued field: its contents in `out`.
  Status file_field(const YAML::Node& parent, const std::string& path, const char* key,
                    std::string& out, std::string* resolved = nullptr) const {
    std::string name;
    if (Status s = string(parent, path, key, name); !s) return s;
    if (name.empty()) return ok_status();
    const std::string full = resolve(name);
    if (resolved != nullptr) *resolved = full;
    auto content = read_small_file(full);
    if (!content) return error(join(path, key), content.error().message);
    out = std::move(*content);
    return ok_status();
  }

  // Finds the entry named `name` in the list `key` ("clusters", "users", "contexts"); its
  // index goes to `index`, the inner object (`field`) to `out`.
  Status find_named(const YAML::Node& root, const char* key, const char* field,
                    const std::string& name, YAML::Node& out, size_t& index) const {
    const YAML::Node list = root[key];
    if (list.IsDefined() && !list.IsNull() && !list.IsSequence()) {
      return error(key, "expected a list, got " + describe(list));
    }
    if (list.IsDefined() && list.IsSequence()) {
      for (size_t i = 0; i < list.size(); ++i) {
        const std::string path = std::string(key) + "[" + std::to_string(i) + "]";
        const YAML::Node item = list[i];
        if (!item.IsMap()) return error(path, "expected a map, got " + describe(item));
        std::string item_name;
        if (Status s = string(item, path, "name", item_name); !s) return s;
        if (item_name != name) continue;
        const YAML::Node inner = item[field];
        if (inner.IsDefined() && !inner.IsNull() && !inner.IsMap()) {
          return error(path + "." + field, "expected a map, got " + describe(inner));
        }
        out = inner.IsMap() ? inner : YAML::Node(YAML::NodeType::Map);
        index = i;
        return ok_status();
      }
    }
    std::string singular(key);
    singular.pop_back();
    return error(singular + " \"" + name + "\" not found");
  }
};

}  // namespace

Result<ServerUrl> parse_server_url(std::string_view server) {
  ServerUrl url;
  std::string_view rest;
  if (server.starts_with("https://")) {
    url.tls = true;
    rest = server.substr(8);
  } else if (server.starts_with("http://")) {
    url.tls = false;
    rest = server.substr(7);
  } else {
    return make_error("\"" + std::string(server) + "\" is not an http:// or https:// URL");
  }
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (path.find_first_of("?#") != std::string_view::npos) {
    return make_error("\"" + std::string(server) + "\": a query or fragment is not allowed");
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  url.prefix = std::string(path);
  if (authority.find('@') != std::string_view::npos) {
    return make_error("\"" + std::string(server) + "\": user info in the URL is not supported");
  }
  std::string_view port_text;
  if (authority.starts_with("[")) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return make_error("\"" + std::string(server) + "\": unterminated IPv6 address");
    }
    url.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return make_error("\"" + std::string(server) + "\": bad host");
      port_text = after.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (url.host.empty()) return make_error("\"" + std::string(server) + "\": no host");
  url.port = url.tls ? 443 : 80;
  if (!port_text.empty()) {
    unsigned long port = 0;
    for (char c : port_text) {
      if (c < '0' || c > '9' || port > 65535) {
        return make_error("\"" + std::string(server) + "\": bad port");
      }
      port = port * 10 + unsigned(c - '0');
    }
    if (port == 0 || port > 65535) return make_error("\"" + std::string(server) + "\": bad port");
    url.port = static_cast<uint16_t>(port);
  }
  const bool v6 = url.host.find(':') != std::string::npos;
  url.host_header = v6 ? "[" + url.host + "]" : url.host;
  if (!port_text.empty()) url.host_header += ":" + std::string(port_text);
  return url;
}

namespace {
Result<KubeConfig> parse_kubeconfig_or_throw(std::string_view yaml, std::string_view file,
                                             std::string_view context);
}

Result<KubeConfig> parse_kubeconfig(std::string_view yaml, std::string_view file,
                                    std::string_view context) {
  // yaml-cpp reports some misuse with exceptions; none may escape.
  try {
    return parse_kubeconfig_or_throw(yaml, file, context);
  } catch (const std::exception& e) {
    return make_error("kubeconfig " + std::string(file) + ": " + e.what());
  }
}

namespace {
Result<KubeConfig> parse_kubeconfig_or_throw(std::string_view yaml, std::string_view file,
                                             std::string_view context) {
  Reader r;
  r.file = std::string(file);
  r.dir = std::filesystem::path(std::string(file)).parent_path();
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return r.error("line " + std::to_string(e.mark.line + 1) + ", column " +
                   std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  if (!root.IsMap()) return r.error("expected a Config map, got " + r.describe(root));

  KubeConfig config;
  std::string context_name(context);
  if (context_name.empty()) {
    if (Status s = r.string(root, "", "current-context", context_name); !s) return s.error();
    if (context_name.empty()) {
      return r.error("current-context is not set and no context was given");
    }
  }
  YAML::Node ctx;
  size_t ctx_index = 0;
  if (Status s = r.find_named(root, "contexts", "context", context_name, ctx, ctx_index); !s) {
    return s.error();
  }
  const std::string ctx_path = "contexts[" + std::to_string(ctx_index) + "].context";
  std::string cluster_name, user_name;
  if (Status s = r.string(ctx, ctx_path, "cluster", cluster_name); !s) return s.error();
  if (Status s = r.string(ctx, ctx_path, "user", user_name); !s) return s.error();
  if (Status s = r.string(ctx, ctx_path, "namespace", config.namespace_); !s) return s.error();
  if (config.namespace_.empty()) config.namespace_ = "default";
  if (cluster_name.empty()) return r.error(ctx_path + ".cluster", "is required");

  // Cluster.
  YAML::Node cluster;
  size_t cluster_index = 0;
  if (Status s = r.find_named(root, "clusters", "cluster", cluster_name, cluster, cluster_index);
      !s) {
    return s.error();
  }
  const std::string cpath = "clusters[" + std::to_string(cluster_index) + "].cluster";
  if (Status s = r.string(cluster, cpath, "server", config.server); !s) return s.error();
  if (config.server.empty()) return r.error(cpath + ".server", "is required");
  if (auto url = parse_server_url(config.server); !url) {
    return r.error(cpath + ".server", url.error().message);
  }
  if (Status s =
          r.boolean(cluster, cpath, "insecure-skip-tls-verify", config.insecure_skip_tls_verify);
      !s) {
    return s.error();
  }
  if (Status s = r.string(cluster, cpath, "tls-server-name", config.tls_server_name); !s) {
    return s.error();
  }
  if (Status s = r.base64(cluster, cpath, "certificate-authority-data", config.ca_pem); !s) {
    return s.error();
  }
  if (config.ca_pem.empty()) {
    if (Status s = r.file_field(cluster, cpath, "certificate-authority", config.ca_pem); !s) {
      return s.error();
    }
  }
  if (config.insecure_skip_tls_verify && !config.ca_pem.empty()) {
    return r.error(cpath,
                   "specifying a root certificates file with the insecure flag is not allowed");
  }
  if (cluster["proxy-url"].IsDefined() && !cluster["proxy-url"].IsNull()) {
    return r.error(cpath + ".proxy-url", "proxies are not supported");
  }

  // User (optional: a context without one is anonymous).
  if (!user_name.empty()) {
    YAML::Node user;
    size_t user_index = 0;
    if (Status s = r.find_named(root, "users", "user", user_name, user, user_index); !s) {
      return s.error();
    }
    const std::string upath = "users[" + std::to_string(user_index) + "].user";
    if (user["exec"].IsDefined() && !user["exec"].IsNull()) {
      return r.error(upath + ".exec",
                     "exec credential plugins are not supported; use a token, tokenFile or a "
                     "client certificate");
    }
    if (user["auth-provider"].IsDefined() && !user["auth-provider"].IsNull()) {
      return r.error(upath + ".auth-provider",
                     "auth-provider plugins are not supported; use a token, tokenFile or a "
                     "client certificate");
    }
    for (const char* key : {"as", "as-groups", "as-uid", "as-user-extra"}) {
      if (user[key].IsDefined() && !user[key].IsNull()) {
        return r.error(upath + "." + key, "impersonation is not supported");
      }
    }
    if (Status s = r.base64(user, upath, "client-certificate-data", config.client_cert_pem); !s) {
      return s.error();
    }
    if (config.client_cert_pem.empty()) {
      if (Status s = r.file_field(user, upath, "client-certificate", config.client_cert_pem); !s)
        return s.error();
    }
    if (Status s = r.base64(user, upath, "client-key-data", config.client_key_pem); !s) {
      return s.error();
    }
    if (config.client_key_pem.empty()) {
      if (Status s = r.file_field(user, upath, "client-key", config.client_key_pem); !s)
        return s.error();
    }
    if (config.client_cert_pem.empty() != config.client_key_pem.empty()) {
      return r.error(upath, config.client_cert_pem.empty()
                                ? "client-key needs a client-certificate"
                                : "client-certificate needs a client-key");
    }
    if (Status s = r.string(user, upath, "token", config.token); !s) return s.error();
    std::string token_file;
    if (Status s = r.string(user, upath, "tokenFile", token_file); !s) return s.error();
    if (!token_file.empty()) {
      config.token_file = r.resolve(token_file);
      auto content = read_small_file(config.token_file);
      if (!content) return r.error(upath + ".tokenFile", content.error().message);
    }
    if (Status s = r.string(user, upath, "username", config.username); !s) return s.error();
    if (Status s = r.string(user, upath, "password", config.password); !s) return s.error();
    const bool has_token = !config.token.empty() || !config.token_file.empty();
    if (has_token && !config.username.empty()) {
      return r.error(upath, "username/password and a token are mutually exclusive");
    }
  }
  config.description = "kubeconfig " + r.file + " (context " + context_name + ")";
  return config;
}
}  // namespace

Result<KubeConfig> load_kubeconfig(const std::string& path, std::string_view context) {
  std::string resolved = path;
  if (resolved.starts_with("~/")) {
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
      resolved = std::string(home) + resolved.substr(1);
    }
  }
  auto text = read_small_file(resolved);
  if (!text) return make_error("kubeconfig " + path + ": " + text.error().message);
  auto config = parse_kubeconfig(*text, resolved, context);
  if (!config) {
    // Name the file as the user gave it.
    std::string message = config.error().message;
    const std::string prefix = "kubeconfig " + resolved;
    if (message.starts_with(prefix)) message = "kubeconfig " + path + message.substr(prefix.size());
    return make_error(std::move(message));
  }
  return config;
}

InClusterEnv InClusterEnv::from_process() {
  InClusterEnv env;
  if (const char* h = std::getenv("KUBERNETES_SERVICE_HOST")) env.host = h;
  if (const char* p = std::getenv("KUBERNETES_SERVICE_PORT")) env.port = p;
  return env;
}

Result<KubeConfig> in_cluster_config(const InClusterEnv& env) {
  if (env.host.empty() || env.port.empty()) {
    return make_error(
        "in-cluster config: unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST "
        "and KUBERNETES_SERVICE_PORT must be defined");
  }
  KubeConfig config;
  const bool v6 = env.host.find(':') != std::string::npos;
  config.server = "https://" + (v6 ? "[" + env.host + "]" : env.host) + ":" + env.port;
  if (auto url = parse_server_url(config.server); !url) {
    return make_error("in-cluster config: KUBERNETES_SERVICE_HOST/PORT: " + url.error().message);
  }
  auto token = read_small_file(env.token_file);
  if (!token) return make_error("in-cluster config: token: " + token.error().message);
  config.token_file = env.token_file;
  auto ca = read_small_file(env.ca_file);
  if (ca) {
    config.ca_pem = std::move(*ca);
  } else {
    // As client-go: without the CA file the system trust store is used.
    config.warnings.push_back("in-cluster config: CA: " + ca.error().message +
                              "; verifying the API server against the system trust store");
  }
  auto ns = read_small_file(env.namespace_file);
  if (ns) {
    std::string n = std::move(*ns);
    while (!n.empty() && (n.back() == '\n' || n.back() == '\r' || n.back() == ' ')) n.pop_back();
    config.namespace_ = n;
  }
  if (config.namespace_.empty()) config.namespace_ = "default";
  config.description = "in-cluster (" + config.server + ")";
  return config;
}

}  // namespace hamisim::kube

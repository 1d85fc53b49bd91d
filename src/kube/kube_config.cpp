#include "kube/kube_config.h"

#include <yaml-cpp/yaml.h>

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "model/json_writer.h"
#include "model/text.h"
#include "model/yaml_check.h"
#include "model/yaml_number.h"

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
    // client-go reads the kubeconfig through sigs.k8s.io/yaml: YAML 1.1 booleans.
    if (n.IsScalar()) {
      if (const std::optional<bool> b = model::yaml11_bool(n.Scalar())) {
        out = *b;
        return ok_status();
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
};

}  // namespace

namespace {

// An IPv4 or IPv6 address as 16 bytes (IPv4 mapped), for NO_PROXY matching.
struct IpAddress {
  bool valid = false;
  bool v4 = false;
  std::array<unsigned char, 16> bytes{};
  bool loopback() const {
    if (!valid) return false;
    if (v4) return bytes[12] == 127;
    static constexpr std::array<unsigned char, 16> kOne = {0, 0, 0, 0, 0, 0, 0, 0,
                                                           0, 0, 0, 0, 0, 0, 0, 1};
    return bytes == kOne;
  }
};

IpAddress parse_ip(const std::string& text) {
  IpAddress ip;
  in_addr a4{};
  in6_addr a6{};
  if (::inet_pton(AF_INET, text.c_str(), &a4) == 1) {
    ip.valid = ip.v4 = true;
    ip.bytes[10] = ip.bytes[11] = 0xff;
    std::memcpy(ip.bytes.data() + 12, &a4, 4);
  } else if (::inet_pton(AF_INET6, text.c_str(), &a6) == 1) {
    ip.valid = true;
    std::memcpy(ip.bytes.data(), &a6, 16);
    static constexpr unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    ip.v4 = std::memcmp(ip.bytes.data(), kMapped, 12) == 0;
  }
  return ip;
}

// "10.0.0.0/8" or "fd00::/8" contains `ip`.
bool cidr_contains(const std::string& cidr, const IpAddress& ip) {
  const size_t slash = cidr.find('/');
  const IpAddress net = parse_ip(cidr.substr(0, slash));
  if (!net.valid || net.v4 != ip.v4) return false;
  int bits = 0;
  try {
    bits = std::stoi(cidr.substr(slash + 1));
  } catch (...) {
    return false;
  }
  if (net.v4) bits += 96;
  if (bits < 0 || bits > 128) return false;
  for (int i = 0; i < bits; ++i) {
    const int byte = i / 8, bit = 7 - i % 8;
    if (((net.bytes[byte] >> bit) & 1) != ((ip.bytes[byte] >> bit) & 1)) return false;
  }
  return true;
}

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

// Every file of a loading order, merged as clientcmd merges them: per map (clusters, users,
// contexts) the first file that names an entry wins it; the first non-empty current-context
// wins. Entries keep the reader of their file, so errors and relative paths refer to it.
struct Entry {
  YAML::Node inner;
  const Reader* reader = nullptr;
  std::string path;  // "clusters[2].cluster"
};
struct Merged {
  std::deque<Reader> readers;
  std::map<std::string, Entry> clusters, users, contexts;
  std::string current_context;
  std::vector<std::string> files;  // files that were read
};

Status collect(const Reader& r, const YAML::Node& root, const char* key, const char* field,
               std::map<std::string, Entry>& out) {
  const YAML::Node list = root[key];
  if (!list.IsDefined() || list.IsNull()) return ok_status();
  if (!list.IsSequence()) return r.error(key, "expected a list, got " + r.describe(list));
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = std::string(key) + "[" + std::to_string(i) + "]";
    const YAML::Node item = list[i];
    if (!item.IsMap()) return r.error(path, "expected a map, got " + r.describe(item));
    std::string name;
    if (Status s = r.string(item, path, "name", name); !s) return s;
    const YAML::Node inner = item[field];
    if (inner.IsDefined() && !inner.IsNull() && !inner.IsMap()) {
      return r.error(path + "." + field, "expected a map, got " + r.describe(inner));
    }
    if (out.count(name) != 0) continue;  // an earlier file (or entry) has it
    out[name] =
        Entry{inner.IsMap() ? inner : YAML::Node(YAML::NodeType::Map), &r, path + "." + field};
  }
  return ok_status();
}

// Adds one file's YAML (`file` names it in messages and anchors its relative paths).
Status add_file(Merged& m, std::string_view yaml, const std::string& file) {
  Reader& r = m.readers.emplace_back();
  r.file = file;
  r.dir = std::filesystem::path(file).parent_path();
  if (Status s = model::check_yaml(yaml); !s) return r.error(s.error().message);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return r.error("line " + std::to_string(e.mark.line + 1) + ", column " +
                   std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  m.files.push_back(file);
  if (root.IsNull()) return ok_status();  // an empty file adds nothing
  if (!root.IsMap()) return r.error("expected a Config map, got " + r.describe(root));
  std::string current;
  if (Status s = r.string(root, "", "current-context", current); !s) return s;
  if (m.current_context.empty()) m.current_context = current;
  if (Status s = collect(r, root, "contexts", "context", m.contexts); !s) return s;
  if (Status s = collect(r, root, "clusters", "cluster", m.clusters); !s) return s;
  return collect(r, root, "users", "user", m.users);
}

// The ExecCredential the plugin gets in KUBERNETES_EXEC_INFO.
std::string exec_info(const ExecConfig& exec, const KubeConfig& config) {
  model::JsonWriter w;
  w.begin_object();
  w.key("kind").string("ExecCredential");
  w.key("apiVersion").string(exec.api_version);
  w.key("spec").begin_object();
  if (exec.provide_cluster_info) {
    w.key("cluster").begin_object();
    w.key("server").string(config.server);
    if (!config.tls_server_name.empty()) w.key("tls-server-name").string(config.tls_server_name);
    if (config.insecure_skip_tls_verify) w.key("insecure-skip-tls-verify").boolean(true);
    if (!config.ca_pem.empty()) {
      w.key("certificate-authority-data").string(encode_base64(config.ca_pem));
    }
    if (!config.proxy_url.empty() && config.proxy_source.starts_with("proxy-url")) {
      w.key("proxy-url").string(config.proxy_url);
    }
    w.end_object();
  }
  w.key("interactive").boolean(false);
  w.end_object();
  w.end_object();
  return w.take();
}

Status parse_exec(const Reader& r, const YAML::Node& node, const std::string& path,
                  const std::string& user_name, ExecConfig& exec) {
  if (!node.IsMap()) return r.error(path, "expected a map, got " + r.describe(node));
  exec.user = user_name;
  exec.base_dir = r.dir.string();
  const std::string who = "user \"" + user_name + "\"";
  if (Status s = r.string(node, path, "apiVersion", exec.api_version); !s) return s;
  if (exec.api_version.empty()) {
    return r.error(path + ".apiVersion", "apiVersion must be specified for " + who +
                                             " to use exec authentication plugin");
  }
  if (exec.api_version != "client.authentication.k8s.io/v1" &&
      exec.api_version != "client.authentication.k8s.io/v1beta1") {
    return r.error(path + ".apiVersion",
                   "exec plugin: invalid apiVersion \"" + exec.api_version +
                       "\" (client.authentication.k8s.io/v1 or /v1beta1; v1alpha1 was removed "
                       "in Kubernetes 1.24)");
  }
  if (Status s = r.string(node, path, "command", exec.command); !s) return s;
  if (exec.command.empty()) {
    return r.error(path + ".command",
                   "command must be specified for " + who + " to use exec authentication plugin");
  }
  if (const YAML::Node args = node["args"]; args.IsDefined() && !args.IsNull()) {
    if (!args.IsSequence()) {
      return r.error(path + ".args", "expected a list, got " + r.describe(args));
    }
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i].IsScalar()) {
        return r.error(path + ".args[" + std::to_string(i) + "]",
                       "expected a string, got " + r.describe(args[i]));
      }
      exec.args.push_back(args[i].Scalar());
    }
  }
  if (const YAML::Node env = node["env"]; env.IsDefined() && !env.IsNull()) {
    if (!env.IsSequence()) return r.error(path + ".env", "expected a list, got " + r.describe(env));
    for (size_t i = 0; i < env.size(); ++i) {
      const std::string epath = path + ".env[" + std::to_string(i) + "]";
      if (!env[i].IsMap()) return r.error(epath, "expected a map, got " + r.describe(env[i]));
      std::string name, value;
      if (Status s = r.string(env[i], epath, "name", name); !s) return s;
      if (Status s = r.string(env[i], epath, "value", value); !s) return s;
      if (name.empty()) {
        return r.error(epath + ".name", "env variable name must be specified for " + who +
                                            " to use exec authentication plugin");
      }
      exec.env.emplace_back(std::move(name), std::move(value));
    }
  }
  if (Status s = r.string(node, path, "installHint", exec.install_hint); !s) return s;
  if (Status s = r.boolean(node, path, "provideClusterInfo", exec.provide_cluster_info); !s) {
    return s;
  }
  if (Status s = r.string(node, path, "interactiveMode", exec.interactive_mode); !s) return s;
  if (exec.interactive_mode.empty() && exec.api_version.ends_with("/v1beta1")) {
    exec.interactive_mode = "IfAvailable";  // client-go's default for v1beta1
  }
  if (exec.interactive_mode.empty()) {
    return r.error(path + ".interactiveMode", "interactiveMode must be specified for " + who +
                                                  " to use exec authentication plugin");
  }
  if (exec.interactive_mode == "Always") {
    return r.error(path + ".interactiveMode",
                   "exec plugin of " + who +
                       " requires interactive mode (Always), but hamisim never has a terminal; "
                       "use a plugin or mode that works without one (Never or IfAvailable)");
  }
  if (exec.interactive_mode != "Never" && exec.interactive_mode != "IfAvailable") {
    return r.error(path + ".interactiveMode",
                   "invalid interactiveMode for " + who + ": \"" + exec.interactive_mode + "\"");
  }
  return ok_status();
}

// `auth-provider`: oidc with an id-token becomes a bearer token; the rest is refused.
Status parse_auth_provider(const Reader& r, const YAML::Node& node, const std::string& path,
                           KubeConfig& config) {
  if (!node.IsMap()) return r.error(path, "expected a map, got " + r.describe(node));
  std::string name;
  if (Status s = r.string(node, path, "name", name); !s) return s;
  if (name == "gcp") {
    return r.error(path + ".name",
                   "the gcp auth plugin has been removed (Kubernetes 1.26); use the "
                   "\"gke-gcloud-auth-plugin\" kubectl/client-go credential plugin instead");
  }
  if (name == "azure") {
    return r.error(path + ".name",
                   "the azure auth plugin has been removed (Kubernetes 1.26); use the "
                   "\"kubelogin\" kubectl/client-go credential plugin instead");
  }
  if (name != "oidc") {
    return r.error(path + ".name", "no auth provider found for name \"" + name +
                                       "\" (hamisim supports oidc with an id-token, and exec "
                                       "credential plugins)");
  }
  const YAML::Node cfg = node["config"];
  if (cfg.IsDefined() && !cfg.IsNull() && !cfg.IsMap()) {
    return r.error(path + ".config", "expected a map, got " + r.describe(cfg));
  }
  std::string id_token;
  if (cfg.IsMap()) {
    if (Status s = r.string(cfg, path + ".config", "id-token", id_token); !s) return s;
  }
  if (id_token.empty()) {
    return r.error(path + ".config.id-token",
                   "auth-provider oidc: no id-token; hamisim does not refresh OIDC tokens, log in "
                   "with your OIDC helper (kubectl oidc-login, kubelogin) first");
  }
  if (!config.token.empty()) return r.error(path, "a token and an auth-provider are exclusive");
  config.token = std::move(id_token);
  return ok_status();
}

// What resolving found: a config, an error, or nothing usable ("empty": no context or no
// server, which clientcmd answers with in-cluster when it can).
struct Resolved {
  std::optional<KubeConfig> config;
  std::optional<Error> error;
  bool empty = false;
};

Resolved resolve_or_throw(const Merged& m, std::string_view context, const std::string& where) {
  Resolved out;
  auto fail = [&](Error e) {
    out.error = std::move(e);
    return out;
  };
  std::string context_name(context);
  if (context_name.empty()) context_name = m.current_context;
  if (context_name.empty()) {
    out.empty = true;
    out.error =
        make_error("kubeconfig " + where + ": current-context is not set and no context was given");
    return out;
  }
  auto ctx_it = m.contexts.find(context_name);
  if (ctx_it == m.contexts.end()) {
    return fail(make_error("kubeconfig " + where + ": context \"" + context_name + "\" not found"));
  }
  const Entry& ctx = ctx_it->second;
  const Reader& cr = *ctx.reader;
  KubeConfig config;
  std::string cluster_name, user_name;
  if (Status s = cr.string(ctx.inner, ctx.path, "cluster", cluster_name); !s) {
    return fail(s.error());
  }
  if (Status s = cr.string(ctx.inner, ctx.path, "user", user_name); !s) return fail(s.error());
  if (Status s = cr.string(ctx.inner, ctx.path, "namespace", config.namespace_); !s) {
    return fail(s.error());
  }
  if (config.namespace_.empty()) config.namespace_ = "default";
  if (cluster_name.empty()) return fail(cr.error(ctx.path + ".cluster", "is required"));

  // Cluster.
  auto cl_it = m.clusters.find(cluster_name);
  if (cl_it == m.clusters.end()) {
    return fail(cr.error("cluster \"" + cluster_name + "\" not found"));
  }
  const Entry& cl = cl_it->second;
  const Reader& r = *cl.reader;
  const YAML::Node& cluster = cl.inner;
  const std::string& cpath = cl.path;
  if (Status s = r.string(cluster, cpath, "server", config.server); !s) return fail(s.error());
  if (config.server.empty()) {
    out.empty = true;
    out.error = r.error(cpath + ".server", "is required");
    return out;
  }
  if (auto url = parse_server_url(config.server); !url) {
    return fail(r.error(cpath + ".server", url.error().message));
  }
  if (Status s =
          r.boolean(cluster, cpath, "insecure-skip-tls-verify", config.insecure_skip_tls_verify);
      !s) {
    return fail(s.error());
  }
  if (Status s = r.string(cluster, cpath, "tls-server-name", config.tls_server_name); !s) {
    return fail(s.error());
  }
  if (Status s = r.base64(cluster, cpath, "certificate-authority-data", config.ca_pem); !s) {
    return fail(s.error());
  }
  if (config.ca_pem.empty()) {
    if (Status s = r.file_field(cluster, cpath, "certificate-authority", config.ca_pem); !s) {
      return fail(s.error());
    }
  }
  if (config.insecure_skip_tls_verify && !config.ca_pem.empty()) {
    return fail(r.error(cpath,
                        "specifying a root certificates file with the insecure flag is not "
                        "allowed"));
  }
  std::string proxy;
  if (Status s = r.string(cluster, cpath, "proxy-url", proxy); !s) return fail(s.error());
  if (!proxy.empty()) {
    if (auto p = parse_proxy_url(proxy); !p) {
      return fail(r.error(cpath + ".proxy-url", p.error().message));
    }
    config.proxy_url = proxy;
    config.proxy_source = "proxy-url of cluster \"" + cluster_name + "\"";
  }

  // User (optional: a context without one is anonymous).
  if (!user_name.empty()) {
    auto u_it = m.users.find(user_name);
    if (u_it == m.users.end()) return fail(cr.error("user \"" + user_name + "\" not found"));
    const Entry& ue = u_it->second;
    const Reader& ur = *ue.reader;
    const YAML::Node& user = ue.inner;
    const std::string& upath = ue.path;
    for (const char* key : {"as", "as-groups", "as-uid", "as-user-extra"}) {
      if (user[key].IsDefined() && !user[key].IsNull()) {
        return fail(ur.error(upath + "." + key, "impersonation is not supported"));
      }
    }
    if (Status s = ur.base64(user, upath, "client-certificate-data", config.client_cert_pem); !s) {
      return fail(s.error());
    }
    if (config.client_cert_pem.empty()) {
      if (Status s = ur.file_field(user, upath, "client-certificate", config.client_cert_pem); !s)
        return fail(s.error());
    }
    if (Status s = ur.base64(user, upath, "client-key-data", config.client_key_pem); !s) {
      return fail(s.error());
    }
    if (config.client_key_pem.empty()) {
      if (Status s = ur.file_field(user, upath, "client-key", config.client_key_pem); !s)
        return fail(s.error());
    }
    if (config.client_cert_pem.empty() != config.client_key_pem.empty()) {
      return fail(ur.error(upath, config.client_cert_pem.empty()
                                      ? "client-key needs a client-certificate"
                                      : "client-certificate needs a client-key"));
    }
    if (Status s = ur.string(user, upath, "token", config.token); !s) return fail(s.error());
    std::string token_file;
    if (Status s = ur.string(user, upath, "tokenFile", token_file); !s) return fail(s.error());
    if (!token_file.empty()) {
      config.token_file = ur.resolve(token_file);
      auto content = read_small_file(config.token_file);
      if (!content) return fail(ur.error(upath + ".tokenFile", content.error().message));
    }
    if (Status s = ur.string(user, upath, "username", config.username); !s) return fail(s.error());
    if (Status s = ur.string(user, upath, "password", config.password); !s) return fail(s.error());
    const YAML::Node exec = user["exec"];
    const YAML::Node provider = user["auth-provider"];
    const bool has_exec = exec.IsDefined() && !exec.IsNull();
    const bool has_provider = provider.IsDefined() && !provider.IsNull();
    if (has_exec && has_provider) {
      return fail(ur.error(upath,
                           "authProvider cannot be provided in combination with an exec "
                           "plugin for user \"" +
                               user_name + "\""));
    }
    if (has_provider) {
      if (Status s = parse_auth_provider(ur, provider, upath + ".auth-provider", config); !s) {
        return fail(s.error());
      }
    }
    if (has_exec) {
      ExecConfig e;
      if (Status s = parse_exec(ur, exec, upath + ".exec", user_name, e); !s) {
        return fail(s.error());
      }
      config.exec = std::move(e);
    }
    const bool has_token = !config.token.empty() || !config.token_file.empty();
    if (has_token && !config.username.empty()) {
      return fail(ur.error(upath, "username/password and a token are mutually exclusive"));
    }
  }
  if (config.exec) config.exec->exec_info_json = exec_info(*config.exec, config);
  config.description = "kubeconfig " + where + " (context " + context_name + ")";
  out.config = std::move(config);
  return out;
}

Resolved resolve(const Merged& m, std::string_view context, const std::string& where) {
  // yaml-cpp reports some misuse with exceptions; none may escape.
  try {
    return resolve_or_throw(m, context, where);
  } catch (const std::exception& e) {
    Resolved out;
    out.error = make_error("kubeconfig " + where + ": " + e.what());
    return out;
  }
}

Status add_file_safely(Merged& m, std::string_view yaml, const std::string& file) {
  try {
    return add_file(m, yaml, file);
  } catch (const std::exception& e) {
    return make_error("kubeconfig " + file + ": " + e.what());
  }
}

std::string expand_home(const std::string& path, const std::string& home) {
  if (path.starts_with("~/") && !home.empty()) return home + path.substr(1);
  return path;
}

// Names the file as the user gave it in a message about its resolved path.
std::string rename_file(std::string message, const std::string& resolved,
                        const std::string& given) {
  const std::string prefix = "kubeconfig " + resolved;
  if (resolved != given && message.starts_with(prefix)) {
    message = "kubeconfig " + given + message.substr(prefix.size());
  }
  return message;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

void apply_proxy_env(KubeConfig& config, const ProxyEnv& env) {
  if (!config.proxy_url.empty()) return;
  auto url = parse_server_url(config.server);
  if (!url) return;
  const std::string& value = url->tls ? env.https_proxy : env.http_proxy;
  if (value.empty() || !proxy_applies(env.no_proxy, url->host, url->port)) return;
  config.proxy_url = value.find("://") == std::string::npos ? "http://" + value : value;
  config.proxy_source = url->tls ? "HTTPS_PROXY" : "HTTP_PROXY";
}

// clientcmd's check whether rest.InClusterConfig can work.
bool in_cluster_possible(const InClusterEnv& env) {
  std::error_code ec;
  return !env.host.empty() && !env.port.empty() &&
         std::filesystem::is_regular_file(env.token_file, ec);
}

}  // namespace

Result<KubeConfig> parse_kubeconfig(std::string_view yaml, std::string_view file,
                                    std::string_view context) {
  Merged m;
  if (Status s = add_file_safely(m, yaml, std::string(file)); !s) return s.error();
  Resolved r = resolve(m, context, std::string(file));
  if (r.config) return std::move(*r.config);
  return *r.error;
}

Result<KubeConfig> load_kubeconfig(const std::string& path, std::string_view context) {
  const std::string resolved = expand_home(path, env_or_empty("HOME"));
  auto text = read_small_file(resolved);
  if (!text) return make_error("kubeconfig " + path + ": " + text.error().message);
  auto config = parse_kubeconfig(*text, resolved, context);
  if (!config) return make_error(rename_file(config.error().message, resolved, path));
  return config;
}

ProxyEnv ProxyEnv::from_process() {
  ProxyEnv env;
  auto any = [](const char* upper, const char* lower) {
    std::string v = env_or_empty(upper);
    return v.empty() ? env_or_empty(lower) : v;
  };
  env.http_proxy = any("HTTP_PROXY", "http_proxy");
  env.https_proxy = any("HTTPS_PROXY", "https_proxy");
  env.no_proxy = any("NO_PROXY", "no_proxy");
  return env;
}

LoadingRules LoadingRules::from_process(std::string explicit_path, std::string context) {
  LoadingRules rules;
  rules.explicit_path = std::move(explicit_path);
  rules.context = std::move(context);
  rules.kubeconfig_env = env_or_empty("KUBECONFIG");
  rules.home = env_or_empty("HOME");
  rules.proxy = ProxyEnv::from_process();
  rules.in_cluster = InClusterEnv::from_process();
  return rules;
}

Result<KubeConfig> load_in_cluster_config(const LoadingRules& rules) {
  auto config = in_cluster_config(rules.in_cluster);
  if (!config) return config;
  apply_proxy_env(*config, rules.proxy);
  return config;
}

Result<KubeConfig> load_client_config(const LoadingRules& rules) {
  Merged m;
  std::string where;
  std::vector<std::string> missing;
  if (!rules.explicit_path.empty()) {
    // The explicit file must exist.
    const std::string resolved = expand_home(rules.explicit_path, rules.home);
    auto text = read_small_file(resolved);
    if (!text) return make_error("kubeconfig " + rules.explicit_path + ": " + text.error().message);
    if (Status s = add_file_safely(m, *text, resolved); !s) {
      return make_error(rename_file(s.error().message, resolved, rules.explicit_path));
    }
    where = resolved;
  } else {
    std::vector<std::string> files;
    if (!rules.kubeconfig_env.empty()) {
      size_t i = 0;
      while (i <= rules.kubeconfig_env.size()) {
        const size_t j = std::min(rules.kubeconfig_env.find(':', i), rules.kubeconfig_env.size());
        std::string f = rules.kubeconfig_env.substr(i, j - i);
        if (!f.empty() && std::find(files.begin(), files.end(), f) == files.end()) {
          files.push_back(std::move(f));
        }
        i = j + 1;
      }
    } else if (!rules.home.empty()) {
      files.push_back(rules.home + "/.kube/config");
    }
    for (const std::string& f : files) {
      std::error_code ec;
      if (!std::filesystem::exists(f, ec)) {
        missing.push_back(f);  // skipped, as clientcmd skips missing files
        continue;
      }
      auto text = read_small_file(f);
      if (!text) return make_error("kubeconfig " + f + ": " + text.error().message);
      if (Status s = add_file_safely(m, *text, f); !s) return s.error();
    }
    where = model::join(m.files, ":");
    if (!rules.kubeconfig_env.empty()) where += " (from $KUBECONFIG)";
  }
  Resolved r = resolve(m, rules.context, where);
  if (r.config) {
    apply_proxy_env(*r.config, rules.proxy);
    if (!missing.empty()) {
      r.config->warnings.push_back("kubeconfig: skipped missing file(s) " +
                                   model::join(missing, ", "));
    }
    return std::move(*r.config);
  }
  if (r.empty && in_cluster_possible(rules.in_cluster)) return load_in_cluster_config(rules);
  if (m.files.empty()) {
    const std::string tried = !rules.kubeconfig_env.empty() ? "$KUBECONFIG=" + rules.kubeconfig_env
                              : rules.home.empty()          ? std::string("none: $HOME is not set")
                                                            : rules.home + "/.kube/config";
    return make_error("no Kubernetes configuration: no kubeconfig file (tried " + tried +
                      ") and not in a cluster (KUBERNETES_SERVICE_HOST/PORT and the "
                      "service-account token are needed)");
  }
  return *r.error;
}

Result<KubeConfig> load_hami_client_config(const LoadingRules& rules) {
  LoadingRules kube = rules;
  kube.explicit_path.clear();
  kube.in_cluster.host.clear();  // the fallback below covers every failure, not only "empty"
  auto config = load_client_config(kube);
  if (config) return config;
  const std::string file =
      rules.kubeconfig_env.empty() ? rules.home + "/.kube/config" : rules.kubeconfig_env;
  auto in_cluster = load_in_cluster_config(rules);
  if (!in_cluster) {
    return make_error(config.error().message +
                      "; and the in-cluster fallback failed: " + in_cluster.error().message);
  }
  in_cluster->warnings.insert(in_cluster->warnings.begin(),
                              "BuildConfigFromFlags failed for file " + file + ": " +
                                  config.error().message + ". Using in-cluster config.");
  return in_cluster;
}

bool proxy_applies(std::string_view no_proxy, std::string_view host_in, uint16_t port) {
  std::string host(host_in);
  for (char& c : host) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (host == "localhost") return false;
  const IpAddress ip = parse_ip(host);
  if (ip.loopback()) return false;
  size_t i = 0;
  while (i <= no_proxy.size()) {
    const size_t j = std::min(no_proxy.find(',', i), no_proxy.size());
    std::string p(no_proxy.substr(i, j - i));
    i = j + 1;
    while (!p.empty() && std::isspace(static_cast<unsigned char>(p.front()))) p.erase(0, 1);
    while (!p.empty() && std::isspace(static_cast<unsigned char>(p.back()))) p.pop_back();
    for (char& c : p) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (p.empty()) continue;
    if (p == "*") return false;
    if (p.find('/') != std::string::npos) {
      if (ip.valid && cidr_contains(p, ip)) return false;
      continue;
    }
    // host:port, [v6]:port, a bare host or IP
    std::string phost = p, pport;
    if (p.front() == '[') {
      const size_t close = p.find(']');
      if (close == std::string::npos) continue;
      phost = p.substr(1, close - 1);
      if (close + 1 < p.size() && p[close + 1] == ':') pport = p.substr(close + 2);
    } else if (std::count(p.begin(), p.end(), ':') == 1) {
      const size_t colon = p.find(':');
      phost = p.substr(0, colon);
      pport = p.substr(colon + 1);
    }
    if (phost.empty()) continue;
    const bool port_ok = pport.empty() || pport == std::to_string(port);
    if (const IpAddress pip = parse_ip(phost); pip.valid) {
      if (ip.valid && pip.bytes == ip.bytes && port_ok) return false;
      continue;
    }
    if (phost.starts_with("*.")) phost.erase(0, 1);
    bool match_host = false;
    if (phost.front() != '.') {
      match_host = true;
      phost = "." + phost;
    }
    if ((host.ends_with(phost) || (match_host && host == phost.substr(1))) && port_ok) {
      return false;
    }
  }
  return true;
}

Result<ProxyUrl> parse_proxy_url(std::string_view url) {
  const std::string text(url);
  if (url.starts_with("https://") || url.starts_with("socks5://")) {
    return make_error("\"" + text +
                      "\": only http:// proxies are supported (not https:// or socks5://)");
  }
  if (!url.starts_with("http://")) return make_error("\"" + text + "\": not an http:// URL");
  std::string_view rest = url.substr(7);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  ProxyUrl out;
  if (const size_t at = rest.rfind('@'); at != std::string_view::npos) {
    std::string userinfo;
    const std::string_view raw = rest.substr(0, at);
    for (size_t i = 0; i < raw.size(); ++i) {  // percent-decoding
      if (raw[i] == '%' && i + 2 < raw.size() &&
          std::isxdigit(static_cast<unsigned char>(raw[i + 1])) &&
          std::isxdigit(static_cast<unsigned char>(raw[i + 2]))) {
        userinfo += char(std::stoi(std::string(raw.substr(i + 1, 2)), nullptr, 16));
        i += 2;
      } else {
        userinfo += raw[i];
      }
    }
    if (userinfo.find(':') == std::string::npos) userinfo += ':';
    out.authorization = "Basic " + encode_base64(userinfo);
    rest = rest.substr(at + 1);
  }
  auto server = parse_server_url("http://" + std::string(rest));
  if (!server) return make_error("\"" + text + "\": bad host or port");
  out.host = server->host;
  out.port = server->port;
  return out;
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

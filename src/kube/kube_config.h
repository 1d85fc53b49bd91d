#pragma once
// Where the Kubernetes API is and how to authenticate to it: a kubeconfig file (current or
// named context) or the in-cluster service account, as client-go's clientcmd and
// rest.InClusterConfig resolve them.
//
// Everything a kubeconfig points to (CA, client certificate and key files) is read at load
// time, so a bad path is reported with the field that named it. A token file is only checked
// here and re-read by the client periodically (service-account tokens rotate).
//
// Errors name the file and the field: `kubeconfig ~/.kube/config: users[0].user.client-key-data:
// not valid base64`.
//
// `load_client_config` follows clientcmd's deferred loading rules: the explicit --kubeconfig
// file, else every file of $KUBECONFIG (a ':'-separated list; missing files skipped, the first
// file that names a cluster, user or context wins it, the first non-empty current-context
// wins), else ~/.kube/config; when that yields no usable configuration (no file, no context,
// no server) and the in-cluster environment is there, the pod's service account.
//
// Credentials: static token, token file, basic auth, client certificates, `exec` credential
// plugins (client.authentication.k8s.io/v1 and v1beta1; run by the client, see
// exec_credential.h) and `auth-provider: oidc` with an id-token (no refresh). The removed
// gcp/azure providers are refused with client-go's advice. Proxies: the cluster's http://
// `proxy-url`, else HTTPS_PROXY / HTTP_PROXY unless NO_PROXY (or a loopback server) excludes
// the server, as Go's net/http does.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/base64.h"
#include "model/result.h"

namespace hamisim::kube {

// A `users[].user.exec` credential plugin, validated as client-go validates it.
struct ExecConfig {
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // added to our environment
  std::string api_version;  // client.authentication.k8s.io/v1 or /v1beta1
  std::string install_hint;
  bool provide_cluster_info = false;
  std::string interactive_mode;  // Never or IfAvailable (we are never interactive)
  std::string user;              // the kubeconfig user, for messages
  std::string base_dir;          // a relative command is resolved against the kubeconfig's dir
  // The ExecCredential handed to the plugin in KUBERNETES_EXEC_INFO (spec.cluster only with
  // provideClusterInfo).
  std::string exec_info_json;
};

struct KubeConfig {
  std::string server;  // "https://host:port[/prefix]"
  // PEM bundle the server certificate is verified against; empty = the system trust store.
  std::string ca_pem;
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;  // overrides the name verified and sent as SNI
  std::string client_cert_pem, client_key_pem;
  std::string token;               // static bearer token
  std::string token_file;          // bearer token read from this file (wins over `token`), re-read
  std::string username, password;  // basic auth
  std::optional<ExecConfig> exec;  // credentials from a plugin (used when no static token)
  // An http:// proxy the client tunnels through (CONNECT for https servers), from the
  // cluster's proxy-url or the environment; `proxy_source` says which.
  std::string proxy_url, proxy_source;
  std::string namespace_;   // the context's namespace, or the pod's in-cluster
  std::string description;  // "kubeconfig FILE (context C)" / "in-cluster (...)"
  std::vector<std::string> warnings;
};

// Parses kubeconfig YAML. `file` is used in error messages and to resolve relative paths;
// `context` picks a context (empty = current-context).
Result<KubeConfig> parse_kubeconfig(std::string_view yaml, std::string_view file,
                                    std::string_view context = {});
// Reads `path` (a leading "~/" is $HOME) and parses it.
Result<KubeConfig> load_kubeconfig(const std::string& path, std::string_view context = {});

// The in-cluster environment. `from_process()` reads KUBERNETES_SERVICE_HOST/PORT and uses
// the standard service-account paths; tests build their own.
struct InClusterEnv {
  std::string host;  // KUBERNETES_SERVICE_HOST
  std::string port;  // KUBERNETES_SERVICE_PORT
  std::string token_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca_file = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  std::string namespace_file = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
  static InClusterEnv from_process();
};
Result<KubeConfig> in_cluster_config(const InClusterEnv& env = InClusterEnv::from_process());

// The proxy variables of the environment, as Go's httpproxy.FromEnvironment reads them
// (upper case first).
struct ProxyEnv {
  std::string http_proxy, https_proxy, no_proxy;
  static ProxyEnv from_process();
};

// Everything the loading order looks at; `from_process()` reads the environment, tests build
// their own.
struct LoadingRules {
  std::string explicit_path;   // --kubeconfig
  std::string context;         // --context
  std::string kubeconfig_env;  // $KUBECONFIG
  std::string home;            // $HOME
  ProxyEnv proxy;
  InClusterEnv in_cluster;
  static LoadingRules from_process(std::string explicit_path = {}, std::string context = {});
};

// client-go's order (see the top of this file). `description` says where the config came from.
Result<KubeConfig> load_client_config(const LoadingRules& rules);

// HAMi's scheduler binary (pkg/util/client): $KUBECONFIG, else $HOME/.kube/config; when that
// fails to load for any reason, the in-cluster config. The failure is kept in `warnings` (HAMi
// logs "BuildConfigFromFlags failed for file ... Using in-cluster config."). Unlike HAMi,
// a $KUBECONFIG path list is merged as client-go merges it rather than read as one file name.
Result<KubeConfig> load_hami_client_config(const LoadingRules& rules);

// The in-cluster config with the environment's proxy applied.
Result<KubeConfig> load_in_cluster_config(const LoadingRules& rules);

// Whether Go's net/http would send a request to `host`:`port` through a proxy under this
// NO_PROXY value (loopback and "localhost" never are).
bool proxy_applies(std::string_view no_proxy, std::string_view host, uint16_t port);

// An http:// proxy URL: where to connect and the Proxy-Authorization value (from user info).
struct ProxyUrl {
  std::string host;
  uint16_t port = 80;
  std::string authorization;  // "Basic ..." or empty
};
Result<ProxyUrl> parse_proxy_url(std::string_view url);

using model::decode_base64;
using model::encode_base64;

// Server URL parts.
struct ServerUrl {
  bool tls = true;
  std::string host;  // without brackets
  uint16_t port = 443;
  std::string host_header;  // host[:port] as sent in Host
  std::string prefix;       // path prefix without trailing '/', "" when none
};
Result<ServerUrl> parse_server_url(std::string_view server);

}  // namespace hamisim::kube

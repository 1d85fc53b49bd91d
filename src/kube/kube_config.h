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
// not valid base64`. Credential plugins (`exec`, `auth-provider`) are not supported and say so.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/base64.h"
#include "model/result.h"

namespace hamisim::kube {

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
  std::string namespace_;          // the context's namespace, or the pod's in-cluster
  std::string description;         // "kubeconfig FILE (context C)" / "in-cluster"
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

#pragma once
// The objects `hamisim plan` reads, listed from a live cluster instead of files: what
// `kubectl get nodes,pods,resourcequotas,resourceslices,deviceclasses,resourceclaims,
// resourceclaimtemplates -A -o json` prints, read through the Kubernetes client `serve` uses
// (its configuration loading, credentials, rate limit and retries), one paged LIST per
// collection, decoded page by page with the decoder of `--cluster` files.

#include <string>
#include <vector>

#include "kube/client.h"
#include "kube/kube_config.h"
#include "model/decode.h"
#include "model/result.h"

namespace hamisim::cli {

// Which cluster: the flags of `serve`'s live path. At most one of kubeconfig / in_cluster /
// live; `flag` names the one given, for errors.
struct ClusterSource {
  std::string kubeconfig;
  std::string context;
  bool in_cluster = false;
  bool live = false;
  bool any() const { return !kubeconfig.empty() || in_cluster || live; }
  std::string flag() const;
};

struct ListedCluster {
  model::ObjectSet objects;
  std::string description;  // where the configuration came from ("kubeconfig ... (context x)")
};

// Lists every collection. A DRA collection the server does not serve (404: no DRA, or an
// older Kubernetes) is left out with a warning; any other failure is an error naming the
// collection. Warnings (the configuration's too) are appended to `warnings`.
Result<ListedCluster> list_cluster(const ClusterSource& source, std::vector<std::string>& warnings);

}  // namespace hamisim::cli

#include "cli/cluster_list.h"

#include <string_view>

namespace hamisim::cli {

std::string ClusterSource::flag() const {
  if (in_cluster) return "--in-cluster";
  if (!kubeconfig.empty()) return "--kubeconfig";
  return "--live";
}

namespace {

struct Collection {
  std::string_view path;
  std::string_view what;  // for messages: "the pod list"
  bool dra;               // optional: a 404 means the cluster serves no DRA
};

// What plan reads, in the order a `kubectl get` of them prints.
constexpr Collection kCollections[] = {
    {"/api/v1/nodes", "the node list", false},
    {"/api/v1/pods", "the pod list", false},
    {"/api/v1/resourcequotas", "the resource quota list", false},
    {"/apis/resource.k8s.io/v1/resourceslices", "the ResourceSlice list", true},
    {"/apis/resource.k8s.io/v1/deviceclasses", "the DeviceClass list", true},
    {"/apis/resource.k8s.io/v1/resourceclaims", "the ResourceClaim list", true},
    {"/apis/resource.k8s.io/v1/resourceclaimtemplates", "the ResourceClaimTemplate list", true},
};

}  // namespace

Result<ListedCluster> list_cluster(const ClusterSource& source,
                                   std::vector<std::string>& warnings) {
  const std::string flag = source.flag();
  const auto rules = kube::LoadingRules::from_process(source.kubeconfig, source.context);
  auto config =
      source.in_cluster ? kube::load_in_cluster_config(rules) : kube::load_client_config(rules);
  if (!config) return make_error(flag + ": " + config.error().message);
  warnings.insert(warnings.end(), config->warnings.begin(), config->warnings.end());
  auto client = kube::KubeClient::create(*config);
  if (!client) return make_error(flag + ": " + client.error().message);
  ListedCluster out;
  out.description = config->description;
  for (const Collection& c : kCollections) {
    auto pages = (*client)->list(std::string(c.path), std::string(c.what));
    if (!pages) {
      if (c.dra && pages.error().code == state::ApiCode::kNotFound) {
        warnings.push_back(std::string(c.what) + ": the API server serves no " +
                           std::string(c.path) + " (no DRA there); planned without it");
        continue;
      }
      return make_error(flag + ": " + pages.error().message);
    }
    for (size_t i = 0; i < pages->pages.size(); ++i) {
      auto objects = model::decode_objects_json(pages->pages[i], {.dra = true});
      if (!objects) {
        return make_error(std::string(c.what) + " (page " + std::to_string(i + 1) +
                          "): " + objects.error().message);
      }
      out.objects.append(std::move(objects).value());
    }
  }
  return out;
}

}  // namespace hamisim::cli

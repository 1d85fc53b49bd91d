#pragma once
// The cluster's ResourceSlices, for comparing real nodes with the slices their device profile
// promises (`hamisim profile check` and serve's profile reconciler): one paged LIST of
// resource.k8s.io/v1 resourceslices, each item read by the strict DRA decoder. One helper, so
// that both compare the same slices read the same way.

#include <atomic>
#include <vector>

#include "dra/objects.h"
#include "kube/client.h"
#include "model/result.h"

namespace hamisim::cli {

inline constexpr char kResourceSlicesPath[] = "/apis/resource.k8s.io/v1/resourceslices";

// The LIST alone. An ApiError when the server fails it, 404 included: a cluster without DRA
// (or before 1.34, when v1 came) serves no such collection, which callers report as a warning
// rather than an input error.
state::ApiResult<kube::ListPages> list_resource_slice_pages(
    kube::KubeClient& client, const std::atomic<bool>* cancel = nullptr);

// Every slice of the pages, in order. A slice the decoder refuses is an error naming its place
// in the whole list and the field: `the slice list: items[3]: spec.pool.resourceSliceCount: ...`.
Result<std::vector<dra::ResourceSlice>> decode_resource_slice_list(const kube::ListPages& pages);

// Both: the LIST's failure or the decoder's, as one error.
Result<std::vector<dra::ResourceSlice>> list_resource_slices(
    kube::KubeClient& client, const std::atomic<bool>* cancel = nullptr);

}  // namespace hamisim::cli

#pragma once
// ResourceSlices as the API server would return them (`resource.k8s.io/v1`, JSON), for tools
// that hand template slices to others (`hamisim profile slices`). What decode.h reads back,
// field for field: encode then decode gives the same slice.

#include <string>
#include <vector>

#include "dra/objects.h"

namespace hamisim::dra {

std::string encode_resource_slice(const ResourceSlice& slice);
// A `kind: List` of the slices.
std::string encode_resource_slice_list(const std::vector<ResourceSlice>& slices);

}  // namespace hamisim::dra

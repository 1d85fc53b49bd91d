#include "cli/resource_slice_list.h"

#include <string>

#include "dra/decode.h"

namespace hamisim::cli {

state::ApiResult<kube::ListPages> list_resource_slice_pages(kube::KubeClient& client,
                                                            const std::atomic<bool>* cancel) {
  return client.list(kResourceSlicesPath, "the slice list", cancel);
}

Result<std::vector<dra::ResourceSlice>> decode_resource_slice_list(const kube::ListPages& pages) {
  std::vector<dra::ResourceSlice> slices;
  for (const std::string& page : pages.pages) {
    // The decoder's refusal, named by the item's place in the whole list: the walker's own
    // prefix counts within the page.
    std::string refused;
    auto listed = kube::for_each_list_item(page, [&](std::string_view item) -> Status {
      auto slice = dra::decode_resource_slice(item);
      if (!slice) {
        refused = "items[" + std::to_string(slices.size()) + "]: " + slice.error().message;
        return make_error(refused);
      }
      slices.push_back(std::move(slice).value());
      return Ok{};
    });
    if (!listed) {  // the item's refusal, or the page is not a List
      return make_error("the slice list: " + (refused.empty() ? listed.error().message : refused));
    }
  }
  return slices;
}

Result<std::vector<dra::ResourceSlice>> list_resource_slices(kube::KubeClient& client,
                                                             const std::atomic<bool>* cancel) {
  auto pages = list_resource_slice_pages(client, cancel);
  if (!pages) return make_error(pages.error().message);
  return decode_resource_slice_list(*pages);
}

}  // namespace hamisim::cli

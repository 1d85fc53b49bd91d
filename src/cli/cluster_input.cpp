#include "cli/cluster_input.h"

#include <cstdio>

#include "dra/decode.h"
#include "model/input.h"

namespace hamisim::cli {

Result<NodesAndDra> load_nodes_and_dra(const std::string& path, std::string_view command,
                                       bool strict) {
  model::ObjectKinds kinds{"--cluster",
                           {.nodes = true, .pods = false, .quotas = false, .dra = true},
                           {},
                           {"Pod", "ResourceQuota"}};
  if (strict) kinds.unknown_fields = model::UnknownFields::kError;
  std::vector<std::string> warnings;
  auto objects = model::load_checked_objects(path, kinds, warnings);
  if (!objects) return objects.error();
  for (const auto& w : warnings) {
    std::fprintf(stderr, "hamisim %.*s: warning: %s\n", static_cast<int>(command.size()),
                 command.data(), w.c_str());
  }
  NodesAndDra out;
  if (Status s = dra::decode_objects(objects->dra_objects, out.dra); !s) return s.error();
  out.objects = std::move(objects).value();
  return out;
}

}  // namespace hamisim::cli

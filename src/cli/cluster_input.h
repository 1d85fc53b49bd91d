#pragma once
// The Nodes and DRA objects of one `--cluster` file or directory, for the commands that look at
// nodes rather than plan (doctor, profile check). A plan's cluster dump works too: its Pods and
// ResourceQuotas are read past without a word; other skipped kinds are warned about on stderr as
// `hamisim <command>: warning: ...`.

#include <string>
#include <string_view>

#include "dra/objects.h"
#include "model/decode.h"
#include "model/result.h"

namespace hamisim::cli {

struct NodesAndDra {
  model::ObjectSet objects;  // its nodes; dra_objects already decoded into `dra`
  dra::Objects dra;
};

// `strict`: unknown fields of the objects are errors (--strict), not warnings.
Result<NodesAndDra> load_nodes_and_dra(const std::string& path, std::string_view command,
                                       bool strict);

}  // namespace hamisim::cli

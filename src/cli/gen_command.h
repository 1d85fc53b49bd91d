#pragma once
// `hamisim gen`: writes a seeded synthetic cluster (cluster.json, node-groups.yaml,
// device-profiles.yaml) that `hamisim plan` and `hamisim serve --cluster-snapshot` read.

#include <string>

#include "gen/generator.h"

namespace CLI {
class App;
}

namespace hamisim::cli {

struct GenCommandOptions {
  gen::GenOptions gen;
  std::string out_dir;
  bool force = false;  // write into a non-empty out_dir
};

void add_gen_options(CLI::App& app, GenCommandOptions& options);

// Exit code: 0 written, 2 bad options, 1 write failure.
int run_gen(const GenCommandOptions& options);

}  // namespace hamisim::cli

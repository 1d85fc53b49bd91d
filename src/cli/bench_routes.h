#pragma once
// Benchmark-only routes, compiled into `hamisim serve` only when CMake's HAMISIM_BENCH_ROUTES
// is ON (never in a normal or installed build: this header's only source file is not even
// compiled otherwise).

#include <vector>

#include "server/http_server.h"

namespace hamisim::cli {

// POST /bench/noop: answers 200 with the request body echoed and does nothing else. It sits in
// the simulation auth group, like /filter-simulation, so the two differ only by the work
// between reading the request and writing a response of the same size: what `wrk` measures on
// it is the HTTP stack alone (bench/load).
std::vector<server::Route> bench_routes();

}  // namespace hamisim::cli

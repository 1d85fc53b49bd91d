#include "cli/bench_routes.h"

#ifndef HAMISIM_BENCH_ROUTES
#error "bench_routes.cpp is compiled only with -DHAMISIM_BENCH_ROUTES=ON"
#endif

namespace hamisim::cli {

std::vector<server::Route> bench_routes() {
  return {{"POST", "/bench/noop", server::AuthGroup::kSimulation,
           [](const server::HttpRequest& request) {
             return server::HttpResponse::json(200, request.body);
           }}};
}

}  // namespace hamisim::cli

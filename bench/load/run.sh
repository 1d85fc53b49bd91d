#!/usr/bin/env bash
# HTTP load on /filter-simulation and on the benchmark-only no-op route, client and server on
# this machine (keep-alive, loopback). Needs wrk (apt-get install -y wrk), python3, curl, and a
# hamisim built with -DHAMISIM_BENCH_ROUTES=ON (for /bench/noop):
#   cmake -B build-perf -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHAMISIM_BENCH_ROUTES=ON
#   ninja -C build-perf hamisim
#   bench/load/run.sh build-perf/src/cli/hamisim
# Each line: wrk's rate and latencies, then from the server's metrics (read before and after
# the run) the requests it answered, those that were not a success (an HTTP 200 carrying an
# `Error` counts), and its CPU time per request.
set -euo pipefail
HAMISIM=${1:-build-perf/src/cli/hamisim}
DURATION=${DURATION:-20s}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
PORT=${PORT:-18080}
METRICS_PORT=${METRICS_PORT:-$((PORT + 1))}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT

"$HAMISIM" gen --nodes 50 --pods-per-node 0 --pending 1 --groups 1 --node-groups 3 --seed 1 \
  --out "$work/gen" 2>/dev/null
python3 "$here/make_bodies.py" "$work/gen" "$work" 1 50

"$HAMISIM" serve --insecure-http --listen "127.0.0.1:$PORT" \
  --metrics-listen "127.0.0.1:$METRICS_PORT" --log-level warn >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break
  sleep 0.1
done

snapshot() {  # file: the server's metrics, then its /proc stat line
  curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" >"$1"
  echo "stat $(cat "/proc/$server/stat")" >>"$1"
}

run() {  # name route body
  printf '%-28s ' "$1"
  snapshot "$work/before"
  BODY="$3" wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" -s "$here/post.lua" \
    "http://127.0.0.1:$PORT$2" | tail -1 | tr -d '\n'
  snapshot "$work/after"
  printf '  | '
  python3 "$here/server_stats.py" "$2" "$work/before" "$work/after"
}
echo "# $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); wrk -t$THREADS -c$CONNECTIONS -d$DURATION"
echo "# bodies: 1 node $(stat -c %s "$work/filter-1.json") B, 50 nodes $(stat -c %s "$work/filter-50.json") B"
if curl -sf -X POST -d '{}' "http://127.0.0.1:$PORT/bench/noop" >/dev/null; then
  run "noop (1-node body)" /bench/noop "$work/filter-1.json"
else
  echo "no /bench/noop: build with -DHAMISIM_BENCH_ROUTES=ON to measure the HTTP stack alone"
fi
run "filter-simulation 1 node" /filter-simulation "$work/filter-1.json"
if curl -sf -X POST -d '{}' "http://127.0.0.1:$PORT/bench/noop" >/dev/null; then
  run "noop (50-node body)" /bench/noop "$work/filter-50.json"
fi
run "filter-simulation 50 nodes" /filter-simulation "$work/filter-50.json"
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# Writes what hamisim answers on the bundled examples (the DRA one included) and on a generated
# 1,000-node cluster into OUTDIR, one file per question, so that two builds can be compared byte
# for byte (a refactoring must not change any of them):
#   scripts/golden-outputs.sh build/src/cli/hamisim /tmp/before
#   ... change, rebuild ...
#   scripts/golden-outputs.sh build/src/cli/hamisim /tmp/after && diff -r /tmp/before /tmp/after
# Needs curl for the HTTP answers. Times and versions in the outputs are masked.
#   scripts/golden-outputs.sh --self-test   checks the masking alone (a ctest runs it)
set -uo pipefail

# Masks, in place in files $3..., what changes from run to run: times, durations, versions, the
# server's port $1 where it is an address's port (anchored, so a UUID or a count holding the
# same digits stays), and the generated cluster's folder $2, which the plan's provenance names.
mask() {
  local port=$1 gen=$2; shift 2
  sed -i -E -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z/<time>/g' \
    -e 's/[0-9]+(\.[0-9]+)? ?(ms|µs|us|s)\b/<dur>/g' \
    -e "s/(127\.0\.0\.1|localhost|\[::1\]):$port([^0-9]|\$)/\1:<port>\2/g" \
    -e 's/[0-9]+\.[0-9]+\.[0-9]+ \(([0-9a-f]{7,40}|unknown)\)/<version>/g' -e "s#$gen#<gen>#g" "$@"
}

if [[ ${1:-} == --self-test ]]; then
  t=$(mktemp)
  trap 'rm -f "$t"' EXIT
  printf '%s\n' 'GPU-31234f5f-a276-4095-8631-2345d8ba9de8 at 127.0.0.1:31234/filter' \
    'http://localhost:31234 [::1]:31234 127.0.0.1:312345 node-31234 /tmp/g.x/cluster.json' > "$t"
  mask 31234 /tmp/g.x "$t"
  want='GPU-31234f5f-a276-4095-8631-2345d8ba9de8 at 127.0.0.1:<port>/filter
http://localhost:<port> [::1]:<port> 127.0.0.1:312345 node-31234 <gen>/cluster.json'
  if [[ $(cat "$t") != "$want" ]]; then
    printf 'golden-outputs.sh: masking is wrong:\n got: %s\nwant: %s\n' "$(cat "$t")" "$want" >&2
    exit 1
  fi
  echo "golden-outputs.sh: masking ok"
  exit 0
fi

bin=$(realpath "${1:?usage: golden-outputs.sh HAMISIM OUTDIR}")
out=${2:?usage: golden-outputs.sh HAMISIM OUTDIR}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
cd "$root"

run() { # name, command...: stdout, stderr and exit status of one command
  local name=$1; shift
  "$@" > "$out/$name.out" 2> "$out/$name.err"
  echo "exit $?" >> "$out/$name.out"
}

run plan-example-default "$bin" plan
for fmt in table json html; do
  run "plan-example-$fmt" "$bin" plan --cluster examples/plan/cluster.yaml \
    --node-groups examples/plan/node-groups.yaml --device-profiles examples/plan/device-profiles.yaml -o "$fmt"
done
for pod in examples/fit/pod-*.yaml; do
  for fmt in table json; do
    run "fit-$(basename "$pod" .yaml)-$fmt" "$bin" fit --pod "$pod" --node examples/fit/node-k80.yaml \
      --output "$fmt"
  done
done
for fmt in table json; do
  run "plan-dra-example-$fmt" "$bin" plan --cluster examples/plan-dra/cluster.yaml \
    --node-groups examples/plan-dra/node-groups.yaml \
    --device-profiles examples/plan-dra/device-profiles.yaml -o "$fmt"
done
run fit-vendors "$bin" fit --pod examples/vendors/pod-dcu.yaml --node examples/vendors/node-mixed.yaml
run profile-check "$bin" profile check --device-profiles examples/profiles/device-profiles.yaml \
  --cluster examples/profiles/nodes.yaml

gen=$(mktemp -d)
trap 'rm -rf "$gen"; [[ -n ${pid:-} ]] && kill "$pid" 2>/dev/null' EXIT
"$bin" gen --nodes 1000 --pods-per-node 30 --pending 5000 --groups 50 --node-groups 20 --seed 1 \
  --out "$gen/g" > /dev/null
for fmt in table json; do
  run "plan-gen1000-$fmt" "$bin" plan --cluster "$gen/g/cluster.json" \
    --node-groups "$gen/g/node-groups.yaml" --device-profiles "$gen/g/device-profiles.yaml" -o "$fmt"
done
# The planner's other paths: balancing, the caps, the expander chain, the time budget, the
# comparisons with an unpatched CA and with DRA mode.
gen_plan() { # name, extra flags...
  local name=$1; shift
  run "plan-gen1000-$name" "$bin" plan --cluster "$gen/g/cluster.json" \
    --node-groups "$gen/g/node-groups.yaml" --device-profiles "$gen/g/device-profiles.yaml" \
    -o json "$@"
}
gen_plan balance --balance-similar-node-groups
gen_plan capped --max-nodes-total 1003
gen_plan total-reached --max-nodes-total 1000
gen_plan per-scaleup --max-nodes-per-scaleup 2 --expander priority,random --seed 7
gen_plan no-time --max-binpacking-time 0s
gen_plan compare --compare-unpatched-ca --compare-modes --fastpath-binpacking-enabled
run plan-gen1000-verbose "$bin" plan --cluster "$gen/g/cluster.json" \
  --node-groups "$gen/g/node-groups.yaml" --device-profiles "$gen/g/device-profiles.yaml" --verbose
run plan-example-compare "$bin" plan --cluster examples/plan/cluster.yaml \
  --node-groups examples/plan/node-groups.yaml --device-profiles examples/plan/device-profiles.yaml \
  --compare-unpatched-ca --compare-modes --balance-similar-node-groups -o json

# HTTP answers: the simulation routes with device profiles, the live routes on the snapshot.
port=$((20000 + RANDOM % 20000))
"$bin" serve --insecure-http --listen 127.0.0.1:$port --metrics-listen "" \
  --device-profiles examples/profiles/device-profiles.yaml \
  --cluster-snapshot examples/live/cluster.yaml > "$gen/serve.log" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" > /dev/null && break; sleep 0.1; done
post() { # name, path, body file
  curl -s -w '\nhttp %{http_code}\n' -H 'Content-Type: application/json' --data-binary "@$3" \
    "http://127.0.0.1:$port$2" > "$out/$1.out"
}
for f in examples/simulation/*.json; do post "sim-$(basename "$f" .json)" /filter-simulation "$f"; done
for f in examples/live/filter-*.json; do post "live-$(basename "$f" .json)" /filter "$f"; done
for f in examples/live/bind-*.json; do post "live-$(basename "$f" .json)" /bind "$f"; done
kill "$pid"; wait "$pid" 2>/dev/null; pid=
mask "$port" "$gen" "$out"/*
echo "wrote $(ls "$out" | wc -l) files to $out"

#!/usr/bin/env bash
# Quick start, command 1: builds hamisim and runs it on the bundled example.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release hamisim >/dev/null
bin=build/src/cli/hamisim
ex=examples/fit

echo "== Which node group Cluster Autoscaler should grow for the pending pods (examples/plan) =="
"$bin" plan
echo

echo "== A pod asking for 300 MiB and 40% of one GPU, on a node with two K80 entries =="
"$bin" fit --pod "$ex/pod-fits.yaml" --node "$ex/node-k80.yaml"
echo
echo "== A pod asking for 12000 MiB on one GPU (each K80 entry has 11441 MiB) =="
"$bin" fit --pod "$ex/pod-too-big.yaml" --node "$ex/node-k80.yaml"
echo
echo "== Two GPUs of 4000 MiB, with another pod already using 8000 MiB of the first GPU =="
"$bin" fit --pod "$ex/pod-two-gpus.yaml" --node "$ex/node-k80.yaml" --pods-on-node "$ex/pods-on-node.yaml"

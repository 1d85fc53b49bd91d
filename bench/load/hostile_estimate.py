#!/usr/bin/env python3
"""A /v1/estimate body whose work grows with pods x template copies (issue #44): the bundled
example's K80 node as the template, TRAINERS pods of one GPU and 8000 MiB (two per copy, one
per 11441 MiB device), then SQUEEZED pods of 4000 MiB that fit the empty template but none of
the full copies, so each is tried on every copy there is (each squeezed pod asks a CPU amount
of its own, so none is rejected for another's sake). With the defaults (4,000 trainers,
10,000 squeezed, maxNodes 1000) it computes far past a 2 s --max-plan-time, and its node count
is where CA's binpacking duration stops it. Writes the JSON body to stdout (needs
python3-yaml).

WHOLE more pods (default 0) each take a whole copy (both GPUs) and ask a CPU amount of their
own: each is tried on every copy before a new one is added, so the work grows with the square
of the copies, and with MAX_NODES large enough CA's binpacking duration (10 s, a budget of work
in hamisim) is what stops the estimate. Then the same body must give the same node count on a
quiet and on a saturated machine (docs/reliability.md).

    bench/load/hostile_estimate.py [TRAINERS [SQUEEZED [MAX_NODES [WHOLE]]]] > estimate.json
"""
import json
import os
import sys

import yaml

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "plan")
trainers = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
squeezed = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
max_nodes = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
whole = int(sys.argv[4]) if len(sys.argv) > 4 else 0

with open(os.path.join(root, "cluster.yaml")) as f:
    cluster = yaml.safe_load(f)
items = {i["metadata"]["name"]: i for i in cluster["items"]}
template = json.loads(json.dumps(items["k80-node-1"]))
template["metadata"]["name"] = "template-node-for-gpu-k80-0"
trainer = items["trainer-2"]


def pod(name, gpumem, cpu, memory, gpus=1):
    p = json.loads(json.dumps(trainer))
    p["metadata"]["name"] = name
    resources = p["spec"]["containers"][0]["resources"]
    resources["requests"] = {"cpu": cpu, "memory": memory}
    resources["limits"]["nvidia.com/gpumem"] = gpumem
    resources["limits"]["nvidia.com/gpu"] = gpus
    return p


pods = [pod(f"t-{i}", 8000, "2", "8Gi") for i in range(trainers)]
# Each squeezed pod asks a CPU amount of its own, so each is an equivalence group of its own
# and tries the copies itself (pods of one group stop at the first the copies cannot take).
pods += [pod(f"s-{i}", 4000, f"{100 + i}m", "1Gi") for i in range(squeezed)]
pods += [pod(f"w-{i}", 8000, f"{100 + i}m", "1Gi", gpus=2) for i in range(whole)]
json.dump({"template": template, "pods": pods, "maxNodes": max_nodes}, sys.stdout,
          separators=(",", ":"))

#!/usr/bin/env python3
"""A hostile /v1/plan body (issue #23): the bundled example's cluster and node groups, every
group's maxSize raised to MAX_SIZE, and pending pods that make an answer listing each
rejection per template copy grow with pods x copies:
- 2 x MAX_SIZE trainers (one GPU, 8000 MiB, as trainer-2) fill the K80 group's copies up to
  its maxSize (one per 11441 MiB device);
- SQUEEZED pods of 4000 MiB with smaller CPU and memory requests, so packed after them: each
  fits the empty template (the group does not reject it) but none of the full copies, so it is
  tried on every copy there is. The first has requests of its own (another equivalence group):
  it finds the node limit reached, the rest are then tried copy by copy.
Writes the JSON body to stdout (needs python3-yaml).

    bench/load/hostile_plan.py [SQUEEZED [MAX_SIZE]] > plan.json
"""
import json
import os
import sys

import yaml

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "plan")
squeezed = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
max_size = int(sys.argv[2]) if len(sys.argv) > 2 else 1000

with open(os.path.join(root, "cluster.yaml")) as f:
    cluster = yaml.safe_load(f)
with open(os.path.join(root, "node-groups.yaml")) as f:
    groups = yaml.safe_load(f)
for g in groups["nodeGroups"]:
    g["maxSize"] = max_size

trainer = next(i for i in cluster["items"] if i["metadata"]["name"] == "trainer-2")
cluster["items"] = [i for i in cluster["items"] if i is not trainer]


def pod(name, owner, gpumem, cpu, memory):
    p = json.loads(json.dumps(trainer))
    p["metadata"]["name"] = name
    p["metadata"]["ownerReferences"][0]["name"] = owner
    resources = p["spec"]["containers"][0]["resources"]
    resources["requests"] = {"cpu": cpu, "memory": memory}
    resources["limits"]["nvidia.com/gpumem"] = gpumem
    return p


pending = [pod(f"t-{i}", "trainer", 8000, "2", "8Gi") for i in range(2 * max_size)]
pending += [pod("s-first", "squeezed-first", 4000, "1", "1Gi")]
pending += [pod(f"s-{i}", "squeezed", 4000, "500m", "1Gi") for i in range(squeezed - 1)]
body = {"cluster": cluster, "nodeGroups": groups, "pendingPods": pending,
        "options": {"maxNodesTotal": 3 * max_size}}
json.dump(body, sys.stdout, separators=(",", ":"))

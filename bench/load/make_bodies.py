#!/usr/bin/env python3
"""ExtenderArgs bodies for /filter-simulation from a `hamisim gen` directory: the first
pending pod and the first N nodes renamed as Cluster Autoscaler names template copies
(template-node-for-<group>-<i>). Writes filter-<N>.json for each N given."""
import json
import sys

gen_dir, out_dir, counts = sys.argv[1], sys.argv[2], [int(n) for n in sys.argv[3:]]
with open(f"{gen_dir}/cluster.json") as f:
    items = json.load(f)["items"]
nodes = [i for i in items if i["kind"] == "Node"]
pod = next(i for i in items if i["kind"] == "Pod" and not i["spec"].get("nodeName"))
for n in counts:
    chosen = []
    for i, node in enumerate(nodes[:n]):
        node = json.loads(json.dumps(node))
        group = node["metadata"]["labels"]["agentpool"]
        node["metadata"]["name"] = f"template-node-for-{group}-{i}"
        chosen.append(node)
    body = {"Pod": pod, "Nodes": {"metadata": {}, "items": chosen}, "NodeNames": None}
    with open(f"{out_dir}/filter-{n}.json", "w") as f:
        json.dump(body, f, separators=(",", ":"))

#!/usr/bin/env python3
"""After a live /filter + /bind run: was any pod lost or any device over-committed?
  check_bindings.py CLUSTER.json AFTER.json BOUND.txt
CLUSTER.json is the cluster before the run (`hamisim gen`), AFTER.json every object after it
(a List: bench_apiserver --dump or serve --snapshot-out), BOUND.txt what the client was told
("namespace/name node" per pod whose bind answered without an error). Checks, from the objects
alone (not from hamisim's own state):
  lost        a pod the client saw bound that is not bound to that node
  unallocated a pod bound whose hami.io/bind-phase is not "success" (the device plugin,
              played by the bench, did not see its bind)
  unexpected  a pending pod bound although no bind of it succeeded
  mismatched  a bound pod whose hami.io/vgpu-node is not its node, or whose allocation names a
              device its node does not register
  overcommitted  a device whose pods together take more slots (count), memory (devmem) or cores
              (devcore) than its node registers (every pod on the node counted, running ones too)
Prints one line of key=value pairs; exit status 1 when any of those is not zero."""
import json
import sys
from collections import defaultdict

before_path, after_path, bound_path = sys.argv[1:4]


def items(path):
    with open(path) as f:
        return json.load(f)["items"]


def key(pod):
    return f'{pod["metadata"].get("namespace", "default")}/{pod["metadata"]["name"]}'


pending = {key(p) for p in items(before_path)
           if p["kind"] == "Pod" and not p["spec"].get("nodeName")}
after = items(after_path)
pods = {key(p): p for p in after if p["kind"] == "Pod"}
nodes = {n["metadata"]["name"]: n for n in after if n["kind"] == "Node"}
told = {}
with open(bound_path) as f:
    for line in f:
        if line.strip():
            name, node = line.split()
            told[name] = node

lost = unallocated = unexpected = mismatched = 0
for name in pending:
    pod = pods.get(name)
    node = pod["spec"].get("nodeName", "") if pod else ""
    ann = pod["metadata"].get("annotations", {}) if pod else {}
    if name in told:
        if node != told[name]:
            lost += 1
            print(f"lost: {name} told {told[name]}, cluster has node {node!r}", file=sys.stderr)
        elif ann.get("hami.io/bind-phase") != "success":
            unallocated += 1
            print(f"unallocated: {name} on {node}, bind-phase "
                  f"{ann.get('hami.io/bind-phase')!r}", file=sys.stderr)
    elif node:
        unexpected += 1
        print(f"unexpected: {name} bound to {node}", file=sys.stderr)

# Every device's registered capacity, then what every pod on its node takes.
capacity = {}
for name, n in nodes.items():
    reg = n["metadata"].get("annotations", {}).get("hami.io/node-nvidia-register")
    for d in json.loads(reg) if reg else []:
        capacity[(name, d["id"])] = (d.get("count", 1), d.get("devmem", 0), d.get("devcore", 100))
used = defaultdict(lambda: [0, 0, 0])
for name, pod in pods.items():
    node = pod["spec"].get("nodeName")
    ann = pod["metadata"].get("annotations", {})
    alloc = ann.get("hami.io/vgpu-devices-allocated")
    if not node or not alloc:
        continue
    if ann.get("hami.io/vgpu-node", node) != node:
        mismatched += 1
        print(f"mismatched: {name} on {node}, vgpu-node {ann.get('hami.io/vgpu-node')}",
              file=sys.stderr)
    for container in alloc.split(";"):
        for device in filter(None, container.split(":")):
            uuid, _type, mem, cores = device.split(",")[:4]
            if (node, uuid) not in capacity:
                mismatched += 1
                print(f"mismatched: {name} on {node} uses {uuid}", file=sys.stderr)
                continue
            u = used[(node, uuid)]
            u[0] += 1
            u[1] += int(mem)
            u[2] += int(cores)
overcommitted = 0
for dev, (slots, mem, cores) in used.items():
    cap = capacity[dev]
    if slots > cap[0] or mem > cap[1] or cores > cap[2]:
        overcommitted += 1
        print(f"overcommitted: {dev} uses {slots}/{mem}/{cores} of {cap}", file=sys.stderr)

bound_now = sum(1 for name in pending if pods.get(name, {}).get("spec", {}).get("nodeName"))
print(f"pending={len(pending)} told_bound={len(told)} bound_in_cluster={bound_now} lost={lost} "
      f"unallocated={unallocated} unexpected={unexpected} mismatched={mismatched} overcommitted={overcommitted} "
      f"devices_in_use={len(used)}")
sys.exit(1 if lost or unallocated or unexpected or mismatched or overcommitted else 0)

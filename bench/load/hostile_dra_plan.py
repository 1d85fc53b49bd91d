#!/usr/bin/env python3
"""A /v1/plan body whose DRA allocator work grows with nodes x devices (issue #44): NODES nodes,
each publishing a ResourceSlice of DEVICES devices, and one pending pod whose claim asks for a
device of a class whose CEL selector (SELECTOR_BYTES of `contains` tests) matches no device. kube-scheduler's allocator then evaluates the selector on every
device of every node before it can say the pod fits nowhere; the node group whose members are
these nodes makes the planner try its template copy too. Writes the JSON body to stdout.

    bench/load/hostile_dra_plan.py [NODES [DEVICES [SELECTOR_BYTES]]] > plan.json
"""
import json
import sys

nodes = int(sys.argv[1]) if len(sys.argv) > 1 else 200
devices = int(sys.argv[2]) if len(sys.argv) > 2 else 256
selector_bytes = int(sys.argv[3]) if len(sys.argv) > 3 else 10000
driver = "gpu.example.com"

items = []
for n in range(nodes):
    name = f"node-{n}"
    items.append({"apiVersion": "v1", "kind": "Node",
                  "metadata": {"name": name, "labels": {"pool": "gpu"}},
                  "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "110"},
                             "conditions": [{"type": "Ready", "status": "True"}]}})
    # At most 128 devices per slice (the API's limit): the pool has as many slices as needed.
    slices = (devices + 127) // 128
    for s in range(slices):
        items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                      "metadata": {"name": f"{name}-gpus-{s}"},
                      "spec": {"driver": driver, "nodeName": name,
                               "pool": {"name": name, "generation": 1,
                                        "resourceSliceCount": slices},
                               "devices": [{"name": f"gpu-{d}",
                                            "attributes": {"model": {"string": f"model-{d}"}}}
                                           for d in range(s * 128, min(devices, s * 128 + 128))]}})
# A disjunction of `contains` tests, about SELECTOR_BYTES long, none of which matches: every
# evaluation runs them all.
clause = f"device.attributes['{driver}'].model.contains('no-such-model')"
expression = " || ".join([clause] * max(1, selector_bytes // (len(clause) + 4)))
items.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
              "metadata": {"name": "picky"},
              "spec": {"selectors": [{"cel": {"expression": expression}}]}})
items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
              "metadata": {"name": "one-gpu", "namespace": "ml"},
              "spec": {"spec": {"devices": {"requests": [
                  {"name": "gpu", "exactly": {"deviceClassName": "picky"}}]}}}})
items.append({"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": "picky-pod", "namespace": "ml"},
              "spec": {"containers": [{"name": "main"}],
                       "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}})
groups = {"apiVersion": "hamisim.io/v1", "kind": "NodeGroups",
          "nodeGroups": [{"name": "gpu", "minSize": 1, "maxSize": nodes + 10,
                          "members": {"pool": "gpu"}}]}
json.dump({"cluster": {"kind": "List", "items": items}, "nodeGroups": groups}, sys.stdout,
          separators=(",", ":"))

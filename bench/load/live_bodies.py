#!/usr/bin/env python3
"""Request bodies for the live routes from a `hamisim gen` directory:
  live-requests.jsonl  one ExtenderArgs per pending pod, as kube-scheduler sends it to /filter
                       with nodeCacheCapable (the Pod and the names of every node)
  webhook.json         an AdmissionReview (admission.k8s.io/v1) of the first pending pod, as
                       the API server sends it to /webhook
  live_bodies.py GEN_DIR OUT_DIR"""
import json
import sys

gen_dir, out_dir = sys.argv[1], sys.argv[2]
with open(f"{gen_dir}/cluster.json") as f:
    items = json.load(f)["items"]
nodes = [i["metadata"]["name"] for i in items if i["kind"] == "Node"]
pending = [i for i in items if i["kind"] == "Pod" and not i["spec"].get("nodeName")]
with open(f"{out_dir}/live-requests.jsonl", "w") as f:
    for pod in pending:
        f.write(json.dumps({"Pod": pod, "Nodes": None, "NodeNames": nodes}, separators=(",", ":")))
        f.write("\n")
pod = dict(pending[0])
pod["metadata"] = {k: v for k, v in pod["metadata"].items()
                   if k not in ("uid", "resourceVersion", "creationTimestamp")}
pod.pop("status", None)
# As the API server hands it to a mutating webhook: defaulted, not yet given to HAMi.
pod["spec"] = dict(pod["spec"], schedulerName="default-scheduler")
review = {
    "kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
    "request": {
        "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "namespace": pod["metadata"].get("namespace", "default"),
        "operation": "CREATE", "object": pod,
    },
}
with open(f"{out_dir}/webhook.json", "w") as f:
    json.dump(review, f, separators=(",", ":"))
print(f"{len(pending)} pending pods, {len(nodes)} nodes")

package live

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	memory "k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/hamisim/hamisim/interop/harness"
)

// The collections `kubectl get nodes,pods,resourcequotas,resourceslices,deviceclasses,
// resourceclaims,resourceclaimtemplates -A -o json` prints, as hamisim plan --live lists them.
type collection struct{ group, version, resource string }

var draResources = []collection{
	{"", "v1", "nodes"}, {"", "v1", "pods"},
	{"resource.k8s.io", "v1", "resourceslices"}, {"resource.k8s.io", "v1", "deviceclasses"},
	{"resource.k8s.io", "v1", "resourceclaims"}, {"resource.k8s.io", "v1", "resourceclaimtemplates"},
}

// createExample creates the objects of an example's cluster.yaml (a List) on the real API
// server as the cluster's own components would leave them: pods first (an allocated claim's
// reservedFor names a pod by its server-given uid), every container with an image, nodes
// without the not-ready taint no node lifecycle controller lifts here, status written through
// the status subresource.
func createExample(t *testing.T, cp *harness.ControlPlane, example string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(example, "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var list unstructured.UnstructuredList
	j, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := list.UnmarshalJSON(j); err != nil {
		t.Fatalf("decoding %s/cluster.yaml: %v", example, err)
	}
	dyn := dynamic.NewForConfigOrDie(cp.Config)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(
		discovery.NewDiscoveryClientForConfigOrDie(cp.Config)))
	ctx := context.Background()
	for _, it := range list.Items {
		if ns := it.GetNamespace(); ns != "" {
			ensureNamespace(t, cp, ns)
		}
	}
	uids := map[string]string{}
	ordered := append(filterKind(list.Items, "Pod", true), filterKind(list.Items, "Pod", false)...)
	for i := range ordered {
		obj := ordered[i].DeepCopy()
		gvk := obj.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("no resource for %v: %v", gvk, err)
		}
		ri := dyn.Resource(m.Resource).Namespace(obj.GetNamespace())
		status, hasStatus, _ := unstructured.NestedFieldCopy(obj.Object, "status")
		if obj.GetKind() == "Pod" {
			obj.SetUID("")
			containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "containers")
			for _, c := range containers {
				if cm, ok := c.(map[string]any); ok && cm["image"] == nil {
					cm["image"] = "registry.k8s.io/pause:3.10"
				}
			}
			_ = unstructured.SetNestedSlice(obj.Object, containers, "spec", "containers")
		}
		if obj.GetKind() == "ResourceClaim" && hasStatus {
			if reserved, ok, _ := unstructured.NestedSlice(status.(map[string]any), "reservedFor"); ok {
				for _, r := range reserved {
					if rm, ok := r.(map[string]any); ok {
						rm["uid"] = uids[obj.GetNamespace()+"/"+rm["name"].(string)]
					}
				}
				_ = unstructured.SetNestedSlice(status.(map[string]any), reserved, "reservedFor")
			}
		}
		created, err := ri.Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		if obj.GetKind() == "Pod" {
			uids[obj.GetNamespace()+"/"+obj.GetName()] = string(created.GetUID())
		}
		if obj.GetKind() == "Node" {
			unstructured.RemoveNestedField(created.Object, "spec", "taints")
			if created, err = ri.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("removing node %s's not-ready taint: %v", obj.GetName(), err)
			}
		}
		if hasStatus && obj.GetKind() != "Node" {
			_ = unstructured.SetNestedField(created.Object, status, "status")
			if _, err := ri.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				t.Fatalf("writing the status of %s %s: %v", obj.GetKind(), obj.GetName(), err)
			}
		}
	}
}

// kubectlDump lists the collections as `kubectl get ... -A -o json` prints them: one List,
// each item with its apiVersion and kind, server-set fields, defaults and managedFields
// included. It returns the items and the List's JSON.
func kubectlDump(t *testing.T, ctx context.Context, dyn dynamic.Interface, rs []collection) ([]any, []byte) {
	t.Helper()
	dump := map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}}
	var items []any
	for _, r := range rs {
		got, err := dyn.Resource(schemaGVR(r.group, r.version, r.resource)).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("listing %s: %v", r.resource, err)
		}
		for _, it := range got.Items {
			items = append(items, it.Object)
		}
	}
	dump["items"] = items
	b, err := json.MarshalIndent(dump, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return items, b
}

// planJSON runs `hamisim plan` with the example's node groups and device profiles and the
// cluster flags given, and returns its JSON plan without the provenance (which names the
// inputs). Anything on stderr but the lines in `allowed` fails the test: an unknown field in
// what the real API server serves would be a hole in hamisim's field list.
func planJSON(t *testing.T, bin, example string, cluster ...string) string {
	t.Helper()
	args := append([]string{"plan"}, cluster...)
	args = append(args, "--node-groups", filepath.Join(example, "node-groups.yaml"),
		"--device-profiles", filepath.Join(example, "device-profiles.yaml"), "--output", "json")
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("hamisim %v: %v\n%s", args, err, errb.String())
	}
	if bytes.Contains(errb.Bytes(), []byte("unknown field")) {
		t.Errorf("hamisim %v warns about the API server's own fields:\n%s", args, errb.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("hamisim plan -o json: %v\n%s", err, out.String())
	}
	delete(doc, "provenance")
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

package live

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	memory "k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/hamisim/hamisim/interop/harness"
)

// TestDRAThroughRealAPIServer: the bundled DRA scenario (examples/plan-dra: a node, its
// ResourceSlice of shareable GPUs with consumable capacity, a DeviceClass with a CEL selector,
// claim templates, an allocated claim, pods) is created on the real API server, read back as
// `kubectl get ... -A -o json` prints it (server-set fields, defaults and managedFields
// included), and `hamisim plan` must decide exactly what it decides on the example file itself.
func TestDRAThroughRealAPIServer(t *testing.T) {
	bin := harness.Binary(t)
	cp := harness.StartControlPlane(t)
	example := "../../examples/plan-dra"
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
	ensureNamespace(t, cp, "ml")
	// Pods first (the allocated claim's reservedFor names a pod by its server-given uid), then
	// everything else; status is written through the status subresource, as the controllers
	// and the scheduler would.
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
			// Every container needs an image on a real API server; the example leaves it out.
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
			// TaintNodesByCondition gave it the not-ready taint, which a node lifecycle
			// controller would lift; none runs here.
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

	// `kubectl get nodes,pods,resourceslices,deviceclasses,resourceclaims,resourceclaimtemplates
	// -A -o json`: one List, each item with its apiVersion and kind.
	dump := map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}}
	var items []any
	for _, r := range []struct{ group, version, resource string }{
		{"", "v1", "nodes"}, {"", "v1", "pods"},
		{"resource.k8s.io", "v1", "resourceslices"}, {"resource.k8s.io", "v1", "deviceclasses"},
		{"resource.k8s.io", "v1", "resourceclaims"}, {"resource.k8s.io", "v1", "resourceclaimtemplates"},
	} {
		got, err := dyn.Resource(schemaGVR(r.group, r.version, r.resource)).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("listing %s: %v", r.resource, err)
		}
		for _, it := range got.Items {
			items = append(items, it.Object)
		}
	}
	dump["items"] = items
	b, _ := json.MarshalIndent(dump, "", "  ")
	dumpFile := filepath.Join(t.TempDir(), "cluster.json")
	if d := os.Getenv("HAMISIM_INTEROP_KEEP"); d != "" {
		dumpFile = filepath.Join(d, "dra-cluster.json")
	}
	if err := os.WriteFile(dumpFile, b, 0o600); err != nil {
		t.Fatal(err)
	}

	plan := func(cluster string) string {
		cmd := exec.Command(bin, "plan", "--cluster", cluster,
			"--node-groups", filepath.Join(example, "node-groups.yaml"),
			"--device-profiles", filepath.Join(example, "device-profiles.yaml"), "--output", "json")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("hamisim plan --cluster %s: %v\n%s", cluster, err, errb.String())
		}
		// The plan without its provenance, which names the input file and its digest.
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
	want := plan(filepath.Join(example, "cluster.yaml"))
	got := plan(dumpFile)
	if got != want {
		t.Fatalf("hamisim plan decides differently on what the real API server serves:\n"+
			"on the example: %s\non the server's objects (%s): %s", harness.Tail(want, 5), dumpFile, harness.Tail(got, 5))
	}
	var p struct {
		Summary string `json:"summary"`
	}
	_ = json.Unmarshal([]byte(got), &p)
	t.Logf("[dra] %d objects round-tripped through the real API server; plan: %s", len(items), p.Summary)
}

func filterKind(items []unstructured.Unstructured, kind string, want bool) []unstructured.Unstructured {
	var out []unstructured.Unstructured
	for _, it := range items {
		if (it.GetKind() == kind) == want {
			out = append(out, it)
		}
	}
	return out
}

func ensureNamespace(t *testing.T, cp *harness.ControlPlane, name string) {
	dyn := dynamic.NewForConfigOrDie(cp.Config)
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": name}}}
	if _, err := dyn.Resource(schemaGVR("", "v1", "namespaces")).Create(context.Background(), ns, metav1.CreateOptions{}); err != nil &&
		!strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
}

func schemaGVR(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

package live

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

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
	dyn := dynamic.NewForConfigOrDie(cp.Config)
	ctx := context.Background()
	createExample(t, cp, example)

	items, b := kubectlDump(t, ctx, dyn, draResources)
	dumpFile := filepath.Join(t.TempDir(), "cluster.json")
	if d := os.Getenv("HAMISIM_INTEROP_KEEP"); d != "" {
		dumpFile = filepath.Join(d, "dra-cluster.json")
	}
	if err := os.WriteFile(dumpFile, b, 0o600); err != nil {
		t.Fatal(err)
	}

	plan := func(cluster string) string {
		return planJSON(t, bin, example, "--cluster", cluster)
	}
	want := plan(filepath.Join(example, "cluster.yaml"))
	got := plan(dumpFile)
	if got != want {
		t.Fatalf("hamisim plan decides differently on what the real API server serves:\n"+
			"on the example: %s\non the server's objects (%s): %s", harness.Tail(want, 5), dumpFile, harness.Tail(got, 5))
	}
	// `hamisim plan --live` reads the same objects from the server itself (issue #47).
	if live := planJSON(t, bin, example, "--live", "--kubeconfig", cp.Kubeconfig); live != got {
		t.Fatalf("hamisim plan --live decides differently from the kubectl dump of the same objects:\n"+
			"--live: %s\n--cluster: %s", harness.Tail(live, 5), harness.Tail(got, 5))
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

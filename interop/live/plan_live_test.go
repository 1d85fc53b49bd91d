package live

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/hamisim/hamisim/interop/harness"
)

// TestPlanLiveThroughRealAPIServer (issue #47): `hamisim plan --live --kubeconfig` reads the
// real kube-apiserver (paged LISTs of Nodes, Pods, ResourceQuotas and the DRA kinds, through
// hamisim's Kubernetes client) and must plan exactly as `hamisim plan --cluster` does on the
// same objects as `kubectl get ... -A -o json` prints them. Both bundled examples are loaded
// (HAMi annotations, and DRA), with a ResourceQuota, so every collection --live reads has items.
func TestPlanLiveThroughRealAPIServer(t *testing.T) {
	bin := harness.Binary(t)
	cp := harness.StartControlPlane(t)
	ctx := context.Background()
	createExample(t, cp, "../../examples/plan")
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "gpu", Namespace: "ml"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			"limits.nvidia.com/gpumem": resource.MustParse("100000"),
			"pods":                     resource.MustParse("50"),
		}},
	}
	if _, err := cp.Client.CoreV1().ResourceQuotas("ml").Create(ctx, quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	dyn := dynamic.NewForConfigOrDie(cp.Config)
	withQuotas := append([]collection{{"", "v1", "resourcequotas"}}, draResources...)
	items, b := kubectlDump(t, ctx, dyn, withQuotas)
	dumpFile := filepath.Join(t.TempDir(), "cluster.json")
	if err := os.WriteFile(dumpFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	example := "../../examples/plan"
	live := planJSON(t, bin, example, "--live", "--kubeconfig", cp.Kubeconfig)
	piped := planJSON(t, bin, example, "--cluster", dumpFile)
	if live != piped {
		t.Fatalf("hamisim plan --live plans differently from the piped kubectl dump of the same objects:\n"+
			"--live: %s\n--cluster: %s", live, piped)
	}
	// And as on the example file itself: the API server's defaults change nothing.
	if onFile := planJSON(t, bin, example, "--cluster", filepath.Join(example, "cluster.yaml")); onFile != live {
		t.Fatalf("hamisim plan --live plans differently from the example file:\n--live: %s\nfile: %s",
			live, onFile)
	}
	var p struct {
		Summary      string `json:"summary"`
		ClusterNodes int    `json:"clusterNodes"`
		ClusterPods  int    `json:"clusterPods"`
	}
	if err := json.Unmarshal([]byte(live), &p); err != nil {
		t.Fatal(err)
	}
	if p.ClusterNodes != 2 || p.ClusterPods != 4 || p.Summary == "" {
		t.Fatalf("hamisim plan --live read %d nodes and %d pods (want 2 and 4): %s", p.ClusterNodes,
			p.ClusterPods, live)
	}
	t.Logf("[plan-live] %d objects on the real API server; --live and the kubectl dump agree: %s",
		len(items), p.Summary)
}

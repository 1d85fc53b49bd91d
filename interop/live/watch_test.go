package live

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hamisim/hamisim/interop/harness"
)

// TestWatchExpiry: hamisim's watch is cut while a GPU pod is deleted and etcd is compacted past
// the watch's resourceVersion. The real API server (its watch cache off, so watches read etcd)
// answers the re-opened watch with 410 Gone; hamisim must relist, see that the pod is gone, and
// place the next pod on the freed device.
func TestWatchExpiry(t *testing.T) {
	e := startEnv(t, envOptions{apiserverFlags: []string{"--watch-cache=false"}, proxy: true})
	s := e.scenario(t, "expiry")
	s.node("expiry-1", 1, 10, 16384, "NVIDIA-Tesla T4")
	s.waitRegistered("expiry-1")
	s.mustCreate(s.podYAML("first", 1, 16000, 0, nil))
	s.waitAllocated("first", 60*time.Second)
	before := expiredRestarts(t, e.hamisim)

	ctx := context.Background()
	e.proxy.Block()
	// Without a kubelet a bound pod deleted gracefully stays Terminating, and holds its devices,
	// for good; `kubectl delete --force --grace-period=0` removes it at once.
	zero := int64(0)
	if err := s.client.CoreV1().Pods(s.ns).Delete(ctx, "first", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		s.fatalf("deleting pod first: %v", err)
	}
	// Other writes move etcd's revision on, so the compaction covers every watch's position.
	for i := 0; i < 5; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bump-" + strconv.Itoa(i), Namespace: s.ns}}
		if _, err := s.client.CoreV1().ConfigMaps(s.ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			s.fatalf("creating a ConfigMap: %v", err)
		}
	}
	rev, err := e.cp.Compact(ctx)
	if err != nil {
		s.fatalf("compacting etcd: %v", err)
	}
	time.Sleep(time.Second) // hamisim's reconnects fail meanwhile, as on a partitioned network
	e.proxy.Unblock()
	harness.Eventually(t, 90*time.Second, "[expiry] hamisim's pod watch gets 410 and relists", func() (bool, error) {
		return expiredRestarts(t, e.hamisim) > before, nil
	})
	t.Logf("[expiry] etcd compacted at revision %d; hamisim relisted after 410", rev)

	// The freed device takes a pod as large as the deleted one's.
	s.mustCreate(s.podYAML("second", 1, 16000, 0, nil))
	pod, _ := s.waitAllocated("second", 90*time.Second)
	if pod.Spec.NodeName != "expiry-1" {
		s.fatalf("second bound to %q", pod.Spec.NodeName)
	}
}

// expiredRestarts sums hamisim_kube_client_watch_restarts_total{reason="expired"} over resources.
func expiredRestarts(t *testing.T, h *harness.Hamisim) float64 {
	m, err := h.MetricsText()
	if err != nil {
		return 0
	}
	total := 0.0
	for _, line := range strings.Split(m, "\n") {
		if strings.HasPrefix(line, "hamisim_kube_client_watch_restarts_total{") &&
			strings.Contains(line, `reason="expired"`) {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			total += v
		}
	}
	return total
}

package live

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hamisim/hamisim/interop/harness"
)

// TestLeaderElection: HAMi's chart with two replicas, each a kube-scheduler and a hamisim
// extender in one "pod" (a hostname). Leader election runs on the real Lease kube-system/
// hami-scheduler; only the replica whose kube-scheduler holds it registers nodes, filters and
// binds. The leader is killed; the follower takes over, and nothing is lost or allocated twice:
// the devices have room for 10 pods, 6 are bound before the failover and 6 asked for after it,
// so exactly 4 more may be bound.
func TestLeaderElection(t *testing.T) {
	cp := harness.StartControlPlane(t)
	plugin := harness.StartDevicePlugin(t, cp.Client)
	t.Cleanup(func() { boundThroughHamisim.Add(int64(plugin.Allocations())) })
	e := &env{cp: cp, client: cp.Client, plugin: plugin}
	replica := func(name string) *harness.Hamisim {
		return harness.StartHamisim(t, harness.HamisimOptions{Name: name, Kubeconfig: cp.Kubeconfig,
			Extra: []string{"--leader-elect", "--leader-elect-resource-name", harness.SchedulerName,
				"--leader-elect-resource-namespace", "kube-system", "--leader-elect-identity", name}})
	}
	a, b := replica("replica-a"), replica("replica-b")
	schedA := harness.StartSchedulerProcess(t, cp, "replica-a", a.URL, "kube-system")
	waitHolder(t, cp, "replica-a")
	harness.StartSchedulerProcess(t, cp, "replica-b", b.URL, "kube-system")
	e.hamisim = a
	a.RegisterWebhook(t, cp.Client) // the chart's Service selects the leader's pod

	harness.Eventually(t, 60*time.Second, "[leader] replica-a filters", func() (bool, error) { return a.Filtering(), nil })
	if b.Filtering() {
		t.Fatalf("[leader] replica-b filters while replica-a's kube-scheduler holds the Lease")
	}
	s := e.scenario(t, "leader")
	s.node("leader-1", 1, 10, 16384, "NVIDIA-Tesla T4")
	s.node("leader-2", 1, 10, 16384, "NVIDIA-Tesla T4")
	s.waitRegistered("leader-1", "leader-2")
	if n := registeredDevices(b); n != 0 {
		t.Fatalf("[leader] the follower exports %d registered devices; only the leader registers", n)
	}
	for i := 0; i < 6; i++ {
		s.mustCreate(s.podYAML(fmt.Sprintf("before-%d", i), 1, 3000, 0, nil))
	}
	for i := 0; i < 6; i++ {
		s.waitAllocated(fmt.Sprintf("before-%d", i), 90*time.Second)
	}
	if got := strings.Count(b.Log(), "Successfully bound pod to node"); got != 0 {
		t.Fatalf("[leader] the follower bound %d pods", got)
	}

	// The leader's pod dies: its kube-scheduler and its extender at once.
	schedA.Kill()
	a.Kill()
	waitHolder(t, cp, "replica-b")
	harness.Eventually(t, 60*time.Second, "[leader] replica-b filters after the failover", func() (bool, error) { return b.Filtering(), nil })
	e.hamisim = b
	b.RegisterWebhook(t, cp.Client)

	for i := 0; i < 6; i++ {
		s.mustCreate(s.podYAML(fmt.Sprintf("after-%d", i), 1, 3000, 0, nil))
	}
	var pods *corev1.PodList
	harness.Eventually(t, 3*time.Minute, "[leader] 4 of the 6 new pods bound, 2 refused for memory", func() (bool, error) {
		var err error
		pods, err = cp.Client.CoreV1().Pods("leader").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		bound, refused := 0, 0
		var pending []string
		for _, p := range pods.Items {
			if !strings.HasPrefix(p.Name, "after-") {
				continue
			}
			if _, ok := plugin.Allocation(p.UID); ok {
				bound++
			} else if ev := s.events(p.Name); strings.Contains(ev, "FailedScheduling: 0/2 nodes are available: 2 1/1 CardInsufficientMemory") {
				refused++
			} else {
				pending = append(pending, p.Name+" ("+ev+")")
			}
		}
		return bound == 4 && refused == 2, fmt.Errorf("%d bound, %d refused for memory; other: %v", bound, refused, pending)
	})
	perNode := map[string]int{}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" {
			perNode[p.Spec.NodeName]++
		}
	}
	if perNode["leader-1"] != 5 || perNode["leader-2"] != 5 {
		t.Fatalf("[leader] pods per node %v, want 5 on each (5 × 3000 MiB fill a 16384 MiB device)", perNode)
	}
	if got := strings.Count(b.Log(), "Successfully bound pod to node"); got != 4 {
		t.Fatalf("[leader] the new leader bound %d pods, want 4", got)
	}
}

// waitHolder waits until the Lease kube-system/hami-scheduler is held by a kube-scheduler on
// host prefix.
func waitHolder(t *testing.T, cp *harness.ControlPlane, prefix string) {
	harness.Eventually(t, 60*time.Second, "the Lease held by "+prefix, func() (bool, error) {
		l, err := cp.Client.CoordinationV1().Leases("kube-system").Get(context.Background(), harness.SchedulerName, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return false, err
		}
		return strings.HasPrefix(*l.Spec.HolderIdentity, prefix+"_"), fmt.Errorf("holder %q", *l.Spec.HolderIdentity)
	})
}

// registeredDevices counts the hami_gpu_memory_limit_bytes series a replica exports.
func registeredDevices(h *harness.Hamisim) int {
	m, err := h.MetricsText()
	if err != nil {
		return -1
	}
	n := 0
	for _, line := range strings.Split(m, "\n") {
		if strings.HasPrefix(line, "hami_gpu_memory_limit_bytes{") {
			n++
		}
	}
	return n
}

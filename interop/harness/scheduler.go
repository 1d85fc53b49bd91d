package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	kubeschedulertesting "k8s.io/kubernetes/cmd/kube-scheduler/app/testing"
)

// ManagedResources is the list HAMi's chart renders into the extender's managedResources
// (hami-dropin.md §4.3), each ignoredByScheduler: kube-scheduler calls the extender only for
// pods asking for one of them, and leaves their accounting to it.
var ManagedResources = []string{
	"nvidia.com/gpu", "nvidia.com/gpumem", "nvidia.com/gpucores", "nvidia.com/gpumem-percentage",
	"nvidia.com/priority", "cambricon.com/vmlu", "hygon.com/dcunum", "hygon.com/dcumem",
	"hygon.com/dcucores", "metax-tech.com/gpu", "metax-tech.com/sgpu", "metax-tech.com/vcore",
	"metax-tech.com/vmemory", "mthreads.com/vgpu", "enflame.com/drs-gcu", "enflame.com/gcu-memory",
	"enflame.com/gcu-core", "enflame.com/gcu", "kunlunxin.com/xpu", "kunlunxin.com/vxpu",
	"kunlunxin.com/vxpu-memory", "aws.amazon.com/neuron", "aws.amazon.com/neuroncore",
	"vastaitech.com/va", "birentech.com/gpu", "amd.com/gpu", "amd.com/gpumem", "amd.com/gpucores",
}

// SchedulerConfig renders the KubeSchedulerConfiguration HAMi's chart gives its kube-scheduler
// (hami-dropin.md §4.3): profile hami-scheduler, leader election on the Lease
// <namespace>/hami-scheduler, and one HTTPS extender on loopback with the filter and bind verbs,
// nodeCacheCapable, insecure TLS and a 30 s timeout. extenderURL is hamisim's listener.
func SchedulerConfig(kubeconfig, extenderURL, leaseNamespace string, leaderElect bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
leaderElection:
  leaderElect: %t
  resourceName: %s
  resourceNamespace: %s
profiles:
- schedulerName: %s
extenders:
- urlPrefix: %q
  filterVerb: filter
  bindVerb: bind
  enableHTTPS: true
  tlsConfig:
    insecure: true
  nodeCacheCapable: true
  weight: 1
  httpTimeout: 30s
  managedResources:
`, kubeconfig, leaderElect, SchedulerName, leaseNamespace, SchedulerName, extenderURL)
	for _, r := range ManagedResources {
		fmt.Fprintf(&b, "  - name: %s\n    ignoredByScheduler: true\n", r)
	}
	return b.String()
}

// StartScheduler runs the real kube-scheduler in the test process with the chart's configuration
// pointing at extenderURL. It stops when the test ends.
//
// kube-scheduler ends its process (os.Exit) whenever its leader election stops, even when asked
// to terminate, so in process it runs with leader election off and the Lease
// <leaseNamespace>/hami-scheduler is held for it by client-go's leader elector (the code
// kube-scheduler campaigns with) under an identity of kube-scheduler's form, "<hostname>_<uuid>".
// TestLeaderElection runs kube-schedulers that campaign themselves, as child processes.
func StartScheduler(t *testing.T, cp *ControlPlane, extenderURL, leaseNamespace string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scheduler-config.yaml")
	cfg := SchedulerConfig(cp.Kubeconfig, extenderURL, leaseNamespace, false)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	server, err := kubeschedulertesting.StartTestServer(t, context.Background(),
		[]string{"--config=" + path})
	if err != nil {
		t.Fatalf("starting kube-scheduler: %v", err)
	}
	t.Cleanup(server.TearDownFn)
	holdLease(t, cp, leaseNamespace)
}

// holdLease campaigns for <namespace>/hami-scheduler with kube-scheduler's lease timings (15 s,
// 10 s, 2 s) until the test ends, then releases it.
func holdLease(t *testing.T, cp *ControlPlane, namespace string) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, namespace, SchedulerName,
		cp.Client.CoreV1(), cp.Client.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: host + "_" + string(uuid.NewUUID())})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
			Lock: lock, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second,
			RetryPeriod: 2 * time.Second, ReleaseOnCancel: true, Name: SchedulerName,
			Callbacks: leaderelection.LeaderCallbacks{OnStartedLeading: func(context.Context) {},
				OnStoppedLeading: func() {}},
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

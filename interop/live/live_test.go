// Package live drives hamisim's live path with real Kubernetes: a real kube-apiserver on
// embedded etcd, the real kube-scheduler configured as HAMi's chart configures it, the API
// server calling hamisim's webhook, and `hamisim serve` (the built binary) as the extender. The
// test plays HAMi's device plugin, since there is no kubelet. Every assertion is on what the
// real components did: spec.nodeName, the annotations on the pod, Events, the node lock.
package live

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/hamisim/hamisim/interop/harness"
)

// boundThroughHamisim counts the pods the real kube-scheduler bound through hamisim's /bind in
// this run (the device plugin player saw them in bind-phase allocating, which only /bind
// writes); TestMain prints it.
var boundThroughHamisim atomic.Int64

func TestMain(m *testing.M) {
	harness.RunChildIfAsked()
	code := m.Run()
	fmt.Printf("interop: the real kube-scheduler bound %d pods through hamisim\n", boundThroughHamisim.Load())
	os.Exit(code)
}

// env is one control plane with one hamisim replica wired as HAMi's chart wires it.
type env struct {
	cp      *harness.ControlPlane
	client  kubernetes.Interface
	plugin  *harness.DevicePlugin
	hamisim *harness.Hamisim
	proxy   *harness.Proxy // only with envOptions.proxy
}

// envOptions change how startEnv wires the parts.
type envOptions struct {
	apiserverFlags []string
	// proxy puts a cuttable TCP proxy between hamisim and the API server (env.proxy).
	proxy bool
}

func startEnv(t *testing.T, o envOptions) *env {
	cp := harness.StartControlPlane(t, o.apiserverFlags...)
	e := &env{cp: cp, client: cp.Client}
	e.plugin = harness.StartDevicePlugin(t, cp.Client)
	t.Cleanup(func() { boundThroughHamisim.Add(int64(e.plugin.Allocations())) })
	kubeconfig := cp.Kubeconfig
	if o.proxy {
		e.proxy = harness.StartProxy(t, strings.TrimPrefix(cp.Config.Host, "https://"))
		cfg := rest.CopyConfig(cp.Config)
		cfg.Host = "https://" + e.proxy.Addr
		kubeconfig = filepath.Join(t.TempDir(), "kubeconfig-via-proxy")
		if err := harness.WriteKubeconfig(cfg, kubeconfig); err != nil {
			t.Fatal(err)
		}
	}
	// As the chart runs it: leader awareness on the Lease kube-system/hami-scheduler, held under
	// an identity that starts with this host's name (harness.StartScheduler).
	e.hamisim = harness.StartHamisim(t, harness.HamisimOptions{Name: "live", Kubeconfig: kubeconfig,
		Extra: []string{"--leader-elect", "--leader-elect-resource-name", harness.SchedulerName,
			"--leader-elect-resource-namespace", "kube-system"}})
	e.hamisim.RegisterWebhook(t, cp.Client)
	harness.StartScheduler(t, cp, e.hamisim.URL, "kube-system")
	harness.Eventually(t, 60*time.Second, "hamisim leads (kube-scheduler holds the Lease)",
		func() (bool, error) { return e.hamisim.Filtering(), nil })
	return e
}

// scenario is one subtest's namespace and nodes; its pods select its nodes only, so scenarios
// sharing the control plane do not see each other's devices.
type scenario struct {
	*env
	t    *testing.T
	ns   string
	name string
}

const scenarioLabel = "interop.hamisim.io/scenario"

func (e *env) scenario(t *testing.T, name string) *scenario {
	s := &scenario{env: e, t: t, ns: name, name: name}
	_, err := e.client.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("[%s] creating namespace: %v", name, err)
	}
	return s
}

func (s *scenario) fatalf(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("[%s] "+format, append([]any{s.name}, args...)...)
}

// node creates a GPU node of this scenario with n devices.
func (s *scenario) node(name string, n, count, memMiB int, model string) []harness.GPU {
	gpus := harness.GPUs(name, n, count, memMiB, model)
	node := harness.GPUNode(name, map[string]string{scenarioLabel: s.name}, gpus)
	if err := harness.CreateReadyNode(s.client, node); err != nil {
		s.fatalf("%v", err)
	}
	return gpus
}

// waitRegistered waits until hamisim has registered the scenario's nodes: the leader exports
// each registered device as hami_gpu_memory_limit_bytes{node=...}.
func (s *scenario) waitRegistered(nodes ...string) {
	for _, n := range nodes {
		harness.Eventually(s.t, 60*time.Second, fmt.Sprintf("[%s] hamisim registers node %s", s.name, n),
			func() (bool, error) {
				m, err := s.hamisim.MetricsText()
				for _, line := range strings.Split(m, "\n") {
					if strings.HasPrefix(line, "hami_gpu_memory_limit_bytes{") && strings.Contains(line, `node="`+n+`"`) {
						return true, nil
					}
				}
				return false, err
			})
	}
}

// podYAML is a pod as a user writes it for kubectl: one container asking for HAMi's resources
// in limits, selecting this scenario's nodes. The webhook is what makes it a hami-scheduler pod.
func (s *scenario) podYAML(name string, gpus, memMiB, cores int, annotations map[string]string) string {
	var ann strings.Builder
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&ann, "    %s: %q\n", k, annotations[k])
	}
	annBlock := ""
	if ann.Len() > 0 {
		annBlock = "  annotations:\n" + ann.String()
	}
	limits := fmt.Sprintf("        nvidia.com/gpu: %d\n", gpus)
	if memMiB > 0 {
		limits += fmt.Sprintf("        nvidia.com/gpumem: %d\n", memMiB)
	}
	if cores > 0 {
		limits += fmt.Sprintf("        nvidia.com/gpucores: %d\n", cores)
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
%sspec:
  nodeSelector:
    %s: %s
  containers:
  - name: cuda
    image: nvidia/cuda:12.4.1-base-ubuntu22.04
    command: ["sleep", "infinity"]
    resources:
      limits:
%s`, name, s.ns, annBlock, scenarioLabel, s.name, limits)
}

// create creates a pod from YAML, as `kubectl create -f` would.
func (s *scenario) create(doc string) (*corev1.Pod, error) {
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict([]byte(doc), &pod); err != nil {
		s.fatalf("decoding pod YAML: %v\n%s", err, doc)
	}
	return s.client.CoreV1().Pods(s.ns).Create(context.Background(), &pod, metav1.CreateOptions{})
}

func (s *scenario) mustCreate(doc string) *corev1.Pod {
	p, err := s.create(doc)
	if err != nil {
		s.fatalf("creating pod: %v", err)
	}
	return p
}

func (s *scenario) get(name string) *corev1.Pod {
	p, err := s.client.CoreV1().Pods(s.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		s.fatalf("getting pod %s: %v", name, err)
	}
	return p
}

// waitAllocated waits until the pod is bound and the device plugin player allocated it.
func (s *scenario) waitAllocated(name string, timeout time.Duration) (*corev1.Pod, harness.Allocation) {
	var pod *corev1.Pod
	var alloc harness.Allocation
	harness.Eventually(s.t, timeout, fmt.Sprintf("[%s] pod %s bound through hamisim and allocated", s.name, name),
		func() (bool, error) {
			pod = s.get(name)
			if pod.Spec.NodeName == "" {
				return false, fmt.Errorf("not bound; events: %s", s.events(name))
			}
			var ok bool
			alloc, ok = s.plugin.Allocation(pod.UID)
			return ok, fmt.Errorf("bound to %s but not allocated (bind-phase %q)", pod.Spec.NodeName,
				pod.Annotations[harness.BindPhase])
		})
	return s.get(name), alloc
}

// events returns the pod's Events as "reason: message" lines.
func (s *scenario) events(pod string) string {
	list, err := s.client.CoreV1().Events(s.ns).List(context.Background(), metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + pod})
	if err != nil {
		return "(events: " + err.Error() + ")"
	}
	var out []string
	for _, e := range list.Items {
		out = append(out, e.Reason+": "+e.Message)
	}
	return strings.Join(out, " | ")
}

// waitEvent waits for an Event of the pod with this reason whose message contains want.
func (s *scenario) waitEvent(pod, reason, want string) string {
	var found string
	harness.Eventually(s.t, 60*time.Second, fmt.Sprintf("[%s] %s event on pod %s containing %q", s.name, reason, pod, want),
		func() (bool, error) {
			for _, line := range strings.Split(s.events(pod), " | ") {
				if strings.HasPrefix(line, reason+": ") && strings.Contains(line, want) {
					found = line
					return true, nil
				}
			}
			return false, fmt.Errorf("events: %s", s.events(pod))
		})
	return found
}

// staysPending waits for kube-scheduler's FailedScheduling Event of the pod carrying hamisim's
// reason, checks that the pod is not bound, and returns the Event.
func (s *scenario) staysPending(pod, reason string) string {
	ev := s.waitEvent(pod, "FailedScheduling", reason)
	if p := s.get(pod); p.Spec.NodeName != "" {
		s.fatalf("%s was bound to %s", pod, p.Spec.NodeName)
	}
	return ev
}

func (s *scenario) nodeAnnotation(node, key string) string {
	n, err := s.client.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	if err != nil {
		s.fatalf("getting node %s: %v", node, err)
	}
	return n.Annotations[key]
}

func TestLive(t *testing.T) {
	e := startEnv(t, envOptions{})
	t.Run("WebhookFilterBind", e.webhookFilterBind)
	t.Run("DeviceExhaustion", e.deviceExhaustion)
	t.Run("ResourceQuota", e.resourceQuota)
	t.Run("UnknownGPUType", e.unknownGPUType)
	t.Run("ManyPodsAtOnce", e.manyPodsAtOnce)
}

// webhookFilterBind: pods created from YAML are mutated by the webhook, filtered and bound
// through hamisim, carry HAMi v2.10's annotations byte for byte, and the node lock is set for
// the device plugin and released by it before the next bind.
func (e *env) webhookFilterBind(t *testing.T) {
	s := e.scenario(t, "basic")
	gpus := s.node("basic-1", 1, 10, 16384, "NVIDIA-Tesla T4")
	s.waitRegistered("basic-1")

	for i, name := range []string{"cuda-1", "cuda-2"} {
		created := s.mustCreate(s.podYAML(name, 1, 4000, 30, nil))
		if created.Spec.SchedulerName != harness.SchedulerName {
			s.fatalf("the webhook did not set schedulerName on %s: %q", name, created.Spec.SchedulerName)
		}
		pod, alloc := s.waitAllocated(name, 60*time.Second)
		if pod.Spec.NodeName != "basic-1" {
			s.fatalf("%s bound to %q", name, pod.Spec.NodeName)
		}
		want := gpus[0].ID + ",NVIDIA,4000,30:;"
		a := alloc.Annotations
		for key, v := range map[string]string{
			harness.VGPUNode: "basic-1", harness.ToAllocate: want, harness.Allocated: want,
			harness.BindPhase: "allocating",
		} {
			if a[key] != v {
				s.fatalf("%s: annotation %s at bind is %q, want %q (all: %v)", name, key, a[key], v, a)
			}
		}
		for _, key := range []string{harness.VGPUTime, harness.BindTime} {
			if _, err := strconv.ParseInt(a[key], 10, 64); err != nil {
				s.fatalf("%s: annotation %s is %q, not Unix seconds", name, key, a[key])
			}
		}
		if pod.Labels[harness.VGPUNode] != "basic-1" {
			s.fatalf("%s: label %s is %q", name, harness.VGPUNode, pod.Labels[harness.VGPUNode])
		}
		if !strings.HasSuffix(alloc.Lock, ",basic,"+name) {
			s.fatalf("%s: node lock at allocation was %q, want one naming basic/%s", name, alloc.Lock, name)
		}
		if _, err := time.Parse(time.RFC3339, strings.SplitN(alloc.Lock, ",", 2)[0]); err != nil {
			s.fatalf("%s: node lock %q does not start with an RFC 3339 time: %v", name, alloc.Lock, err)
		}
		// The device plugin took the to-allocate entry and released the lock.
		harness.Eventually(t, 30*time.Second, fmt.Sprintf("[basic] %s allocation finished", name), func() (bool, error) {
			p := s.get(name)
			return p.Annotations[harness.BindPhase] == "success" && p.Annotations[harness.ToAllocate] == ";;" &&
				s.nodeAnnotation("basic-1", harness.LockAnnotation) == "", nil
		})
		s.waitEvent(name, "BindingSucceed", "")
		t.Logf("[basic] pod %d (%s) bound to basic-1 with %s", i+1, name, a[harness.Allocated])
	}
}

// deviceExhaustion: when the devices are full the extra pod stays Pending and kube-scheduler's
// FailedScheduling Event carries hamisim's reason.
func (e *env) deviceExhaustion(t *testing.T) {
	s := e.scenario(t, "exhaustion")
	s.node("exhaustion-1", 1, 10, 8000, "NVIDIA-Tesla T4")
	s.waitRegistered("exhaustion-1")
	s.mustCreate(s.podYAML("fits", 1, 6000, 0, nil))
	s.waitAllocated("fits", 60*time.Second)
	s.mustCreate(s.podYAML("too-much", 1, 6000, 0, nil))
	t.Logf("[exhaustion] %s", s.staysPending("too-much", "CardInsufficientMemory"))
}

// resourceQuota: a ResourceQuota on HAMi's device memory: the first pod fits it and is bound, the
// second would exceed it and the webhook denies it at admission, naming the limit.
func (e *env) resourceQuota(t *testing.T) {
	s := e.scenario(t, "quota")
	s.node("quota-1", 2, 10, 16384, "NVIDIA-Tesla T4")
	s.waitRegistered("quota-1")
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "gpu-memory", Namespace: s.ns},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"limits.nvidia.com/gpumem": resource.MustParse("6000")}}}
	if _, err := s.client.CoreV1().ResourceQuotas(s.ns).Create(context.Background(), q, metav1.CreateOptions{}); err != nil {
		s.fatalf("creating the ResourceQuota: %v", err)
	}
	// hamisim reads the quota from its watch; a pod created before that would not be checked.
	harness.Eventually(t, 30*time.Second, "[quota] hamisim sees the ResourceQuota", func() (bool, error) {
		m, err := s.hamisim.MetricsText()
		return err == nil && strings.Contains(m, `hami_resource_quota_limit{`) &&
			strings.Contains(m, `namespace="quota"`), err
	})
	s.mustCreate(s.podYAML("within", 1, 4000, 0, nil))
	s.waitAllocated("within", 60*time.Second)
	_, err := s.create(s.podYAML("beyond", 1, 4000, 0, nil))
	if err == nil || !strings.Contains(err.Error(), "exceeding resource quota") {
		s.fatalf("creating a pod beyond the quota: got %v, want the webhook's denial", err)
	}
	t.Logf("[quota] %v", err)
}

// unknownGPUType: a pod asking for a GPU type no node has stays Pending with HAMi's reason.
func (e *env) unknownGPUType(t *testing.T) {
	s := e.scenario(t, "gputype")
	s.node("gputype-1", 1, 10, 16384, "NVIDIA-Tesla T4")
	s.waitRegistered("gputype-1")
	s.mustCreate(s.podYAML("wants-a100", 1, 1000, 0, map[string]string{"nvidia.com/use-gputype": "A100"}))
	t.Logf("[gputype] %s", s.staysPending("wants-a100", "CardTypeMismatch"))
}

// manyPodsAtOnce: 200 pods created at once on 50 nodes: each is bound exactly once, and no
// device holds more memory or more pods than it registered (checked from the pods' annotations).
func (e *env) manyPodsAtOnce(t *testing.T) {
	s := e.scenario(t, "many")
	const nodes, pods, perGPU, memMiB, ask = 50, 200, 10, 16384, 3000
	var names []string
	for i := 0; i < nodes; i++ {
		name := fmt.Sprintf("many-%02d", i)
		s.node(name, 2, perGPU, memMiB, "NVIDIA-A10")
		names = append(names, name)
	}
	s.waitRegistered(names...)
	errs := make(chan error, pods)
	for i := 0; i < pods; i++ {
		go func(i int) {
			_, err := s.create(s.podYAML(fmt.Sprintf("p-%03d", i), 1, ask, 0, nil))
			errs <- err
		}(i)
	}
	for i := 0; i < pods; i++ {
		if err := <-errs; err != nil {
			s.fatalf("creating pods: %v", err)
		}
	}
	start := time.Now()
	var list *corev1.PodList
	harness.Eventually(t, 5*time.Minute, "[many] every pod bound and allocated", func() (bool, error) {
		var err error
		list, err = s.client.CoreV1().Pods(s.ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		done := 0
		for _, p := range list.Items {
			if _, ok := s.plugin.Allocation(p.UID); ok && p.Spec.NodeName != "" {
				done++
			}
		}
		return done == pods, fmt.Errorf("%d of %d allocated", done, pods)
	})
	usedMem, usedCount := map[string]int{}, map[string]int{}
	for _, p := range list.Items {
		alloc, _ := s.plugin.Allocation(p.UID)
		if alloc.Node != p.Spec.NodeName || p.Annotations[harness.VGPUNode] != p.Spec.NodeName {
			s.fatalf("pod %s: bound to %s, allocated on %s, annotated %s", p.Name, p.Spec.NodeName,
				alloc.Node, p.Annotations[harness.VGPUNode])
		}
		for _, dev := range strings.Split(strings.TrimSuffix(p.Annotations[harness.Allocated], ";"), ":") {
			if dev == "" {
				continue
			}
			f := strings.Split(dev, ",")
			if len(f) != 4 || !strings.HasPrefix(f[0], "GPU-"+p.Spec.NodeName+"-") {
				s.fatalf("pod %s on %s: allocated device %q is not one of that node's", p.Name, p.Spec.NodeName, dev)
			}
			mem, _ := strconv.Atoi(f[2])
			usedMem[f[0]] += mem
			usedCount[f[0]]++
		}
	}
	for dev, mem := range usedMem {
		if mem > memMiB || usedCount[dev] > perGPU {
			s.fatalf("device %s over-committed: %d MiB of %d, %d pods of %d", dev, mem, memMiB, usedCount[dev], perGPU)
		}
	}
	t.Logf("[many] %d pods bound on %d devices in %v", pods, len(usedMem), time.Since(start).Round(time.Millisecond))
}

package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// HAMi's annotation keys (hami-scheduler-core.md §3).
const (
	RegisterAnnotation  = "hami.io/node-nvidia-register"
	HandshakeAnnotation = "hami.io/node-handshake"
	LockAnnotation      = "hami.io/mutex.lock"
	VGPUNode            = "hami.io/vgpu-node"
	VGPUTime            = "hami.io/vgpu-time"
	ToAllocate          = "hami.io/vgpu-devices-to-allocate"
	Allocated           = "hami.io/vgpu-devices-allocated"
	BindPhase           = "hami.io/bind-phase"
	BindTime            = "hami.io/bind-time"
)

// GPU is one device as HAMi's NVIDIA device plugin registers it (DeviceInfo's JSON keys).
type GPU struct {
	ID      string `json:"id"`
	Index   int    `json:"index"`
	Count   int    `json:"count"`
	Devmem  int    `json:"devmem"`
	Devcore int    `json:"devcore"`
	Type    string `json:"type"`
	Numa    int    `json:"numa"`
	Mode    string `json:"mode"`
	Health  bool   `json:"health"`
}

// GPUs returns n healthy hami-core devices of one model named <node>-gpu-<i>.
func GPUs(node string, n, count, memMiB int, model string) []GPU {
	out := make([]GPU, n)
	for i := range out {
		out[i] = GPU{ID: fmt.Sprintf("GPU-%s-%d", node, i), Index: i, Count: count, Devmem: memMiB,
			Devcore: 100, Type: model, Mode: "hami-core", Health: true}
	}
	return out
}

// GPUNode is a Node as a kubelet with HAMi's device plugin reports it: Ready, allocatable CPU,
// memory, pods and nvidia.com/gpu (count × devices), and the register annotation.
func GPUNode(name string, labels map[string]string, gpus []GPU) *corev1.Node {
	reg, _ := json.Marshal(gpus)
	split := 0
	for _, g := range gpus {
		split += g.Count
	}
	alloc := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("512Gi"),
		corev1.ResourcePods:   resource.MustParse("250"),
		"nvidia.com/gpu":      *resource.NewQuantity(int64(split), resource.DecimalSI),
	}
	l := map[string]string{"kubernetes.io/hostname": name, "gpu": "on"}
	for k, v := range labels {
		l[k] = v
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l, Annotations: map[string]string{
			RegisterAnnotation:  string(reg),
			HandshakeAnnotation: "Reported_" + time.Now().Format(time.DateTime),
		}},
		Status: corev1.NodeStatus{
			Capacity: alloc, Allocatable: alloc,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
				LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(), Reason: "KubeletReady"}},
		},
	}
}

// CreateReadyNode creates the node and then takes off the not-ready taint that the API server's
// TaintNodesByCondition admission puts on every new node; without a node lifecycle controller
// nothing else would, and kube-scheduler would never place a pod there.
func CreateReadyNode(client kubernetes.Interface, node *corev1.Node) error {
	ctx := context.Background()
	created, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating node %s: %w", node.Name, err)
	}
	for attempt := 0; len(created.Spec.Taints) > 0; attempt++ {
		created.Spec.Taints = nil
		_, err := client.CoreV1().Nodes().Update(ctx, created, metav1.UpdateOptions{})
		if err == nil {
			return nil
		}
		if !apierrors.IsConflict(err) || attempt == 10 {
			return fmt.Errorf("removing node %s's not-ready taint: %w", node.Name, err)
		}
		if created, err = client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// Allocation is what the device plugin saw when it allocated a pod's devices: the pod's
// annotations as /bind left them, and the node lock it released.
type Allocation struct {
	Node        string
	Annotations map[string]string
	Lock        string // the hami.io/mutex.lock value found on the node ("" if none)
}

// DevicePlugin plays HAMi's device plugin on every node (there is no kubelet): it answers the
// scheduler's handshake and, for each pod /bind left in bind-phase allocating, does what
// Allocate does on the wire (hami-device-model.md §4.6): pops every container's entry from
// hami.io/vgpu-devices-to-allocate, sets hami.io/bind-phase: success and releases the node lock.
type DevicePlugin struct {
	client kubernetes.Interface
	t      testing.TB

	mu          sync.Mutex
	allocations map[types.UID]Allocation
	handshakes  int
}

// StartDevicePlugin starts the player; it stops when the test ends.
func StartDevicePlugin(t testing.TB, client kubernetes.Interface) *DevicePlugin {
	p := &DevicePlugin{client: client, t: t, allocations: map[types.UID]Allocation{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f := informers.NewSharedInformerFactory(client, 0)
	nodes := f.Core().V1().Nodes().Informer()
	pods := f.Core().V1().Pods().Informer()
	onNode := func(obj interface{}) {
		if n, ok := obj.(*corev1.Node); ok {
			p.answerHandshake(ctx, n)
		}
	}
	onPod := func(obj interface{}) {
		if pod, ok := obj.(*corev1.Pod); ok {
			p.allocate(ctx, pod)
		}
	}
	_, _ = nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onNode,
		UpdateFunc: func(_, n interface{}) { onNode(n) }})
	_, _ = pods.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onPod,
		UpdateFunc: func(_, n interface{}) { onPod(n) }})
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	return p
}

// Allocation returns what the plugin saw for pod uid, if it allocated it.
func (p *DevicePlugin) Allocation(uid types.UID) (Allocation, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a, ok := p.allocations[uid]
	return a, ok
}

// Allocations returns how many pods the plugin allocated.
func (p *DevicePlugin) Allocations() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.allocations)
}

// Handshakes returns how many scheduler handshakes the plugin answered.
func (p *DevicePlugin) Handshakes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.handshakes
}

func (p *DevicePlugin) answerHandshake(ctx context.Context, n *corev1.Node) {
	if !strings.HasPrefix(n.Annotations[HandshakeAnnotation], "Requesting_") {
		return
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, HandshakeAnnotation,
		"Reported_"+time.Now().Format(time.DateTime))
	if _, err := p.client.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, []byte(patch),
		metav1.PatchOptions{}); err == nil {
		p.mu.Lock()
		p.handshakes++
		p.mu.Unlock()
	}
}

func (p *DevicePlugin) allocate(ctx context.Context, pod *corev1.Pod) {
	if pod.Spec.NodeName == "" || pod.Annotations[BindPhase] != "allocating" {
		return
	}
	p.mu.Lock()
	_, done := p.allocations[pod.UID]
	p.mu.Unlock()
	if done {
		return
	}
	node, err := p.client.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		return
	}
	a := Allocation{Node: pod.Spec.NodeName, Annotations: map[string]string{},
		Lock: node.Annotations[LockAnnotation]}
	for k, v := range pod.Annotations {
		a.Annotations[k] = v
	}
	// One kubelet Allocate per container with devices, each popping the first non-empty entry.
	remaining := pod.Annotations[ToAllocate]
	for strings.Contains(remaining, "NVIDIA") {
		remaining = popFirstContainer(remaining)
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, ToAllocate, remaining)
		if _, err := p.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType,
			[]byte(patch), metav1.PatchOptions{}); err != nil {
			return
		}
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"success"}}}`, BindPhase)
	if _, err := p.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType,
		[]byte(patch), metav1.PatchOptions{}); err != nil {
		return
	}
	p.releaseLock(ctx, pod)
	p.mu.Lock()
	p.allocations[pod.UID] = a
	p.mu.Unlock()
}

// popFirstContainer is the device plugin's rewrite of the to-allocate value: decode (keeping the
// trailing empty entry), empty the first non-empty container entry, encode again.
func popFirstContainer(v string) string {
	entries := strings.Split(v, ";")
	for i, e := range entries {
		if e != "" {
			entries[i] = ""
			break
		}
	}
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e)
		b.WriteString(";")
	}
	return b.String()
}

// releaseLock is HAMi's ReleaseNodeLock with the owner check: remove the lock only while it
// still names this pod, with the node's resourceVersion, retrying on conflicts.
func (p *DevicePlugin) releaseLock(ctx context.Context, pod *corev1.Pod) {
	suffix := "," + pod.Namespace + "," + pod.Name
	for attempt := 0; attempt < 20; attempt++ {
		node, err := p.client.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			return
		}
		if !strings.HasSuffix(node.Annotations[LockAnnotation], suffix) {
			return
		}
		patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q,"annotations":{%q:null}}}`,
			node.ResourceVersion, LockAnnotation)
		_, err = p.client.CoreV1().Nodes().Patch(ctx, node.Name, types.MergePatchType, []byte(patch),
			metav1.PatchOptions{})
		if err == nil || !apierrors.IsConflict(err) {
			return
		}
	}
}

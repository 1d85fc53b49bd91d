package differential

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

var peerIterations = flag.Int("peer-iterations", 0,
	"time each peer scenario this many times on both allocators and print the table (0: only compare the answers)")

// peerScenario is one input of the side-by-side benchmark: what a DRA-managed HAMi cluster
// asks the allocator for each node kube-scheduler's Filter looks at.
type peerScenario struct {
	name, what string
	in         draCaseInput
}

// peerScenarios are the benchmark's inputs (issue #49): HAMi-shaped shareable GPUs with
// consumable capacity, partitionable devices drawing from shared counters, a pod that fits
// nowhere on the node (the whole search), and a node among 1,000 nodes' slices.
func peerScenarios() []peerScenario {
	return []peerScenario{
		{"shared-gpus", "8 shareable GPUs (memory, cores), 40 shares held; 2 GPUs × 10Gi/20 cores",
			sharedGPUs(1, 10)},
		{"shared-gpus-full", "the same node; 2 GPUs × 45Gi: fits nowhere (every choice tried)",
			sharedGPUs(1, 45)},
		{"partitionable", "8 GPUs × 7 partitions on shared counters, 24 held; 4 × 1g.5gb",
			partitionable()},
		{"shared-gpus-1000-nodes", "shared-gpus on one of 1,000 nodes' slices", sharedGPUs(1000, 10)},
	}
}

// TestDRAPeerScenarios checks that both allocators agree on the benchmark's inputs; with
// -peer-iterations it also times each (wall time per decision, decoding excluded) and prints
// the side-by-side table bench/run-all keeps.
func TestDRAPeerScenarios(t *testing.T) {
	var args []string
	if *peerIterations > 0 {
		args = []string{"--time-iterations", fmt.Sprint(*peerIterations)}
	}
	tool := startAllocatorTool(t, args...)
	var rows []string
	for i, s := range peerScenarios() {
		want := realAllocate(s.in)
		line := tool.askRaw(t, i, s.in)
		if d := compareOutcomes(want, hamisimOutcome(line)); d != "" {
			t.Errorf("scenario %s: %s", s.name, d)
			continue
		}
		if *peerIterations == 0 {
			continue
		}
		// Alternating, so that a busy moment of the machine falls on both; medians of the runs.
		var ours, theirs, ratios []float64
		for r := 0; r < peerRuns; r++ {
			if r > 0 {
				line = tool.askRaw(t, i, s.in)
			}
			var timing struct {
				NsPerAllocation float64 `json:"nsPerAllocation"`
			}
			if err := json.Unmarshal(line, &timing); err != nil || timing.NsPerAllocation <= 0 {
				t.Fatalf("scenario %s: no timing in hamisim's answer %s", s.name, line)
			}
			kubernetes := timeRealAllocate(t, s.in, *peerIterations)
			ours = append(ours, timing.NsPerAllocation/1e3)
			theirs = append(theirs, kubernetes/1e3)
			ratios = append(ratios, kubernetes/timing.NsPerAllocation)
		}
		sort.Float64s(ratios)
		rows = append(rows, fmt.Sprintf("PEER | dra-%s | %s | %s | %.1f | %.1f | %.2f (%.2f–%.2f)", s.name, s.what,
			want.kind, median(theirs), median(ours), median(ratios), ratios[0], ratios[len(ratios)-1]))
	}
	if len(rows) > 0 {
		fmt.Printf("PEER | scenario | input | outcome | Kubernetes µs | hamisim µs | ratio, median of %d (range)\n", peerRuns)
		fmt.Println(strings.Join(rows, "\n"))
	}
}

// timeRealAllocate is Kubernetes' Allocate for the node, n times on one allocator (built once,
// as kube-scheduler builds it per pod), in ns per decision; the garbage it leaves is collected
// inside the timing, as it would be in kube-scheduler.
func timeRealAllocate(t *testing.T, in draCaseInput, n int) float64 {
	alloc, err := realAllocator(in)
	if err != nil {
		t.Fatalf("building Kubernetes' allocator: %v", err)
	}
	ctx := context.Background()
	runtime.GC()
	start := time.Now()
	for i := 0; i < n; i++ {
		if _, err := alloc.Allocate(ctx, in.Node, in.Claims); err != nil {
			t.Fatalf("Kubernetes' allocator: %v", err)
		}
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

// peerRuns is how many times each scenario is timed on each side.
const peerRuns = 5

func median(v []float64) float64 {
	c := append([]float64(nil), v...)
	sort.Float64s(c)
	if len(c)%2 == 1 {
		return c[len(c)/2]
	}
	return (c[len(c)/2-1] + c[len(c)/2]) / 2
}

func gi(n int64) *resource.Quantity { return resource.NewQuantity(n<<30, resource.BinarySI) }
func count(n int64) *resource.Quantity {
	return resource.NewQuantity(n, resource.DecimalSI)
}

// sharedGPUs: `nodes` nodes with one slice each of 8 GPUs that HAMi would share (memory 80Gi
// in 1Gi steps, 100 cores), 5 shares of 8Gi and 10 cores held on each GPU of node-0, and a pod
// asking for 2 A100 GPUs with memGi and 20 cores each, on node-0.
func sharedGPUs(nodes int, memGi int64) draCaseInput {
	in := draCaseInput{Node: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0",
		Labels: map[string]string{"kubernetes.io/hostname": "node-0"}}}}
	for n := 0; n < nodes; n++ {
		node := fmt.Sprintf("node-%d", n)
		slice := &resourceapi.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: node + "-gpus"},
			Spec: resourceapi.ResourceSliceSpec{Driver: driver, NodeName: ptr.To(node),
				Pool: resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1}},
		}
		for g := 0; g < 8; g++ {
			slice.Spec.Devices = append(slice.Spec.Devices, resourceapi.Device{
				Name:                     fmt.Sprintf("gpu-%d", g),
				AllowMultipleAllocations: ptr.To(true),
				Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
					"model": {StringValue: ptr.To("A100")},
					"index": {IntValue: ptr.To(int64(g))},
				},
				Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
					"memory": {Value: *gi(80), RequestPolicy: &resourceapi.CapacityRequestPolicy{
						Default:    gi(1),
						ValidRange: &resourceapi.CapacityRequestPolicyRange{Min: gi(1), Step: gi(1)}}},
					"cores": {Value: *count(100), RequestPolicy: &resourceapi.CapacityRequestPolicy{
						Default:    count(1),
						ValidRange: &resourceapi.CapacityRequestPolicyRange{Min: count(1), Step: count(1)}}},
				},
			})
		}
		in.Slices = append(in.Slices, slice)
	}
	in.Classes = []*resourceapi.DeviceClass{class("gpu", fmt.Sprintf("device.driver == %q", driver))}
	for g := 0; g < 8; g++ {
		for s := 0; s < 5; s++ {
			id := g*5 + s
			in.Allocated = append(in.Allocated, heldClaim(id, resourceapi.DeviceRequestAllocationResult{
				Request: "gpu", Driver: driver, Pool: "node-0", Device: fmt.Sprintf("gpu-%d", g),
				ShareID: ptr.To(types.UID(fmt.Sprintf("00000000-0000-4000-9000-%012d", id))),
				ConsumedCapacity: map[resourceapi.QualifiedName]resource.Quantity{
					"memory": *gi(8), "cores": *count(10)},
			}))
		}
	}
	in.Claims = []*resourceapi.ResourceClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-gpus", Namespace: "default", UID: "pod-gpus"},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
			Name: "gpu", Exactly: &resourceapi.ExactDeviceRequest{
				DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 2,
				Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{
					Expression: fmt.Sprintf("device.attributes[%q].model == 'A100'", driver)}}},
				Capacity: &resourceapi.CapacityRequirements{Requests: map[resourceapi.QualifiedName]resource.Quantity{
					"memory": *gi(memGi), "cores": *count(20)}},
			}}}}},
	}}
	return in
}

// partitionable: one node whose pool has a slice of 8 counter sets (one per GPU: 7 compute
// slices, 40Gi) and a slice of devices drawing from them: per GPU the whole GPU and 7 1g.5gb
// partitions; 3 partitions of each GPU held; a pod asking for 4 1g.5gb partitions.
func partitionable() draCaseInput {
	in := draCaseInput{Node: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0",
		Labels: map[string]string{"kubernetes.io/hostname": "node-0"}}}}
	pool := resourceapi.ResourcePool{Name: "node-0", Generation: 1, ResourceSliceCount: 2}
	counters := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "node-0-counters"},
		Spec:       resourceapi.ResourceSliceSpec{Driver: driver, NodeName: ptr.To("node-0"), Pool: pool},
	}
	devices := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "node-0-devices"},
		Spec:       resourceapi.ResourceSliceSpec{Driver: driver, NodeName: ptr.To("node-0"), Pool: pool},
	}
	profile := func(p string) map[resourceapi.QualifiedName]resourceapi.DeviceAttribute {
		return map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{"profile": {StringValue: ptr.To(p)}}
	}
	for g := 0; g < 8; g++ {
		set := fmt.Sprintf("gpu-%d-counters", g)
		counters.Spec.SharedCounters = append(counters.Spec.SharedCounters, resourceapi.CounterSet{
			Name: set, Counters: map[string]resourceapi.Counter{"slices": {Value: *count(7)}, "memory": {Value: *gi(40)}}})
		devices.Spec.Devices = append(devices.Spec.Devices, resourceapi.Device{
			Name: fmt.Sprintf("gpu-%d", g), Attributes: profile("7g.40gb"),
			ConsumesCounters: []resourceapi.DeviceCounterConsumption{{CounterSet: set,
				Counters: map[string]resourceapi.Counter{"slices": {Value: *count(7)}, "memory": {Value: *gi(40)}}}},
		})
		for p := 0; p < 7; p++ {
			name := fmt.Sprintf("gpu-%d-1g-%d", g, p)
			devices.Spec.Devices = append(devices.Spec.Devices, resourceapi.Device{
				Name: name, Attributes: profile("1g.5gb"),
				ConsumesCounters: []resourceapi.DeviceCounterConsumption{{CounterSet: set,
					Counters: map[string]resourceapi.Counter{"slices": {Value: *count(1)}, "memory": {Value: *gi(5)}}}},
			})
			if p < 3 {
				in.Allocated = append(in.Allocated, heldClaim(g*7+p, resourceapi.DeviceRequestAllocationResult{
					Request: "mig", Driver: driver, Pool: "node-0", Device: name}))
			}
		}
	}
	in.Slices = []*resourceapi.ResourceSlice{counters, devices}
	in.Classes = []*resourceapi.DeviceClass{class("gpu", fmt.Sprintf("device.driver == %q", driver))}
	in.Claims = []*resourceapi.ResourceClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-mig", Namespace: "default", UID: "pod-mig"},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
			Name: "mig", Exactly: &resourceapi.ExactDeviceRequest{
				DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 4,
				Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{
					Expression: fmt.Sprintf("device.attributes[%q].profile == '1g.5gb'", driver)}}},
			}}}}},
	}}
	return in
}

// heldClaim is an allocated claim holding one result, as the cluster already has it.
func heldClaim(id int, res resourceapi.DeviceRequestAllocationResult) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("held-%d", id), Namespace: "default",
			UID: types.UID(fmt.Sprintf("held-%d", id))},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
			Name: res.Request, Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu",
				AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}}}}},
		Status: resourceapi.ResourceClaimStatus{Allocation: &resourceapi.AllocationResult{
			Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{res}}}},
	}
}

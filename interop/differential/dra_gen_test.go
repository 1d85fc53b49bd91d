package differential

import (
	"fmt"
	"math/rand/v2"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// generateDRACase makes one valid input: node-0 and its pools (some slices for other nodes, for
// every node, or missing so that a pool is incomplete; some pools split over slices that target
// different nodes), devices with attributes and memory, some shareable with a request policy,
// some partitionable (consuming shared counters of a counter-set slice of their pool, a few
// with compatibility groups), taints with every effect and DeviceTaintRules, a few classes
// with CEL selectors, claims already allocated, and one pod's claims with counts, All,
// selectors, tolerations, capacity requests, constraints and prioritized lists.
func generateDRACase(r *rand.Rand) draCaseInput {
	in := draCaseInput{Node: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0",
		Labels: map[string]string{"kubernetes.io/hostname": "node-0", "zone": pick(r, "a", "b")}}}}

	type dev struct {
		pool, name string
		shared     bool
		memGi      int64
	}
	var devices []dev
	scopeOf := func(scope int, slice *resourceapi.ResourceSlice) {
		switch {
		case scope <= 6:
			slice.Spec.NodeName = ptr.To("node-0")
		case scope == 7:
			slice.Spec.NodeName = ptr.To("node-1")
		case scope == 8:
			slice.Spec.AllNodes = ptr.To(true)
		default:
			slice.Spec.NodeSelector = &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn,
					Values: []string{pick(r, "a", "b")}}}}}}
		}
	}
	taintEffects := []resourceapi.DeviceTaintEffect{resourceapi.DeviceTaintEffectNoSchedule,
		resourceapi.DeviceTaintEffectNoExecute, resourceapi.DeviceTaintEffectNone}
	pools := 1 + r.IntN(3)
	for p := 0; p < pools; p++ {
		pool := fmt.Sprintf("pool-%d", p)
		slices := 1 + r.IntN(2)
		// Partitionable devices: a slice of its own holds the pool's counter sets (devices and
		// counter sets may not share a slice from 1.35), and the devices of every other slice
		// consume them.
		counters := r.IntN(4) == 0
		counterSets := 0
		if counters {
			counterSets = 1 + r.IntN(2)
			slices++
		}
		present := slices
		if r.IntN(10) == 0 {
			present = slices - 1 // an incomplete pool: a slice not published yet
		}
		scope := r.IntN(10) // 0-6: this node, 7: another node, 8: all nodes, 9: a node selector
		// A pool split over slices that target different nodes: each slice its own scope.
		mixed := r.IntN(5) == 0
		for s := 0; s < present; s++ {
			slice := &resourceapi.ResourceSlice{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-slice-%d", pool, s)},
				Spec: resourceapi.ResourceSliceSpec{
					Driver: driver,
					Pool:   resourceapi.ResourcePool{Name: pool, Generation: 1, ResourceSliceCount: int64(slices)},
				},
			}
			if mixed {
				scopeOf(r.IntN(10), slice)
			} else {
				scopeOf(scope, slice)
			}
			if counters && s == slices-1 {
				for c := 0; c < counterSets; c++ {
					slice.Spec.SharedCounters = append(slice.Spec.SharedCounters, resourceapi.CounterSet{
						Name: fmt.Sprintf("set-%d", c),
						Counters: map[string]resourceapi.Counter{
							"memory": {Value: *resource.NewQuantity(int64(8*(2+r.IntN(8)))<<30, resource.BinarySI)},
							"slots":  {Value: *resource.NewQuantity(int64(1+r.IntN(4)), resource.DecimalSI)},
						}})
				}
				in.Slices = append(in.Slices, slice)
				continue
			}
			n := 1 + r.IntN(4)
			for d := 0; d < n; d++ {
				name := fmt.Sprintf("gpu-%d-%d", s, d)
				memGi := int64(8 * (1 + r.IntN(10)))
				device := resourceapi.Device{
					Name: name,
					Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
						"type":  {StringValue: ptr.To(pick(r, "a", "b", "c"))},
						"index": {IntValue: ptr.To(int64(d))},
					},
					Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
						"memory": {Value: *resource.NewQuantity(memGi<<30, resource.BinarySI)},
					},
				}
				shared := r.IntN(3) == 0
				if shared {
					device.AllowMultipleAllocations = ptr.To(true)
					c := device.Capacity["memory"]
					step := int64(1) << (29 + r.IntN(2)) // 512Mi or 1Gi
					c.RequestPolicy = &resourceapi.CapacityRequestPolicy{
						Default: resource.NewQuantity(1<<30, resource.BinarySI),
						ValidRange: &resourceapi.CapacityRequestPolicyRange{
							Min:  resource.NewQuantity(1<<30, resource.BinarySI),
							Step: resource.NewQuantity(step, resource.BinarySI),
						},
					}
					device.Capacity["memory"] = c
				}
				if counters && r.IntN(5) != 0 {
					use := resourceapi.DeviceCounterConsumption{
						CounterSet: fmt.Sprintf("set-%d", r.IntN(counterSets)),
						Counters:   map[string]resourceapi.Counter{"memory": {Value: *resource.NewQuantity(memGi<<30, resource.BinarySI)}},
					}
					if r.IntN(2) == 0 {
						use.Counters["slots"] = resourceapi.Counter{Value: *resource.NewQuantity(int64(1+r.IntN(2)), resource.DecimalSI)}
					}
					if r.IntN(40) == 0 {
						use.Counters["missing"] = resourceapi.Counter{Value: *resource.NewQuantity(1, resource.DecimalSI)} // an invalid pool
					}
					if r.IntN(25) == 0 {
						// Compatibility groups (alpha, off): the slice is ignored, the pool incomplete.
						use.CompatibilityGroups = []string{"g1"}
					}
					device.ConsumesCounters = []resourceapi.DeviceCounterConsumption{use}
				}
				if r.IntN(12) == 0 {
					device.Taints = []resourceapi.DeviceTaint{{Key: pick(r, "broken", "maintenance"), Value: pick(r, "yes", "no"),
						Effect: taintEffects[r.IntN(len(taintEffects))]}}
				}
				slice.Spec.Devices = append(slice.Spec.Devices, device)
				devices = append(devices, dev{pool: pool, name: name, shared: shared, memGi: memGi})
			}
			in.Slices = append(in.Slices, slice)
		}
	}

	// DeviceTaintRules (on by default from 1.37): a taint on every device a selector matches.
	for t := 0; t < r.IntN(3); t++ {
		rule := &resourceapi.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("rule-%d", t)},
			Spec: resourceapi.DeviceTaintRuleSpec{Taint: resourceapi.DeviceTaint{Key: pick(r, "broken", "maintenance"),
				Value: pick(r, "yes", "no"), Effect: taintEffects[r.IntN(len(taintEffects))]}}}
		if r.IntN(10) != 0 {
			sel := &resourceapi.DeviceTaintSelector{}
			if r.IntN(2) == 0 {
				sel.Driver = ptr.To(pick(r, driver, driver, "other.example.com"))
			}
			if r.IntN(2) == 0 {
				sel.Pool = ptr.To(fmt.Sprintf("pool-%d", r.IntN(3)))
			}
			if r.IntN(3) != 0 {
				sel.Device = ptr.To(fmt.Sprintf("gpu-%d-%d", r.IntN(2), r.IntN(3)))
			}
			rule.Spec.DeviceSelector = sel
		}
		in.TaintRules = append(in.TaintRules, rule)
	}

	in.Classes = []*resourceapi.DeviceClass{
		class("gpu", fmt.Sprintf("device.driver == %q", driver)),
		class("gpu-a", fmt.Sprintf("device.attributes[%q].type == 'a'", driver)),
		class("big", fmt.Sprintf("device.capacity[%q].memory.compareTo(quantity('40Gi')) >= 0", driver)),
	}

	// Claims already allocated: devices held whole, or shares of shareable devices.
	for c := 0; c < r.IntN(3); c++ {
		if len(devices) == 0 {
			break
		}
		d := devices[r.IntN(len(devices))]
		res := resourceapi.DeviceRequestAllocationResult{Request: "req", Driver: driver, Pool: d.pool, Device: d.name}
		if d.shared {
			res.ShareID = ptr.To(types.UID(fmt.Sprintf("00000000-0000-4000-9000-%012d", c)))
			res.ConsumedCapacity = map[resourceapi.QualifiedName]resource.Quantity{
				"memory": *resource.NewQuantity(int64(1+r.IntN(int(d.memGi)))<<30, resource.BinarySI)}
		}
		claim := &resourceapi.ResourceClaim{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("held-%d", c), Namespace: "default", UID: types.UID(fmt.Sprintf("held-%d", c))},
			Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
				Name: "req", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}}}}},
			Status: resourceapi.ResourceClaimStatus{Allocation: &resourceapi.AllocationResult{
				Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{res}}}},
		}
		in.Allocated = append(in.Allocated, claim)
	}

	// The pod's claims.
	for c := 0; c < 1+r.IntN(2); c++ {
		claim := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("claim-%d", c),
			Namespace: "default", UID: types.UID(fmt.Sprintf("claim-%d", c))}}
		for q := 0; q < 1+r.IntN(2); q++ {
			name := fmt.Sprintf("r%d", q)
			if r.IntN(8) == 0 {
				// A prioritized list: the first subrequest that can be satisfied wins.
				claim.Spec.Devices.Requests = append(claim.Spec.Devices.Requests, resourceapi.DeviceRequest{
					Name: name, FirstAvailable: []resourceapi.DeviceSubRequest{
						{Name: "big", DeviceClassName: "big", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
						{Name: "any", DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
					}})
				continue
			}
			req := &resourceapi.ExactDeviceRequest{DeviceClassName: pick(r, "gpu", "gpu", "gpu-a", "big"),
				AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: int64(1 + r.IntN(3))}
			if r.IntN(12) == 0 {
				req.AllocationMode, req.Count = resourceapi.DeviceAllocationModeAll, 0
			}
			if r.IntN(4) == 0 {
				tol := resourceapi.DeviceToleration{Key: pick(r, "broken", "maintenance", ""),
					Operator: resourceapi.DeviceTolerationOperator(pick(r, "Exists", "Equal")), Value: pick(r, "yes", "no")}
				if tol.Operator == resourceapi.DeviceTolerationOpExists {
					tol.Value = ""
				}
				if tol.Key == "" {
					tol.Operator = resourceapi.DeviceTolerationOpExists
					tol.Value = ""
				}
				if r.IntN(3) == 0 {
					tol.Effect = resourceapi.DeviceTaintEffect(pick(r, "NoSchedule", "NoExecute"))
				}
				req.Tolerations = []resourceapi.DeviceToleration{tol}
			}
			if r.IntN(4) == 0 {
				req.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{
					Expression: fmt.Sprintf("device.attributes[%q].index <= %d", driver, r.IntN(3))}}}
			}
			if r.IntN(3) == 0 {
				// Whole GiB or any MiB: the policy rounds the latter up to its step.
				mem := *resource.NewQuantity(int64(1+r.IntN(40))<<30, resource.BinarySI)
				if r.IntN(2) == 0 {
					mem = *resource.NewQuantity(int64(1+r.IntN(40<<10))<<20, resource.BinarySI)
				}
				req.Capacity = &resourceapi.CapacityRequirements{Requests: map[resourceapi.QualifiedName]resource.Quantity{"memory": mem}}
			}
			claim.Spec.Devices.Requests = append(claim.Spec.Devices.Requests, resourceapi.DeviceRequest{Name: name, Exactly: req})
		}
		if len(claim.Spec.Devices.Requests) > 1 && r.IntN(4) == 0 {
			claim.Spec.Devices.Constraints = []resourceapi.DeviceConstraint{{
				MatchAttribute: ptr.To(resourceapi.FullyQualifiedName(driver + "/type"))}}
		}
		in.Claims = append(in.Claims, claim)
	}
	return in
}

func class(name, expression string) *resourceapi.DeviceClass {
	return &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{
			CEL: &resourceapi.CELDeviceSelector{Expression: expression}}}}}
}

func pick(r *rand.Rand, options ...string) string { return options[r.IntN(len(options))] }

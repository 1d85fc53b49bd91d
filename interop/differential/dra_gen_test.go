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
// every node, or missing so that a pool is incomplete), devices with attributes and memory,
// some shareable with a request policy, a few classes with CEL selectors, claims already
// allocated, and one pod's claims with counts, All, selectors, capacity requests, constraints
// and prioritized lists.
func generateDRACase(r *rand.Rand) draCaseInput {
	in := draCaseInput{Node: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0",
		Labels: map[string]string{"kubernetes.io/hostname": "node-0", "zone": pick(r, "a", "b")}}}}

	type dev struct {
		pool, name string
		shared     bool
		memGi      int64
	}
	var devices []dev
	pools := 1 + r.IntN(3)
	for p := 0; p < pools; p++ {
		pool := fmt.Sprintf("pool-%d", p)
		slices := 1 + r.IntN(2)
		present := slices
		if r.IntN(10) == 0 {
			present = slices - 1 // an incomplete pool: a slice not published yet
		}
		scope := r.IntN(10) // 0-6: this node, 7: another node, 8: all nodes, 9: a node selector
		for s := 0; s < present; s++ {
			slice := &resourceapi.ResourceSlice{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-slice-%d", pool, s)},
				Spec: resourceapi.ResourceSliceSpec{
					Driver: driver,
					Pool:   resourceapi.ResourcePool{Name: pool, Generation: 1, ResourceSliceCount: int64(slices)},
				},
			}
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
				if r.IntN(15) == 0 {
					device.Taints = []resourceapi.DeviceTaint{{Key: "broken", Value: "yes", Effect: resourceapi.DeviceTaintEffectNoSchedule}}
				}
				slice.Spec.Devices = append(slice.Spec.Devices, device)
				devices = append(devices, dev{pool: pool, name: name, shared: shared, memGi: memGi})
			}
			in.Slices = append(in.Slices, slice)
		}
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

package differential

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

var (
	celSeed  = flag.Uint64("cel-seed", 1, "seed of the CEL selector cases")
	celCases = flag.Int("cel-cases", 5000, "how many CEL selector cases to run")
	celCase  = flag.Int("cel-case", -1, "run only this CEL case number, and print it")
)

// unsupportedCEL are constructs docs/cel.md says hamisim refuses at compile time ("not supported
// by hamisim"); Kubernetes evaluates them. A case using one is a known gap when hamisim refuses
// it with that message, and a disagreement otherwise.
var unsupportedCEL = []string{
	`device.attributes["%[1]s"].model.matches('^[a-z]+[0-9]+$')`,
	`device.attributes["%[1]s"].model.lowerAscii() == 't4'`,
	`device.attributes["%[1]s"].idx + 1 > 2`,
	`['a100', 'T4'].exists(m, m == device.attributes["%[1]s"].model)`,
	`device.attributes["%[1]s"].model.split('-').size() > 1`,
	`device.attributes['other.io'].size() == 0`,
}

// TestCELSelectors compares the DRA CEL selectors hamisim evaluates with Kubernetes' (the
// allocator's cel package of k8s.io/dynamic-resource-allocation v0.37.2): each case is one
// ResourceSlice of three devices with int, string, bool and version attributes and a memory
// capacity, and one claim for one device whose selector is a generated expression. Both
// allocators must pick the same device, find none, or fail with an error (a compile or run-time
// error fails the pod's attempt in both).
func TestCELSelectors(t *testing.T) {
	tool := startAllocatorTool(t)
	first, last := caseRange(*celCases, *celCase)
	var disagreements []string
	counts := map[string]int{}
	gaps := 0
	for i := first; i < last; i++ {
		r := rand.New(rand.NewPCG(*celSeed, uint64(i)))
		expr, unsupported := celExpression(r, 3)
		in := celCaseInput(r, expr)
		want := realAllocate(in)
		got := tool.ask(t, i, in)
		if *celCase >= 0 {
			t.Logf("case %d: %s\nkubernetes: %+v\nhamisim: %+v", i, expr, want, got)
		}
		if unsupported && got.kind == "error" && strings.Contains(got.detail, "is not supported by hamisim") {
			gaps++
			continue
		}
		counts[want.kind]++
		if d := compareOutcomes(want, got); d != "" {
			disagreements = append(disagreements, fmt.Sprintf("case %d (-cel-seed %d -cel-case %d) %s: %s", i, *celSeed, i, expr, d))
		}
	}
	fmt.Printf("differential: CEL selectors: %d cases (%d matched a device, %d matched none, %d errors; %d known gaps of docs/cel.md), %d disagreements\n",
		last-first, counts["allocated"], counts["unschedulable"], counts["error"], gaps, len(disagreements))
	failOnDisagreements(t, "hamisim's CEL disagrees with Kubernetes'", disagreements)
}

// celExpression builds a boolean selector of at most `depth` levels; unsupported says whether
// it uses a construct of unsupportedCEL.
func celExpression(r *rand.Rand, depth int) (string, bool) {
	if depth == 0 || r.IntN(3) == 0 {
		return celAtom(r)
	}
	a, ua := celExpression(r, depth-1)
	b, ub := celExpression(r, depth-1)
	switch r.IntN(5) {
	case 0:
		return "(" + a + ") && (" + b + ")", ua || ub
	case 1:
		return "(" + a + ") || (" + b + ")", ua || ub
	case 2:
		return "!(" + a + ")", ua
	case 3:
		c, uc := celExpression(r, depth-1)
		return "(" + a + ") ? (" + b + ") : (" + c + ")", ua || ub || uc
	default:
		return fmt.Sprintf("cel.bind(x, device.attributes[%q], (%s) && x.idx >= %d)", driver, a, r.IntN(3)), ua
	}
}

func celAtom(r *rand.Rand) (string, bool) {
	d := driver
	attr := func(name string) string { return fmt.Sprintf("device.attributes[%q].%s", d, name) }
	ops := []string{"<", "<=", "==", "!=", ">", ">="}
	models := []string{"a100", "h100-sxm", "T4", "l40s"}
	versions := []string{"1.2.3", "2.0.0-rc.1", "1.10.0", "0.9.9"}
	quantities := []string{"16Gi", "40Gi", "40960Mi", "80Gi", "1Ti"}
	if r.IntN(25) == 0 {
		return fmt.Sprintf(unsupportedCEL[r.IntN(len(unsupportedCEL))], d), true
	}
	switch r.IntN(20) {
	case 0:
		return fmt.Sprintf("%s %s %d", attr("idx"), ops[r.IntN(len(ops))], r.IntN(6)-1), false
	case 1:
		return fmt.Sprintf("%s %s '%s'", attr("model"), pick(r, "==", "!="), models[r.IntN(len(models))]), false
	case 2:
		return fmt.Sprintf("%s.%s('%s')", attr("model"), pick(r, "startsWith", "endsWith", "contains"),
			pick(r, "a", "sxm", "T", "4", "")), false
	case 3:
		return fmt.Sprintf("%s in ['%s', '%s']", attr("model"), models[r.IntN(4)], models[r.IntN(4)]), false
	case 4:
		return pick(r, attr("healthy"), attr("healthy")+" == true", "!"+attr("healthy"), attr("healthy")+" != false"), false
	case 5:
		return fmt.Sprintf("%s.%s(semver('%s'))", attr("driverVersion"), pick(r, "isGreaterThan", "isLessThan"),
			versions[r.IntN(len(versions))]), false
	case 6:
		return fmt.Sprintf("%s.compareTo(semver('%s')) %s 0", attr("driverVersion"), versions[r.IntN(len(versions))],
			ops[r.IntN(len(ops))]), false
	case 7:
		return fmt.Sprintf("%s.%s() == %d", attr("driverVersion"), pick(r, "major", "minor", "patch"), r.IntN(3)), false
	case 8:
		return fmt.Sprintf("device.capacity[%q].memory.compareTo(quantity('%s')) %s 0", d,
			quantities[r.IntN(len(quantities))], ops[r.IntN(len(ops))]), false
	case 9:
		return fmt.Sprintf("device.capacity[%q].memory.%s(quantity('%s'))", d, pick(r, "isGreaterThan", "isLessThan"),
			quantities[r.IntN(len(quantities))]), false
	case 10:
		return fmt.Sprintf("device.capacity[%q].memory == quantity('%s')", d, quantities[r.IntN(len(quantities))]), false
	case 11:
		return pick(r, fmt.Sprintf("has(%s)", attr("optional")), fmt.Sprintf("'optional' in device.attributes[%q]", d)), false
	case 12:
		// A missing attribute is a run-time error in both, unless guarded.
		return pick(r, attr("optional")+" > 1", fmt.Sprintf("has(%s) && %s > 1", attr("optional"), attr("optional"))), false
	case 13:
		return pick(r, fmt.Sprintf("device.driver == '%s'", d), "device.driver.endsWith('.com')", "device.driver != 'x'"), false
	case 14:
		return fmt.Sprintf("%s > %d", pick(r, attr("model")+".size()", "size("+attr("model")+")"), r.IntN(6)), false
	case 15:
		return pick(r, "device.allowMultipleAllocations == false", "device.allowMultipleAllocations"), false
	case 16:
		return "device.attributes['other.io'].x == 1", false
	case 17:
		return pick(r, "isSemver('1.2.3')", "isSemver('v1.2')", "isQuantity('4Gi')", "isQuantity('4 Gi')"), false
	case 18:
		// Run-time type mismatches on dyn attribute values, and a compile-time one.
		return pick(r, attr("model")+" == 3", attr("idx")+" == '1'", attr("model")+" > 3", "device.driver == 1"), false
	default:
		return fmt.Sprintf("%s == quantity('%s')", pick(r, attr("idx"), attr("model")), quantities[r.IntN(len(quantities))]), false
	}
}

// celCaseInput is one slice of three devices on node-0 and one claim for one device of class
// gpu with the selector.
func celCaseInput(r *rand.Rand, expr string) draCaseInput {
	in := draCaseInput{Node: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0"}}}
	slice := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "cel-slice"},
		Spec: resourceapi.ResourceSliceSpec{Driver: driver, NodeName: ptr.To("node-0"),
			Pool: resourceapi.ResourcePool{Name: "pool", Generation: 1, ResourceSliceCount: 1}},
	}
	models := []string{"a100", "h100-sxm", "T4", "l40s"}
	versions := []string{"1.2.3", "2.0.0-rc.1", "1.10.0", "0.9.9"}
	for i := 0; i < 3; i++ {
		attrs := map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			"idx":           {IntValue: ptr.To(int64(r.IntN(4)))},
			"model":         {StringValue: ptr.To(models[r.IntN(len(models))])},
			"healthy":       {BoolValue: ptr.To(r.IntN(4) != 0)},
			"driverVersion": {VersionValue: ptr.To(versions[r.IntN(len(versions))])},
		}
		if r.IntN(2) == 0 {
			attrs["optional"] = resourceapi.DeviceAttribute{IntValue: ptr.To(int64(r.IntN(3)))}
		}
		slice.Spec.Devices = append(slice.Spec.Devices, resourceapi.Device{
			Name:       fmt.Sprintf("dev-%d", i),
			Attributes: attrs,
			Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
				"memory": {Value: *resource.NewQuantity(int64(16*(1+r.IntN(5)))<<30, resource.BinarySI)}},
		})
	}
	in.Slices = []*resourceapi.ResourceSlice{slice}
	in.Classes = []*resourceapi.DeviceClass{class("gpu", fmt.Sprintf("device.driver == %q", driver))}
	in.Claims = []*resourceapi.ResourceClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "claim", Namespace: "default", UID: types.UID("claim")},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
			Name: "r", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu",
				AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1,
				Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: expr}}}}}}}},
	}}
	return in
}

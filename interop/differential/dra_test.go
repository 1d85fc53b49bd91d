// Package differential feeds the same generated inputs to Kubernetes' own code, linked here as a
// library, and to hamisim, and reports every disagreement.
package differential

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"
)

var (
	draSeed  = flag.Uint64("dra-seed", 1, "seed of the DRA allocator cases")
	draCases = flag.Int("dra-cases", 20000, "how many DRA allocator cases to run")
	draCase  = flag.Int("dra-case", -1, "run only this case number (with its seed), and print it")
)

// The allocator features kube-scheduler v1.37.2 enables by default (pkg/features).
var draFeatures = structured.Features{
	AdminAccess:          true,
	PrioritizedList:      true,
	PartitionableDevices: true,
	DeviceTaints:         true,
	ConsumableCapacity:   true,
}

const driver = "gpu.example.com"

// draCase is one input: a node, the DRA objects of the cluster, and the claims of one pod.
type draCaseInput struct {
	Node       *v1.Node
	Slices     []*resourceapi.ResourceSlice
	TaintRules []*resourceapi.DeviceTaintRule
	Classes    []*resourceapi.DeviceClass
	Allocated  []*resourceapi.ResourceClaim
	Claims     []*resourceapi.ResourceClaim
}

// TestDRAAllocator compares hamisim's structured allocator with Kubernetes' (the incubating
// allocator of k8s.io/dynamic-resource-allocation v0.37.2, as kube-scheduler 1.37 runs it) on
// generated nodes, ResourceSlices, DeviceClasses, allocated claims and a pod's claims: the
// outcome (allocated, does not fit, error) and each result's request, driver, pool, device,
// whether it is a share, and the capacity it consumes.
func TestDRAAllocator(t *testing.T) {
	tool := startAllocatorTool(t)
	first, last := caseRange(*draCases, *draCase)
	var disagreements []string
	counts := map[string]int{}
	for i := first; i < last; i++ {
		in := generateDRACase(rand.New(rand.NewPCG(*draSeed, uint64(i))))
		want := realAllocate(in)
		got := tool.ask(t, i, in)
		counts[want.kind]++
		if *draCase >= 0 {
			b, _ := json.MarshalIndent(toolInput(in), "", "  ")
			t.Logf("case %d input:\n%s\nkubernetes: %+v\nhamisim: %+v", i, b, want, got)
		}
		if d := compareOutcomes(want, got); d != "" {
			disagreements = append(disagreements, fmt.Sprintf("case %d (-dra-seed %d -dra-case %d): %s", i, *draSeed, i, d))
		}
	}
	fmt.Printf("differential: DRA allocator: %d cases (%d allocated, %d do not fit, %d errors), %d disagreements\n",
		last-first, counts["allocated"], counts["unschedulable"], counts["error"], len(disagreements))
	failOnDisagreements(t, "hamisim's allocator disagrees with Kubernetes'", disagreements)
}

// caseRange is every case up to `cases`, or only case `one` when it is set (>= 0).
func caseRange(cases, one int) (int, int) {
	if one >= 0 {
		return one, one + 1
	}
	return 0, cases
}

func failOnDisagreements(t *testing.T, what string, disagreements []string) {
	if len(disagreements) == 0 {
		return
	}
	if len(disagreements) > 20 {
		disagreements = append(disagreements[:20], fmt.Sprintf("... and %d more", len(disagreements)-20))
	}
	t.Fatalf("%s:\n  %s", what, strings.Join(disagreements, "\n  "))
}

// allocatorTool is dra_allocate (hamisim's allocator) running for the test, one case at a time.
type allocatorTool struct {
	path    string
	enc     *json.Encoder
	answers *bufio.Scanner
}

func startAllocatorTool(t *testing.T, args ...string) *allocatorTool {
	path := draTool(t)
	cmd := exec.Command(path, args...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	answers := bufio.NewScanner(stdout)
	answers.Buffer(make([]byte, 1<<20), 16<<20)
	return &allocatorTool{path: path, enc: json.NewEncoder(stdin), answers: answers}
}

// ask sends case i and reads hamisim's answer.
func (a *allocatorTool) ask(t *testing.T, i int, in draCaseInput) outcome {
	return hamisimOutcome(a.askRaw(t, i, in))
}

// askRaw sends case i and returns hamisim's answer line.
func (a *allocatorTool) askRaw(t *testing.T, i int, in draCaseInput) []byte {
	if err := a.enc.Encode(toolInput(in)); err != nil {
		t.Fatalf("writing case %d to %s: %v", i, a.path, err)
	}
	if !a.answers.Scan() {
		t.Fatalf("case %d: %s ended without an answer", i, a.path)
	}
	return a.answers.Bytes()
}

func draTool(t *testing.T) string {
	if p := os.Getenv("HAMISIM_DRA_ALLOCATE"); p != "" {
		return p
	}
	p, _ := filepath.Abs("../../build/tests/support/dra_allocate")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("skipped: no dra_allocate program (%v): scripts/build.sh release dra_allocate", err)
	}
	return p
}

// outcome is what an allocator decided: "allocated" with results per claim, "unschedulable",
// or "error".
type outcome struct {
	kind    string
	detail  string
	results [][]result
}

type result struct {
	Request, Driver, Pool, Device string
	Shared                        bool
	Consumed                      string // "name=quantity,..." in canonical form, sorted
}

func realAllocate(in draCaseInput) outcome {
	alloc, err := realAllocator(in)
	if err != nil {
		return outcome{kind: "error", detail: err.Error()}
	}
	results, err := alloc.Allocate(context.Background(), in.Node, in.Claims)
	if errors.Is(err, structured.ErrFailedAllocationOnNode) {
		// kube-scheduler's DRA plugin: not a fatal error, the node is unschedulable (invalid
		// pools, for example).
		return outcome{kind: "unschedulable", detail: err.Error()}
	}
	if err != nil {
		return outcome{kind: "error", detail: err.Error()}
	}
	if results == nil {
		return outcome{kind: "unschedulable"}
	}
	o := outcome{kind: "allocated"}
	for _, a := range results {
		var rs []result
		for _, r := range a.Devices.Results {
			rs = append(rs, result{Request: r.Request, Driver: r.Driver, Pool: r.Pool, Device: r.Device,
				Shared: r.ShareID != nil, Consumed: consumed(r.ConsumedCapacity)})
		}
		o.results = append(o.results, rs)
	}
	return o
}

// realAllocator is Kubernetes' allocator over the case's slices, classes and allocated claims,
// as kube-scheduler's DRA plugin builds it once per pod before asking about each node.
func realAllocator(in draCaseInput) (structured.Allocator, error) {
	ctx := context.Background()
	state := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, c := range in.Allocated {
		for _, r := range c.Status.Allocation.Devices.Results {
			if ptr.Deref(r.AdminAccess, false) {
				continue
			}
			id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
			if r.ShareID != nil {
				state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, r.ShareID))
				if r.ConsumedCapacity != nil {
					state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity))
				}
				continue
			}
			state.AllocatedDevices.Insert(id)
		}
	}
	return structured.NewAllocator(ctx, draFeatures, state, classLister(in.Classes),
		withTaintRules(in.Slices, in.TaintRules), cel.NewCache(10, cel.Features{EnableConsumableCapacity: true}))
}

// withTaintRules is what kube-scheduler 1.37's ResourceSlice tracker hands the allocator: the
// slices with each DeviceTaintRule's taint added to the devices it selects (tracker.go's
// applyPatches: no selector matches nothing, an unset field matches anything).
func withTaintRules(slices []*resourceapi.ResourceSlice, rules []*resourceapi.DeviceTaintRule) []*resourceapi.ResourceSlice {
	out := make([]*resourceapi.ResourceSlice, 0, len(slices))
	for _, slice := range slices {
		patched := slice
		for _, rule := range rules {
			sel := rule.Spec.DeviceSelector
			if sel == nil || (sel.Driver != nil && *sel.Driver != slice.Spec.Driver) ||
				(sel.Pool != nil && *sel.Pool != slice.Spec.Pool.Name) {
				continue
			}
			for i, device := range slice.Spec.Devices {
				if sel.Device != nil && *sel.Device != device.Name {
					continue
				}
				if patched == slice {
					patched = slice.DeepCopy()
				}
				patched.Spec.Devices[i].Taints = append(patched.Spec.Devices[i].Taints, rule.Spec.Taint)
			}
		}
		out = append(out, patched)
	}
	return out
}

func consumed(m map[resourceapi.QualifiedName]resource.Quantity) string {
	var parts []string
	for k, q := range m {
		parts = append(parts, fmt.Sprintf("%s=%d", k, q.Value()))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func hamisimOutcome(line []byte) outcome {
	var a struct {
		Error, Unschedulable, Input string
		Claims                      [][]struct {
			Request, Driver, Pool, Device string
			ShareID                       *string                      `json:"shareID"`
			ConsumedCapacity              map[string]resource.Quantity `json:"consumedCapacity"`
		}
	}
	if err := json.Unmarshal(line, &a); err != nil {
		return outcome{kind: "input", detail: "unreadable answer: " + string(line)}
	}
	switch {
	case a.Input != "":
		return outcome{kind: "input", detail: a.Input}
	case a.Error != "":
		return outcome{kind: "error", detail: a.Error}
	case a.Unschedulable != "":
		return outcome{kind: "unschedulable", detail: a.Unschedulable}
	}
	o := outcome{kind: "allocated"}
	for _, c := range a.Claims {
		var rs []result
		for _, r := range c {
			m := map[resourceapi.QualifiedName]resource.Quantity{}
			for k, q := range r.ConsumedCapacity {
				m[resourceapi.QualifiedName(k)] = q
			}
			rs = append(rs, result{Request: r.Request, Driver: r.Driver, Pool: r.Pool, Device: r.Device,
				Shared: r.ShareID != nil, Consumed: consumed(m)})
		}
		o.results = append(o.results, rs)
	}
	return o
}

func compareOutcomes(want, got outcome) string {
	if want.kind != got.kind {
		return fmt.Sprintf("kubernetes: %s %s; hamisim: %s %s", want.kind, want.detail, got.kind, got.detail)
	}
	if want.kind != "allocated" {
		return ""
	}
	w, g := fmt.Sprintf("%+v", want.results), fmt.Sprintf("%+v", got.results)
	if w != g {
		return fmt.Sprintf("different results:\n      kubernetes: %s\n      hamisim:    %s", w, g)
	}
	return ""
}

type classLister []*resourceapi.DeviceClass

func (l classLister) List() ([]*resourceapi.DeviceClass, error) { return l, nil }
func (l classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	for _, c := range l {
		if c.Name == name {
			return c, nil
		}
	}
	return nil, apierrors.NewNotFound(resourceapi.Resource("deviceclasses"), name)
}

// toolInput is the case as dra_allocate reads it: the node, then every object with its kind.
func toolInput(in draCaseInput) map[string]any {
	var objects []any
	for _, s := range in.Slices {
		s.TypeMeta = metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceSlice"}
		objects = append(objects, s)
	}
	for _, c := range in.Classes {
		c.TypeMeta = metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceClass"}
		objects = append(objects, c)
	}
	for _, t := range in.TaintRules {
		t.TypeMeta = metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceTaintRule"}
		objects = append(objects, t)
	}
	for _, c := range append(append([]*resourceapi.ResourceClaim{}, in.Allocated...), in.Claims...) {
		c.TypeMeta = metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaim"}
		objects = append(objects, c)
	}
	in.Node.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}
	return map[string]any{"node": in.Node, "objects": objects}
}

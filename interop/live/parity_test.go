package live

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/hamisim/hamisim/interop/harness"
)

// TestFakeParity runs the client operations hamisim's live path uses (LIST with paging, GET,
// WATCH with bookmarks, merge PATCH, bindings, events, Lease reads, and their 404/409/410/415/422
// answers) against the real kube-apiserver and against the tests' fake API server
// (tests/support/fake_apiserver, run as bench_apiserver), and requires the same status codes and
// the same shapes: the object's kind, a Status's reason and code, the top-level keys.
func TestFakeParity(t *testing.T) {
	fakeBin := fakeAPIServer(t)
	cp := harness.StartControlPlane(t)

	objects := parityObjects()
	for _, o := range objects {
		var err error
		switch v := o.(type) {
		case *corev1.Node:
			_, err = cp.Client.CoreV1().Nodes().Create(context.Background(), v, metav1.CreateOptions{})
		case *corev1.Pod:
			if _, err = cp.Client.CoreV1().Namespaces().Get(context.Background(), v.Namespace, metav1.GetOptions{}); err != nil {
				_, err = cp.Client.CoreV1().Namespaces().Create(context.Background(),
					&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: v.Namespace}}, metav1.CreateOptions{})
			}
			if err == nil {
				_, err = cp.Client.CoreV1().Pods(v.Namespace).Create(context.Background(), v, metav1.CreateOptions{})
			}
		}
		if err != nil {
			t.Fatalf("creating %T: %v", o, err)
		}
	}
	fakeCfg := startFake(t, fakeBin, objects)

	real := runParityOps(t, cp.Config)
	fake := runParityOps(t, fakeCfg)
	var diffs []string
	for i := range real {
		if real[i] != fake[i] {
			diffs = append(diffs, fmt.Sprintf("%s:\n      real: %s\n      fake: %s", real[i].op, real[i].shape, fake[i].shape))
		}
	}
	if len(diffs) > 0 {
		t.Fatalf("the fake API server answers %d of %d operations unlike the real one:\n  %s",
			len(diffs), len(real), strings.Join(diffs, "\n  "))
	}
	t.Logf("[parity] %d operations answered alike by the real and the fake API server", len(real))
}

func fakeAPIServer(t *testing.T) string {
	if p := os.Getenv("HAMISIM_FAKE_APISERVER"); p != "" {
		return p
	}
	p, _ := filepath.Abs("../../build/bench/bench_apiserver")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("skipped: no fake API server program (%v): scripts/build.sh release bench_apiserver", err)
	}
	return p
}

func parityObjects() []any {
	out := []any{harness.GPUNode("parity-node", nil, harness.GPUs("parity-node", 1, 10, 16384, "NVIDIA-Tesla T4"))}
	for i := 1; i <= 5; i++ {
		out = append(out, &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "parity", Annotations: map[string]string{"a": "b"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		})
	}
	return out
}

// startFake writes the objects as one List file, runs the fake on it and returns a client
// configuration from the kubeconfig it writes.
func startFake(t *testing.T, bin string, objects []any) *rest.Config {
	dir := t.TempDir()
	var items []json.RawMessage
	for _, o := range objects {
		if n, ok := o.(*corev1.Node); ok {
			n.TypeMeta = metav1.TypeMeta{Kind: "Node", APIVersion: "v1"}
		}
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, b)
	}
	list, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	input := filepath.Join(dir, "objects.json")
	if err := os.WriteFile(input, list, 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	cmd := exec.Command(bin, "--kubeconfig", kubeconfig, input)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "ready ") {
				ready <- true
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("the fake API server exited: %s", stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the fake API server did not say ready: %s", stderr.String())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

type parityResult struct {
	op, shape string
}

// runParityOps runs the operations in order against one server and describes each answer.
func runParityOps(t *testing.T, cfg *rest.Config) []parityResult {
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: rt, Timeout: 30 * time.Second}
	host := strings.TrimSuffix(cfg.Host, "/")
	var out []parityResult
	do := func(op, method, path, contentType, body string) map[string]any {
		req, _ := http.NewRequest(method, host+path, strings.NewReader(body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		req.Header.Set("Accept", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			out = append(out, parityResult{op, "error: " + err.Error()})
			return nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var obj map[string]any
		_ = json.Unmarshal(b, &obj)
		out = append(out, parityResult{op, describe(resp.StatusCode, obj)})
		if os.Getenv("HAMISIM_PARITY_BODIES") != "" { // to see what differs, not only its shape
			t.Logf("%s %s body: %s", host, op, b)
		}
		return obj
	}
	const pods = "/api/v1/namespaces/parity/pods"

	// LIST with paging, as client-go's pager (limit and continue).
	first := do("LIST pods limit=2", "GET", pods+"?limit=2", "", "")
	cont, _ := nested(first, "metadata", "continue").(string)
	pages, items := 1, len(listItems(first))
	for cont != "" && pages < 10 {
		page := do(fmt.Sprintf("LIST pods page %d", pages+1), "GET", pods+"?limit=2&continue="+cont, "", "")
		items += len(listItems(page))
		cont, _ = nested(page, "metadata", "continue").(string)
		pages++
	}
	out = append(out, parityResult{"LIST pods: pages and items", fmt.Sprintf("%d pages, %d items", pages, items)})
	do("LIST pods with a malformed continue token", "GET", pods+"?limit=2&continue=not-a-token", "", "")
	listRV, _ := nested(first, "metadata", "resourceVersion").(string)

	do("GET pod", "GET", pods+"/p1", "", "")
	do("GET missing pod", "GET", pods+"/nope", "", "")
	do("GET missing Lease", "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/hami-scheduler", "", "")

	// PATCH as the live path sends them: JSON merge patches, some with a resourceVersion.
	p1 := do("PATCH merge annotations", "PATCH", pods+"/p1", "application/merge-patch+json",
		`{"metadata":{"annotations":{"hami.io/vgpu-node":"parity-node"}}}`)
	rv, _ := nested(p1, "metadata", "resourceVersion").(string)
	do("PATCH with the current resourceVersion", "PATCH", pods+"/p1", "application/merge-patch+json",
		fmt.Sprintf(`{"metadata":{"resourceVersion":%q,"annotations":{"x":"1"}}}`, rv))
	do("PATCH with a stale resourceVersion", "PATCH", pods+"/p1", "application/merge-patch+json",
		fmt.Sprintf(`{"metadata":{"resourceVersion":%q,"annotations":{"x":"2"}}}`, rv))
	do("PATCH removing an annotation (null)", "PATCH", pods+"/p1", "application/merge-patch+json",
		`{"metadata":{"annotations":{"x":null}}}`)
	do("PATCH missing pod", "PATCH", pods+"/nope", "application/merge-patch+json", `{"metadata":{"annotations":{"a":"b"}}}`)
	do("PATCH with Content-Type application/json", "PATCH", pods+"/p1", "application/json", `{"metadata":{"annotations":{"a":"b"}}}`)
	do("PATCH with a body that is not JSON", "PATCH", pods+"/p1", "application/merge-patch+json", `{"metadata":`)
	do("PATCH an invalid annotation key", "PATCH", pods+"/p1", "application/merge-patch+json",
		`{"metadata":{"annotations":{"bad key!":"v"}}}`)
	do("PATCH node annotations", "PATCH", "/api/v1/nodes/parity-node", "application/merge-patch+json",
		`{"metadata":{"annotations":{"hami.io/node-handshake":"Requesting_2026-01-01 00:00:00"}}}`)

	// Bindings, as /bind posts them.
	binding := func(pod, uid, node string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"Binding","metadata":{"name":%q,"namespace":"parity","uid":%q},"target":{"kind":"Node","name":%q}}`, pod, uid, node)
	}
	p2 := do("GET pod p2", "GET", pods+"/p2", "", "")
	uid2, _ := nested(p2, "metadata", "uid").(string)
	do("POST binding", "POST", pods+"/p2/binding", "application/json", binding("p2", uid2, "parity-node"))
	do("POST binding of a bound pod", "POST", pods+"/p2/binding", "application/json", binding("p2", uid2, "parity-node"))
	do("POST binding with another pod's UID", "POST", pods+"/p3/binding", "application/json", binding("p3", uid2, "parity-node"))
	do("POST binding without a target", "POST", pods+"/p4/binding", "application/json",
		`{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p4","namespace":"parity"},"target":{"kind":"Node"}}`)
	do("POST binding of a missing pod", "POST", pods+"/nope/binding", "application/json", binding("nope", "", "parity-node"))

	do("POST event", "POST", "/api/v1/namespaces/parity/events", "application/json",
		`{"apiVersion":"v1","kind":"Event","metadata":{"name":"p1.parity","namespace":"parity"},"involvedObject":{"kind":"Pod","namespace":"parity","name":"p1"},"reason":"FilteringSucceed","message":"m","type":"Normal","source":{"component":"hami-scheduler"}}`)

	// WATCH from the LIST's resourceVersion with bookmarks: the changes above arrive in order.
	out = append(out, parityResult{"WATCH pods from the first LIST", watchShape(c, host+pods+"?watch=1&allowWatchBookmarks=true&timeoutSeconds=5&resourceVersion="+listRV)})
	out = append(out, parityResult{"WATCH pods with a malformed resourceVersion", watchShape(c, host+pods+"?watch=1&timeoutSeconds=2&resourceVersion=abc")})
	return out
}

// watchShape reads a watch stream until the server ends it and describes it: the status code,
// then each event type (and the object's kind), with repeated lines collapsed and BOOKMARKs
// dropped (the real server sends them on its own schedule).
func watchShape(c *http.Client, url string) string {
	resp, err := c.Get(url)
	if err != nil {
		return "error: " + err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		var obj map[string]any
		_ = json.Unmarshal(b, &obj)
		return describe(resp.StatusCode, obj)
	}
	var events []string
	dec := json.NewDecoder(resp.Body)
	for {
		var ev struct {
			Type   string         `json:"type"`
			Object map[string]any `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			break
		}
		if ev.Type == "BOOKMARK" {
			continue
		}
		line := ev.Type + " " + fmt.Sprint(ev.Object["kind"])
		if ev.Type == "ERROR" {
			line += fmt.Sprintf(" %v %v", ev.Object["code"], ev.Object["reason"])
		}
		if len(events) == 0 || events[len(events)-1] != line {
			events = append(events, line)
		}
	}
	return "200 [" + strings.Join(events, ", ") + "]"
}

// describe is what must match: the code, the kind, a Status's reason and code, the top-level keys.
func describe(code int, obj map[string]any) string {
	if obj == nil {
		return fmt.Sprintf("%d (no JSON object)", code)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := fmt.Sprintf("%d %v keys=%v", code, obj["kind"], keys)
	if obj["kind"] == "Status" {
		s += fmt.Sprintf(" status=%v reason=%v code=%v", obj["status"], obj["reason"], obj["code"])
	}
	return s
}

func nested(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func listItems(obj map[string]any) []any {
	items, _ := obj["items"].([]any)
	return items
}

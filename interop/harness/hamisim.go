package harness

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Binary is the hamisim executable the suite runs: $HAMISIM_BIN, else the release build of the
// checkout this module lives in. A test without it skips, saying so; with HAMISIM_BIN set but
// absent it fails (the test command builds it first).
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("HAMISIM_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("HAMISIM_BIN=%s: %v", p, err)
		}
		return p
	}
	p, err := filepath.Abs("../../build/src/cli/hamisim")
	if err == nil {
		if _, err = os.Stat(p); err == nil {
			return p
		}
	}
	t.Skipf("no hamisim binary (%v): run scripts/build.sh release or set HAMISIM_BIN", err)
	return ""
}

// TLS is a CA and a serving certificate for 127.0.0.1 signed by it, as files.
type TLS struct {
	CAFile, CertFile, KeyFile string
	CAPEM                     []byte
}

// NewTLS writes a fresh CA and a certificate for 127.0.0.1 and localhost into dir.
func NewTLS(t testing.TB, dir string) *TLS {
	t.Helper()
	must := func(err error) {
		if err != nil {
			t.Fatalf("making test certificates: %v", err)
		}
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(err)
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "interop-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	must(err)
	ca, err := x509.ParseCertificate(caDER)
	must(err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "hamisim"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	must(err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	must(err)
	out := &TLS{
		CAFile:   filepath.Join(dir, "ca.crt"),
		CertFile: filepath.Join(dir, "tls.crt"),
		KeyFile:  filepath.Join(dir, "tls.key"),
		CAPEM:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
	}
	must(os.WriteFile(out.CAFile, out.CAPEM, 0o600))
	must(os.WriteFile(out.CertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	must(os.WriteFile(out.KeyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	return out
}

// Hamisim is one `hamisim serve` process on the live path.
type Hamisim struct {
	Name    string
	URL     string // https://127.0.0.1:port (/filter, /bind, /webhook, /readyz)
	Metrics string // http://127.0.0.1:port
	TLS     *TLS
	LogFile string

	cmd    *exec.Cmd
	done   chan struct{}
	mu     sync.Mutex
	exited bool
}

// HamisimOptions are the flags that differ between the suite's replicas.
type HamisimOptions struct {
	Name       string   // names the log file and the replica in failures
	Kubeconfig string   // the API server (or a proxy in front of it)
	Extra      []string // more flags
}

// SchedulerName is the profile HAMi's chart gives its kube-scheduler and the name its webhook
// writes into device pods.
const SchedulerName = "hami-scheduler"

// StartHamisim runs `hamisim serve` against the API server and waits until /readyz says it is
// ready (the live source synced). It is killed when the test ends; its log is printed if the
// test failed.
func StartHamisim(t *testing.T, o HamisimOptions) *Hamisim {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	h := &Hamisim{Name: o.Name, TLS: NewTLS(t, dir), LogFile: filepath.Join(dir, "hamisim.log"),
		done: make(chan struct{})}
	port, mport := FreePort(t), FreePort(t)
	h.URL = fmt.Sprintf("https://127.0.0.1:%d", port)
	h.Metrics = fmt.Sprintf("http://127.0.0.1:%d", mport)
	args := []string{"serve",
		"--kubeconfig", o.Kubeconfig,
		"--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--metrics-listen", fmt.Sprintf("127.0.0.1:%d", mport),
		"--tls-cert", h.TLS.CertFile, "--tls-key", h.TLS.KeyFile,
		"--scheduler-name", SchedulerName,
		"--log-level", "debug",
	}
	args = append(args, o.Extra...)
	log, err := os.Create(h.LogFile)
	if err != nil {
		t.Fatal(err)
	}
	h.cmd = exec.Command(bin, args...)
	h.cmd.Stdout, h.cmd.Stderr = log, log
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := h.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	go func() {
		_ = h.cmd.Wait()
		log.Close()
		h.mu.Lock()
		h.exited = true
		h.mu.Unlock()
		close(h.done)
	}()
	t.Cleanup(func() {
		h.Kill()
		if t.Failed() {
			t.Logf("--- hamisim %s log (last 60 lines of %s) ---\n%s", h.Name, h.LogFile, h.LogTail(60))
		}
	})
	Eventually(t, 60*time.Second, "hamisim "+o.Name+" ready", func() (bool, error) {
		if h.Exited() {
			return false, fmt.Errorf("hamisim exited: %s", h.LogTail(20))
		}
		code, body, err := h.Get("/readyz")
		return err == nil && code == http.StatusOK, fmt.Errorf("readyz %d %s %v", code, body, err)
	})
	return h
}

// Kill stops the process at once (SIGKILL, as a node failure would), and waits for it.
func (h *Hamisim) Kill() {
	if h.cmd != nil && h.cmd.Process != nil && !h.Exited() {
		_ = h.cmd.Process.Kill()
	}
	if h.done != nil {
		<-h.done
	}
}

// Exited says whether the process has ended.
func (h *Hamisim) Exited() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.exited
}

// LogTail returns the last n lines of the process's log.
func (h *Hamisim) LogTail(n int) string { return Tail(h.Log(), n) }

// Log returns the whole log.
func (h *Hamisim) Log() string {
	b, _ := os.ReadFile(h.LogFile)
	return string(b)
}

// Client is an HTTPS client that trusts this replica's CA.
func (h *Hamisim) Client() *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(h.TLS.CAPEM)
	return &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// Get sends GET path to the main listener.
func (h *Hamisim) Get(path string) (int, string, error) {
	resp, err := h.Client().Get(h.URL + path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// Filtering says whether /readyz reports this replica as leading and filtering.
func (h *Hamisim) Filtering() bool {
	code, body, err := h.Get("/readyz")
	return err == nil && code == http.StatusOK && strings.Contains(body, `"filtering":true`)
}

// MetricsText returns /metrics.
func (h *Hamisim) MetricsText() (string, error) {
	resp, err := http.Get(h.Metrics + "/metrics")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// RegisterWebhook points the API server's pod admission at this replica's /webhook, as HAMi's
// chart does (MutatingWebhookConfiguration vgpu.hami.io, CREATE of pods, failurePolicy Ignore),
// with a URL instead of the chart's Service because no Service routes anywhere here.
func (h *Hamisim) RegisterWebhook(t testing.TB, client kubernetes.Interface) {
	t.Helper()
	url := h.URL + "/webhook"
	ignore := admissionv1.Ignore
	none := admissionv1.SideEffectClassNone
	never := admissionv1.NeverReinvocationPolicy
	scope := admissionv1.NamespacedScope
	timeout := int32(10)
	cfg := &admissionv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "hamisim-webhook"},
		Webhooks: []admissionv1.MutatingWebhook{{
			Name:                    "vgpu.hami.io",
			AdmissionReviewVersions: []string{"v1", "v1beta1"},
			SideEffects:             &none,
			FailurePolicy:           &ignore,
			ReinvocationPolicy:      &never,
			TimeoutSeconds:          &timeout,
			ClientConfig:            admissionv1.WebhookClientConfig{URL: &url, CABundle: h.TLS.CAPEM},
			Rules: []admissionv1.RuleWithOperations{{
				Operations: []admissionv1.OperationType{admissionv1.Create},
				Rule: admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
					Resources: []string{"pods"}, Scope: &scope},
			}},
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"}},
				{Key: "hami.io/webhook", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"ignore"}},
			}},
			ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "hami.io/webhook", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"ignore"}},
			}},
		}},
	}
	ctx := context.Background()
	_ = client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, cfg.Name, metav1.DeleteOptions{})
	if _, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the MutatingWebhookConfiguration: %v", err)
	}
	// The API server picks the configuration up from its own informer a moment later; until
	// then pods are admitted through the old one (failurePolicy Ignore: unmutated, so they go
	// to default-scheduler and nothing schedules them). A dry-run pod shows when it is in force.
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "webhook-probe-", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}}},
	}
	Eventually(t, 30*time.Second, "the API server calls "+url, func() (bool, error) {
		p, err := client.CoreV1().Pods("default").Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return false, err
		}
		return p.Spec.SchedulerName == SchedulerName, fmt.Errorf("schedulerName %q", p.Spec.SchedulerName)
	})
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Tail returns the last n lines of s.
func Tail(s string, n int) string {
	lines := bytes.Split(bytes.TrimRight([]byte(s), "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

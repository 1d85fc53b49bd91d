package harness

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	schedulerapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

// A kube-scheduler's leader-election identity is "<hostname>_<uuid>", and HAMi's extender leads
// while the Lease holder starts with its pod's hostname. Two replicas in one process share one
// hostname, so the replicated scenarios run each kube-scheduler as a child process of the test
// binary in a UTS namespace of its own, with the hostname of its "pod".
const (
	childEnv    = "HAMISIM_INTEROP_CHILD"
	hostnameEnv = "HAMISIM_INTEROP_HOSTNAME"
)

// RunChildIfAsked must be called first in TestMain: in a child started by StartSchedulerProcess
// it sets the hostname and runs kube-scheduler's own command, and never returns.
func RunChildIfAsked() {
	if os.Getenv(childEnv) != "kube-scheduler" {
		return
	}
	if h := os.Getenv(hostnameEnv); h != "" {
		if err := syscall.Sethostname([]byte(h)); err != nil {
			fmt.Fprintf(os.Stderr, "setting the hostname %q: %v\n", h, err)
			os.Exit(3)
		}
	}
	cmd := schedulerapp.NewSchedulerCommand()
	cmd.SetArgs(os.Args[1:])
	if err := cmd.Execute(); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// SchedulerProcess is a real kube-scheduler in a child process with its own hostname.
type SchedulerProcess struct {
	Hostname string
	LogFile  string
	cmd      *exec.Cmd
	done     chan struct{}
}

// StartSchedulerProcess starts kube-scheduler with the chart's configuration, leader election on
// <leaseNamespace>/hami-scheduler, and hostname as its host's name. It skips the test when the
// machine cannot make a UTS namespace (not root).
func StartSchedulerProcess(t *testing.T, cp *ControlPlane, hostname, extenderURL, leaseNamespace string) *SchedulerProcess {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "scheduler-config.yaml")
	if err := os.WriteFile(path, []byte(SchedulerConfig(cp.Kubeconfig, extenderURL, leaseNamespace, true)), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &SchedulerProcess{Hostname: hostname, LogFile: filepath.Join(dir, "kube-scheduler.log"),
		done: make(chan struct{})}
	log, err := os.Create(p.LogFile)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(os.Args[0], "--config="+path, "--secure-port=0", "-v=2")
	p.cmd.Env = append(os.Environ(), childEnv+"=kube-scheduler", hostnameEnv+"="+hostname)
	p.cmd.Stdout, p.cmd.Stderr = log, log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUTS, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		log.Close()
		if errors.Is(err, syscall.EPERM) {
			t.Skipf("skipped: a kube-scheduler with a hostname of its own needs a UTS namespace, which needs root: %v", err)
		}
		t.Fatalf("starting kube-scheduler %s: %v", hostname, err)
	}
	go func() {
		_ = p.cmd.Wait()
		log.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			b, _ := os.ReadFile(p.LogFile)
			t.Logf("--- kube-scheduler %s log (last 40 lines) ---\n%s", hostname, Tail(string(b), 40))
		}
	})
	return p
}

// Kill ends the process at once, as a node failure would, and waits for it.
func (p *SchedulerProcess) Kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
	}
}

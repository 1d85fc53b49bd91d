// Package harness runs a real Kubernetes control plane in the test process (embedded etcd, the
// real kube-apiserver and kube-scheduler from Kubernetes' own test servers) next to the built
// `hamisim serve` binary, and plays the parts no process here has: HAMi's device plugin.
package harness

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	etcd3testing "k8s.io/apiserver/pkg/storage/etcd3/testing"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
)

// ControlPlane is a real kube-apiserver on embedded etcd, listening on a loopback port.
type ControlPlane struct {
	Config     *rest.Config
	Client     kubernetes.Interface
	Kubeconfig string // a kubeconfig file for processes outside the test (hamisim, kubectl)
	Etcd       *clientv3.Client
	EtcdPrefix string
}

// StartControlPlane starts etcd and kube-apiserver for the test; both stop when it ends.
// extraFlags are more kube-apiserver flags.
func StartControlPlane(t *testing.T, extraFlags ...string) *ControlPlane {
	t.Helper()
	_, storage := etcd3testing.NewUnsecuredEtcd3TestClientServer(t)
	flags := []string{
		// No service-account controller runs here, so the default service account never
		// exists; the admission plugin would refuse every pod for it.
		"--disable-admission-plugins=ServiceAccount",
		// A 410 after compaction must come from a real compaction (the watch-expiry
		// scenario); the server's own periodic compaction stays off.
		"--etcd-compaction-interval=0",
	}
	flags = append(flags, extraFlags...)
	server := kubeapiservertesting.StartTestServerOrDie(t,
		&kubeapiservertesting.TestServerInstanceOptions{EnableCertAuth: true}, flags, storage)
	t.Cleanup(server.TearDownFn)

	cfg := rest.CopyConfig(server.ClientConfig)
	cp := &ControlPlane{
		Config:     cfg,
		Client:     kubernetes.NewForConfigOrDie(cfg),
		Etcd:       server.EtcdClient,
		EtcdPrefix: server.EtcdStoragePrefix,
	}
	cp.Kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := WriteKubeconfig(cfg, cp.Kubeconfig); err != nil {
		t.Fatalf("writing the control plane's kubeconfig: %v", err)
	}
	return cp
}

// WriteKubeconfig writes a kubeconfig for cfg: the loopback client configuration the API server
// gives its own clients (a bearer token, its CA, and the server name its loopback certificate
// carries).
func WriteKubeconfig(cfg *rest.Config, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["interop"] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.TLSClientConfig.CAData,
		TLSServerName:            cfg.TLSClientConfig.ServerName,
	}
	kc.AuthInfos["interop"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["interop"] = &clientcmdapi.Context{Cluster: "interop", AuthInfo: "interop"}
	kc.CurrentContext = "interop"
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*kc, path)
}

// Compact compacts etcd up to its current revision, so that every watch started before now
// gets 410 Gone from the API server once its watch cache window is passed.
func (cp *ControlPlane) Compact(ctx context.Context) (int64, error) {
	resp, err := cp.Etcd.Get(ctx, "compact_rev_key_none")
	if err != nil {
		return 0, err
	}
	rev := resp.Header.Revision
	_, err = cp.Etcd.Compact(ctx, rev, clientv3.WithCompactPhysical())
	return rev, err
}

// Eventually polls cond every 100 ms until it returns true or timeout passes; the test fails
// with what (and the last error cond gave) if it never does.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		if time.Now().After(deadline) {
			if last != nil {
				t.Fatalf("%s: not within %v (last error: %v)", what, timeout, last)
			}
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

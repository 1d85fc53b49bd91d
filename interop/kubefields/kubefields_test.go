package kubefields

import (
	"os"
	"testing"
)

// The committed include must be what k8s.io/api of go.mod gives: a bump of k8s.io/api fails
// here until the file is regenerated.
func TestGeneratedFileIsCurrent(t *testing.T) {
	committed, err := os.ReadFile("../../src/model/kube_fields.inc")
	if err != nil {
		t.Fatal(err)
	}
	if got := Generate(); got != string(committed) {
		t.Fatalf("src/model/kube_fields.inc is stale: run `cd interop && go run ./kubefields/cmd > ../src/model/kube_fields.inc`")
	}
}

// Command cmd prints src/model/kube_fields.inc (see package kubefields).
package main

import (
	"fmt"

	"github.com/hamisim/hamisim/interop/kubefields"
)

func main() {
	fmt.Print(kubefields.Generate())
}

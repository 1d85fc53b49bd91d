#!/usr/bin/env bash
# Runs the Go interop suite (interop/): a real kube-apiserver on embedded etcd and the real
# kube-scheduler, in process, driving the built hamisim binary (docs/live.md, "Real Kubernetes").
#   scripts/test-interop.sh [go test arguments...]   e.g. -run 'TestLive/DeviceExhaustion'
# Needs build/src/cli/hamisim (scripts/build.sh release). The whole go test output goes to
# build/interop.log; the terminal gets each test's result, its log lines and the count of pods
# the real kube-scheduler bound through hamisim. Without arguments it also checks the module
# with gofmt, go vet and staticcheck. Prints "interop: N passed, M failed" last.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

if ! command -v go >/dev/null; then
  echo "interop: skipped: no Go toolchain on PATH (the suite needs Go >= 1.26 and the Go module proxy)"
  echo "interop: 0 passed, 0 failed"
  exit 0
fi
bin="${HAMISIM_BIN:-$root/build/src/cli/hamisim}"
if [ ! -x "$bin" ]; then
  echo "interop: $bin is missing: run scripts/build.sh release first" >&2
  echo "interop: 0 passed, 1 failed"
  exit 1
fi
log="$root/build/interop.log"
mkdir -p "$root/build"
# One test binary at a time (-p 1): the live scenarios time real components, and the
# differential tests would take their CPU.
# Go's module and build caches live in their default places ($HOME/go/pkg/mod,
# $HOME/.cache/go-build) and are kept between runs, as ccache is: a warm run compiles nothing.
status=0
(cd interop && HAMISIM_BIN="$bin" go test -p 1 -count=1 -v -timeout 40m "${@:-./...}") >"$log" 2>&1 || status=$?
# Results and the tests' own lines, without the control plane's klog output.
grep -E '^(=== RUN|\s*--- (PASS|FAIL|SKIP)|\s+[a-z_]+_test\.go:[0-9]+:|\s+case [0-9]+ |interop:|differential:|ok |FAIL|panic:)' "$log" \
  | grep -v '^=== RUN' || true
pass=$(grep -cE '^\s*--- PASS' "$log" || true)
fail=$(grep -cE '^\s*--- FAIL' "$log" || true)
if [ "$status" -ne 0 ] && [ "$fail" -eq 0 ]; then
  # The build failed, or a test binary panicked or timed out before it could report.
  tail -n 60 "$log" >&2
  fail=1
fi
# Go's conventions, on the whole module (issue #48): gofmt, go vet and staticcheck, each one
# check in the count. staticcheck is taken from the module proxy at a pinned version and kept
# in Go's caches like the rest; when the proxy cannot serve it, the check says so and is
# skipped rather than failed.
go_check() {  # name, command...
  local name=$1 out
  shift
  if out=$("$@" 2>&1) && [ -z "$out" ]; then
    echo "    --- PASS: go $name"
    pass=$((pass + 1))
  else
    echo "    --- FAIL: go $name"
    printf '%s\n' "$out" | head -n 40
    fail=$((fail + 1))
  fi
}
if [ $# -eq 0 ]; then
  go_check "gofmt -l" bash -c 'cd interop && gofmt -l .'
  go_check vet bash -c 'cd interop && go vet ./... 2>&1'
  staticcheck="honnef.co/go/tools/cmd/staticcheck@v0.8.2"
  if (cd interop && go run "$staticcheck" -version >/dev/null 2>&1); then
    go_check staticcheck bash -c "cd interop && go run $staticcheck ./..."
  else
    echo "    --- SKIP: go staticcheck ($staticcheck: the Go module proxy did not serve it)"
  fi
fi
echo "interop: full output in $log"
echo "interop: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

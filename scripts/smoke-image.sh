#!/usr/bin/env bash
# Smoke test of the image scripts/build-image.sh made: runs its entry points and probes them.
#
#   scripts/smoke-image.sh [OUT]        # OUT: build-image/ by default
#
# How it runs the image: with podman when `podman run` works on this machine (RUNNER=podman),
# otherwise (RUNNER=chroot) on the root filesystem unpacked from the OCI layout by umoci, in a
# private mount and PID namespace (unshare) with chroot, as the image user 65532:65532 and with
# the image's PATH. The network namespace is the host's in both cases, so the probes go to
# 127.0.0.1 only.
#
# What it checks:
#   1. `hamisim --version` and `scheduler version` print the version (every library resolves),
#      and `hamisim plan` with no arguments plans the bundled example;
#   2. the entry point `hamisim serve` on 127.0.0.1 answers GET /healthz 200 and /readyz 200 on
#      the listener and the metrics listener, and /metrics;
#   3. `scheduler`, found through PATH, with HAMi's flags as HAMi's chart passes them
#      (--http_bind, --cert_file/--key_file, --debug, -v=4, ...; the bundled snapshot as cluster),
#      binds 127.0.0.1:443 as user 65532 thanks to its file capability (HAMi's chart binds :443
#      with no securityContext), answers /healthz and /readyz over HTTPS and a loopback
#      POST /filter; `hamisim` without the capability cannot bind :443;
#   4. SIGTERM stops the server within its shutdown grace.
# Exit 0 when all pass; prints "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(realpath "${1:-build-image}")"
layout="$out/oci"
[ -d "$layout" ] || { echo "smoke-image: no OCI layout at $layout (run scripts/build-image.sh)" >&2; exit 1; }
tag="${TAG:-$(sed -n 's/.*"org.opencontainers.image.ref.name":"\([^"]*\)".*/\1/p' "$layout/index.json" | head -n1)}"
need() { command -v "$1" >/dev/null || { echo "smoke-image: $1 not found" >&2; exit 1; }; }
need curl
need umoci

passed=0
failed=0
ok() { echo "ok:   $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }

image_path="/opt/hamisim/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
work="$(mktemp -d)"
pids=()
podman_image=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
  if [ -n "$podman_image" ]; then podman rmi -f "$podman_image" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

runner="${RUNNER:-}"
if [ "${runner:-podman}" = podman ] && command -v podman >/dev/null; then
  # By image ID: the layout's tag is a bare version, which podman would turn into a name.
  podman_image="$(podman pull -q "oci:$layout:$tag" 2>/dev/null | tail -n1 || true)"
fi
if [ -z "$runner" ]; then
  runner=chroot
  # podman may be installed but unable to run containers here (a sandbox that refuses
  # setrlimit or cgroups): then the unpacked root filesystem it is.
  if [ -n "$podman_image" ] &&
     podman run --rm --network host "$podman_image" --version >/dev/null 2>&1; then
    runner=podman
  fi
fi
echo "== runner: $runner (image tag $tag) =="

if [ "$runner" = chroot ]; then
  need unshare
  need chroot
  umoci unpack --image "$layout:$tag" "$work/bundle" >/dev/null
  rootfs="$work/bundle/rootfs"
fi

# run_image <program> <args...>: runs a program of the image as 65532:65532 in the foreground.
run_image() {
  local prog="$1"
  shift
  if [ "$runner" = podman ]; then
    exec podman run --rm --network host --entrypoint "$prog" "$podman_image" "$@"
  else
    # The program is PID 1 of a new PID namespace, as in a container; chroot finds it through
    # the image's PATH.
    exec unshare --mount --pid --fork --kill-child \
      env -i PATH="$image_path" HOME=/nonexistent \
      chroot --userspec=65532:65532 "$rootfs" "$prog" "$@"
  fi
}

# stop <pid of a background run_image>: SIGTERM to the program itself (unshare ignores it),
# then wait up to 30 s. Prints yes when it stopped.
stop() {
  local target="$1" child
  if [ "$runner" = chroot ]; then
    child="$(pgrep -P "$1" | head -n1 || true)"
    [ -n "$child" ] && target="$child"
  fi
  kill -TERM "$target" 2>/dev/null || true
  for _ in $(seq 1 300); do
    if ! kill -0 "$1" 2>/dev/null; then echo yes; return; fi
    sleep 0.1
  done
  kill -KILL "$1" 2>/dev/null || true
  echo no
}

free_port() {  # a loopback port nothing listens on
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    ss -Hltn "sport = :$p" | grep -q . || { echo "$p"; return; }
  done
}

# wait_http <url> <seconds>: the status code once the server answers, or 000.
wait_http() {
  local code=000
  for _ in $(seq 1 $(($2 * 10))); do
    code="$(curl -sk -o /dev/null -w '%{http_code}' --max-time 1 "$1" || true)"
    [ "$code" != 000 ] && break
    sleep 0.1
  done
  echo "$code"
}

# 1. versions
v="$( (run_image hamisim --version) 2>&1 || true)"
case "$v" in hamisim\ *) ok "hamisim --version: $v" ;; *) bad "hamisim --version: $v" ;; esac
# HAMi's binary prints its build with the subcommand `version`; before the scheduler entry
# point existed, `scheduler` was plain hamisim.
v="$( (run_image scheduler version) 2>&1 || (run_image scheduler --version) 2>&1 || true)"
case "$v" in
  *[0-9].[0-9]*) ok "scheduler version (through PATH): $(head -n1 <<< "$v")" ;;
  *) bad "scheduler version: $v" ;;
esac

# `hamisim plan` with no arguments plans the example bundled in the image (issue #47: it looked
# at the build machine's checkout).
v="$( (run_image hamisim plan) 2>&1 || true)"
case "$v" in
  *"bundled example in /opt/hamisim/share/hamisim/examples/plan"*"Decision:"*)
    ok "hamisim plan (no arguments): $(grep -m1 '^Decision:' <<< "$v")" ;;
  *) bad "hamisim plan (no arguments): $v" ;;
esac

# 2. the entry point serves and answers its probes
port="$(free_port)"
mport="$(free_port)"
run_image hamisim serve --listen "127.0.0.1:$port" --metrics-listen "127.0.0.1:$mport" \
  --readyz-scope=simulation > "$work/serve.log" 2>&1 &
pids+=($!)
serve_pid=$!
code="$(wait_http "http://127.0.0.1:$port/healthz" 20)"
[ "$code" = 200 ] && ok "serve: GET /healthz 200 on the listener" || bad "serve: GET /healthz -> $code"
code="$(wait_http "http://127.0.0.1:$port/readyz" 10)"
[ "$code" = 200 ] && ok "serve: GET /readyz 200" || bad "serve: GET /readyz -> $code"
code="$(wait_http "http://127.0.0.1:$mport/healthz" 10)"
[ "$code" = 200 ] && ok "serve: GET /healthz 200 on the metrics listener" ||
  bad "serve: metrics listener /healthz -> $code"
metrics="$(curl -s --max-time 2 "http://127.0.0.1:$mport/metrics" || true)"
if grep -q '^# TYPE hamisim_' <<< "$metrics"; then
  ok "serve: GET /metrics has hamisim_ families"
else
  bad "serve: /metrics"
fi
# 4. SIGTERM, as kubelet sends it
stopped="$(stop "$serve_pid")"
[ "$stopped" = yes ] && ok "serve: stops on SIGTERM" || bad "serve: still running 30 s after SIGTERM"

# 3. `scheduler` binds :443 as a non-root user through its file capability.
if ss -Hltn 'sport = :443' | grep -q .; then
  echo "skip: 127.0.0.1:443 is in use on this machine"
else
  mport="$(free_port)"
  scheme=http
  # HAMi's flags when the scheduler entry point has them (as HAMi's chart passes them, with
  # the bundled snapshot as cluster and, in the chroot, the chart's TLS files), else serve's.
  if (run_image scheduler --help) 2>&1 | grep -q -- '--http_bind'; then
    args=(--http_bind=127.0.0.1:443 --metrics-bind-address="127.0.0.1:$mport"
          --scheduler-name=hami-scheduler --node-scheduler-policy=binpack
          --gpu-scheduler-policy=spread --debug -v=4
          --cluster-snapshot=/opt/hamisim/share/hamisim/examples/live)
    if [ "$runner" = chroot ] && command -v openssl >/dev/null; then
      mkdir -p "$rootfs/tls"
      openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
        -subj /CN=hami-scheduler.kube-system.svc -addext subjectAltName=IP:127.0.0.1 \
        -keyout "$rootfs/tls/tls.key" -out "$rootfs/tls/tls.crt" 2>/dev/null
      chmod 0644 "$rootfs/tls/tls.key"
      args+=(--cert_file=/tls/tls.crt --key_file=/tls/tls.key)
      scheme=https
    fi
  else
    args=(serve --listen 127.0.0.1:443 --metrics-listen "127.0.0.1:$mport" --readyz-scope=simulation)
  fi
  run_image scheduler "${args[@]}" > "$work/scheduler.log" 2>&1 &
  pids+=($!)
  code="$(wait_http "$scheme://127.0.0.1:443/healthz" 20)"
  if [ "$code" = 200 ]; then
    ok "scheduler ${args[0]}: binds 127.0.0.1:443 as 65532 and answers $scheme /healthz"
  else
    bad "scheduler on :443 -> $code: $(tail -n 3 "$work/scheduler.log")"
  fi
  code="$(wait_http "$scheme://127.0.0.1:443/readyz" 10)"
  [ "$code" = 200 ] && ok "scheduler: GET /readyz 200" || bad "scheduler: /readyz -> $code"
  # kube-scheduler's call, from loopback as in HAMi's pod: a filter on the snapshot's node.
  if [ "${args[0]}" != serve ]; then
    answer="$(curl -sk --max-time 10 -XPOST -H 'Content-Type: application/json' \
      --data @examples/live/filter-1.json "$scheme://127.0.0.1:443/filter" || true)"
    case "$answer" in
      *'"NodeNames":["gpu-node-1"]'*) ok "scheduler: POST /filter from loopback places the pod" ;;
      *) bad "scheduler: POST /filter -> $answer" ;;
    esac
  fi
  stop "${pids[-1]}" >/dev/null
  # Without the capability the same bind fails: the capability, not root, is what allows it.
  if (run_image hamisim serve --listen 127.0.0.1:443 --metrics-listen "") > "$work/nocap.log" 2>&1; then
    bad "hamisim (no file capability) bound :443 as 65532"
  else
    ok "hamisim without the capability cannot bind :443 ($(grep -o -i 'permission denied' "$work/nocap.log" | head -n1))"
  fi
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

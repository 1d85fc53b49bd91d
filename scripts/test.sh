#!/usr/bin/env bash
# Quick start, command 2: runs every test: unit, integration and end-to-end tests in a release
# build, the same suite under ASan+UBSan, the threaded tests under TSan, and a short run of every
# fuzz target (built with the ASan+UBSan build).
#   FUZZ_SECONDS=N   seconds per fuzz target (default 20)
#   HAMISIM_QUICK=1  release build, its tests and the interop suite only (for iterating)
#   HAMISIM_INTEROP=0  skip the Go interop suite (scripts/test-interop.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
phase_title=""
phase_start=$SECONDS
phase_times=()
phase() {  # phase <title>: ends the current phase (printing its time) and starts the next
  if [ -n "$phase_title" ]; then
    local took=$((SECONDS - phase_start))
    echo "   ($phase_title took $took s)"
    phase_times+=("$(printf '%6d s  %s' "$took" "$phase_title")")
  fi
  phase_title="$1"
  phase_start=$SECONDS
  [ -z "$1" ] || echo "== $1 =="
}

# Sanitizer reports must name files and lines. clang-19 does not bring a symbolizer; llvm-19
# (scripts/install-deps.sh) does, and every sanitized run is pointed at it.
symbolizer=/usr/lib/llvm-19/bin/llvm-symbolizer
sym="external_symbolizer_path=$symbolizer"

run_suite() {  # run_suite <label> <build dir> [extra ctest arguments...]
  local label="$1" dir="$2"
  shift 2
  local log
  log="$dir/ctest-$(echo "$label" | tr -c 'a-zA-Z0-9\n' '-').log"
  echo "== $label: ctest ($dir) =="
  if ctest --test-dir "$dir" --output-on-failure -j2 --timeout 600 "$@" | tee "$log"; then
    :
  fi
  local line
  line=$(grep -E "tests passed, [0-9]+ tests failed out of [0-9]+" "$log" | tail -n1 || true)
  if [ -z "$line" ]; then
    echo "$label: ctest did not report a result" >&2
    failed=$((failed + 1))
    return
  fi
  local total fails
  total=$(echo "$line" | sed -E 's/.*out of ([0-9]+).*/\1/')
  fails=$(echo "$line" | sed -E 's/.*, ([0-9]+) tests failed.*/\1/')
  passed=$((passed + total - fails))
  failed=$((failed + fails))
}

# check_symbolized <label> <probe command...>: runs a deliberately defective program and checks
# that its sanitizer report names sanitizer_probe.cpp with a line number; shows the frames.
check_symbolized() {
  local label="$1"
  shift
  local out
  out=$("$@" 2>&1 || true)
  if echo "$out" | grep -qE "sanitizer_probe\.cpp:[0-9]+"; then
    echo "$label report is symbolized:"
    echo "$out" | grep -E "^ +#[0-9]+ .*sanitizer_probe\.cpp:[0-9]+" | head -n 4
    passed=$((passed + 1))
  else
    echo "$out" | head -n 30 >&2
    echo "$label: sanitizer report has no file and line (is $symbolizer installed?)" >&2
    failed=$((failed + 1))
  fi
}

phase "install dependencies"
scripts/install-deps.sh
phase "release build"
scripts/build.sh release
phase "release: tests"
# The container image (ctest image_smoke: scripts/build-image.sh, then scripts/smoke-image.sh).
# CI runs as root, so it builds and smoke-tests the image (build-image.sh installs mmdebstrap
# and umoci when missing); elsewhere it runs only when HAMISIM_IMAGE_TEST=1 asks.
# The release binary only: the sanitizer suites below have the test too, and skip it.
image_test="${HAMISIM_IMAGE_TEST:-}"
if [ -n "${CI:-}" ] && [ "$(id -u)" = 0 ] && [ -z "$image_test" ]; then image_test=1; fi
HAMISIM_IMAGE_TEST="$image_test" run_suite release build

# The Go interop suite: a real kube-apiserver and kube-scheduler drive the release binary.
if [ "${HAMISIM_INTEROP:-1}" != "0" ]; then
  phase "interop: real kube-apiserver and kube-scheduler (Go)"
  interop_out=$(mktemp)
  scripts/test-interop.sh | tee "$interop_out" || true
  interop_line=$(grep -E '^interop: [0-9]+ passed, [0-9]+ failed$' "$interop_out" | tail -n1 || true)
  if [ -z "$interop_line" ]; then
    echo "interop: the suite did not report a result" >&2
    failed=$((failed + 1))
  else
    passed=$((passed + $(echo "$interop_line" | sed -E 's/^interop: ([0-9]+) passed.*/\1/')))
    failed=$((failed + $(echo "$interop_line" | sed -E 's/.* ([0-9]+) failed$/\1/')))
  fi
  rm -f "$interop_out"
fi

if [ "${HAMISIM_QUICK:-0}" != "1" ]; then
  phase "ASan+UBSan build"
  scripts/build.sh asan
  phase "ASan+UBSan: tests"
  # The load test runs 60 s in the release suite; under the sanitizers 10 s shows the same bugs.
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:$sym"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:$sym"
  check_symbolized ASan build-asan/tests/support/sanitizer_probe use-after-free
  HAMISIM_LOAD_SECONDS=10 run_suite asan build-asan

  # Only the executables marked THREADS run under TSan: the others cannot race, because in the
  # release build above they link a guard that aborts on any new thread (cmake/hamisim.cmake).
  # A race may show in one run of three, so each threaded test runs up to three times.
  phase "TSan build"
  scripts/build.sh tsan threaded_tests sanitizer_probe
  phase "TSan: threaded tests, three runs"
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:$sym:suppressions=$PWD/tests/tsan.supp"
  check_symbolized TSan build-tsan/tests/support/sanitizer_probe race
  HAMISIM_LOAD_SECONDS=10 run_suite "tsan, threaded tests" build-tsan -L threads \
    --repeat until-fail:3

  # The fuzz targets were built with the ASan+UBSan build. libFuzzer reports the crash itself;
  # the sanitizers only need to symbolize. Each target runs FUZZ_SECONDS on one core, as many
  # at once as the machine has cores.
  export ASAN_OPTIONS="$sym" UBSAN_OPTIONS="print_stacktrace=1:$sym"
  phase "fuzz smoke"
  fuzz_one() {  # fuzz_one <target>: runs it for FUZZ_SECONDS, logging to build-asan/<target>.log
    local t="$1" corpus="tests/fuzz/corpus/$1" work="build-asan/corpus-$1"
    mkdir -p "$work" "$corpus"
    "build-asan/tests/fuzz/$t" -max_total_time="${FUZZ_SECONDS:-20}" -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=0 "$work" "$corpus" >"build-asan/$t.log" 2>&1
  }
  fuzz_done() {  # fuzz_done <target> <exit status>
    if [ "$2" -eq 0 ]; then
      echo "-- $1 passed"
      passed=$((passed + 1))
    else
      tail -n 40 "build-asan/$1.log" >&2
      echo "$1: FAILED (log: build-asan/$1.log)" >&2
      failed=$((failed + 1))
    fi
  }
  declare -A fuzzing=()  # pid -> target
  slots=$(nproc)
  for f in tests/fuzz/fuzz_*.cpp; do
    t=$(basename "$f" .cpp)
    while [ "${#fuzzing[@]}" -ge "$slots" ]; do
      status=0
      wait -n -p pid "${!fuzzing[@]}" || status=$?
      fuzz_done "${fuzzing[$pid]}" "$status"
      unset "fuzzing[$pid]"
    done
    echo "-- $t (${FUZZ_SECONDS:-20}s)"
    fuzz_one "$t" &
    fuzzing[$!]=$t
  done
  for pid in "${!fuzzing[@]}"; do
    status=0
    wait "$pid" || status=$?
    fuzz_done "${fuzzing[$pid]}" "$status"
  done
fi

phase ""
echo
echo "Time per phase:"
printf '%s\n' "${phase_times[@]}"
printf '%6d s  all\n' "$SECONDS"
echo
echo "hamisim: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

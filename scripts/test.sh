#!/usr/bin/env bash
# Quick start, command 2: runs every test: unit, integration and end-to-end tests in a release
# build, the same suite under ASan+UBSan and under TSan, and a short run of every fuzz target.
#   FUZZ_SECONDS=N   seconds per fuzz target (default 20)
#   HAMISIM_QUICK=1  release build only (for iterating)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

passed=0
failed=0
run_suite() {  # run_suite <label> <build dir>
  local label="$1" dir="$2"
  echo "== $label: ctest ($dir) =="
  if ctest --test-dir "$dir" --output-on-failure -j2 --timeout 600 | tee "$dir/ctest.log"; then
    :
  fi
  local line
  line=$(grep -E "tests passed, [0-9]+ tests failed out of [0-9]+" "$dir/ctest.log" | tail -n1 || true)
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

echo "== release build =="
scripts/build.sh release
run_suite release build

if [ "${HAMISIM_QUICK:-0}" != "1" ]; then
  echo "== ASan+UBSan build =="
  scripts/build.sh asan
  # The load test runs 60 s in the release suite; under the sanitizers 10 s shows the same bugs.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    HAMISIM_LOAD_SECONDS=10 run_suite asan build-asan

  echo "== TSan build =="
  scripts/build.sh tsan
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 HAMISIM_LOAD_SECONDS=10 \
    run_suite tsan build-tsan

  echo "== fuzz smoke =="
  targets=()
  for f in tests/fuzz/fuzz_*.cpp; do targets+=("$(basename "$f" .cpp)"); done
  scripts/build.sh fuzz "${targets[@]}"
  for t in "${targets[@]}"; do
    corpus="tests/fuzz/corpus/$t"
    work="build-fuzz/corpus-$t"
    mkdir -p "$work" "$corpus"
    echo "-- $t (${FUZZ_SECONDS:-20}s)"
    if "build-fuzz/tests/fuzz/$t" -max_total_time="${FUZZ_SECONDS:-20}" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=0 "$work" "$corpus" >"build-fuzz/$t.log" 2>&1; then
      passed=$((passed + 1))
    else
      tail -n 40 "build-fuzz/$t.log" >&2
      echo "$t: FAILED (log: build-fuzz/$t.log)" >&2
      failed=$((failed + 1))
    fi
  done
fi

echo
echo "hamisim: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# Configures and builds one flavour of hamisim.
#   scripts/build.sh [release|asan|tsan|fuzz] [ninja targets...]
set -euo pipefail
cd "$(dirname "$0")/.."
# Let ccache reuse objects across checkouts in different folders (CI clones afresh).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
# Four flavours (release, ASan+UBSan, TSan, fuzz) with debug info outgrow ccache's 5 GB default,
# and a cache that evicts one flavour to fit the next makes every CI run cold.
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-20G}"
# Debug information is line tables only (GCC -g1, clang -gline-tables-only): backtraces and
# sanitizer reports still name every function, file and line, and the builds compile about a
# third faster than with full -g (docs/development.md). For variables in gdb, configure a build
# of your own with -g.
gcc_lines="-g1"
clang_lines="-gline-tables-only"
flavour="${1:-release}"
shift || true
case "$flavour" in
  release) dir=build; args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo
            "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 $gcc_lines -DNDEBUG") ;;
  # The ASan+UBSan build also holds the fuzz targets: its objects carry libFuzzer's coverage
  # instrumentation (-fsanitize=fuzzer-no-link), so the fuzz smoke needs no build of its own.
  asan) dir=build-asan; args=(-DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=$clang_lines"
          -DHAMISIM_SANITIZE=address,undefined
          -DHAMISIM_FUZZ=ON -DHAMISIM_BENCH=OFF -DCMAKE_CXX_COMPILER=clang++-19) ;;
  tsan) dir=build-tsan; args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo
          "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 $clang_lines -DNDEBUG" -DHAMISIM_SANITIZE=thread
          -DHAMISIM_BENCH=OFF -DCMAKE_CXX_COMPILER=clang++-19) ;;
  # Optimized fuzz targets, for long runs (tests/fuzz/README.md).
  fuzz) dir=build-fuzz; args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo
          "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 $clang_lines -DNDEBUG" -DHAMISIM_SANITIZE=address,undefined
          -DHAMISIM_FUZZ=ON -DHAMISIM_TESTS=ON -DHAMISIM_BENCH=OFF -DCMAKE_CXX_COMPILER=clang++-19) ;;
  *) echo "unknown flavour: $flavour (release|asan|tsan|fuzz)" >&2; exit 2 ;;
esac
# Unity builds: each target's sources are compiled in batches of 8 as one translation unit, so
# the heavy headers (Boost.Beast, simdjson, GTest) are parsed and their templates instantiated
# once per batch instead of once per file: the cold build takes a fraction of the time
# (docs/development.md). The ASan+UBSan build compiles src/ file by file (its tests in
# batches), so a source that compiles only because an earlier file of its batch included
# something still fails somewhere. HAMISIM_UNITY=0 turns batching off, for iterating on one
# file.
unity=ON
unity_tests=OFF
if [ "$flavour" = asan ]; then unity=OFF; unity_tests=ON; fi
# The sanitizer builds run each test executable as 4 GoogleTest shards rather than one process
# per test: a sanitized process costs 0.1-0.25 s to start and to leak-check at exit, which was
# most of their test phases (docs/development.md).
shards=0
if [ "$flavour" = asan ] || [ "$flavour" = tsan ]; then shards=4; fi
args+=("-DHAMISIM_TEST_SHARDS=$shards")
if [ "${HAMISIM_UNITY:-1}" = 0 ]; then unity=OFF; unity_tests=OFF; fi
args+=("-DCMAKE_UNITY_BUILD=$unity" "-DHAMISIM_UNITY_TESTS=$unity_tests")
# Configured every time (a few seconds): a directory made by an older script gets today's flags.
cmake -S . -B "$dir" -G Ninja "${args[@]}" >/dev/null
ninja -C "$dir" "$@"

#!/usr/bin/env bash
# ctest entry for the image: builds it from the freshly built binary with
# scripts/build-image.sh and runs scripts/smoke-image.sh on it. Slow-ish (downloads the Debian
# packages), needs root, mmdebstrap, umoci and the Debian archive, so it runs only when asked:
#   HAMISIM_IMAGE_TEST=1 ctest --test-dir build -R image_smoke --output-on-failure
# Otherwise it reports itself skipped (exit 77).
#   image_smoke.sh <hamisim binary> <output dir>
set -euo pipefail
if [ "${HAMISIM_IMAGE_TEST:-0}" != 1 ]; then
  echo "skipped: set HAMISIM_IMAGE_TEST=1 to build and smoke-test the container image"
  exit 77
fi
here="$(cd "$(dirname "$0")/../.." && pwd)"
BINARY="$1" OUT="$2" "$here/scripts/build-image.sh"
"$here/scripts/smoke-image.sh" "$2"

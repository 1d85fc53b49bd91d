#!/usr/bin/env bash
# The plan report of issue #30's four inputs rendered in headless Chromium: a screenshot of each
# into docs/images/ (shown in docs/plan.md), the printed page count of each (A4 PDF), and the
# HTML size, checked against the issue's targets (500 nodes: <= 150 KB and <= 15 pages; the
# +98-node plan: <= 200 KB). Skips, saying why, where Chromium is not installed.
#
#   scripts/report-pictures.sh [path/to/hamisim] [images dir]
set -euo pipefail

hamisim=${1:-build/src/cli/hamisim}
images=${2:-docs/images}
chromium=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $chromium ]]; then
  echo "report-pictures: skipped: Chromium is not installed (apt-get install chromium)"
  exit 0
fi
[[ -x $hamisim ]] || { echo "report-pictures: $hamisim is not an executable" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$images"

# Chromium as root in a container: no sandbox, no GPU, no network chatter, a fresh profile.
render() {  # render <html> <flag...>
  local html=$1
  shift
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --hide-scrollbars --user-data-dir="$work/profile" "$@" "file://$html" >/dev/null 2>&1
}

pages() {  # the page objects of a PDF Chromium wrote
  python3 -c 'import re,sys; print(len(re.findall(rb"/Type\s*/Page[^s]", open(sys.argv[1],"rb").read())))' "$1"
}

status=0
printf '%-10s %10s %6s  %s\n' input "HTML bytes" pages target
while read -r name max_kb max_pages args; do
  if [[ $name == example ]]; then
    "$hamisim" plan -o html >"$work/$name.html" 2>/dev/null
  else
    # shellcheck disable=SC2086  # the gen flags are words
    "$hamisim" gen $args --out "$work/$name" >/dev/null 2>&1
    "$hamisim" plan --cluster "$work/$name/cluster.json" \
      --node-groups "$work/$name/node-groups.yaml" \
      --device-profiles "$work/$name/device-profiles.yaml" -o html >"$work/$name.html"
  fi
  render "$work/$name.html" --no-pdf-header-footer --print-to-pdf="$work/$name.pdf"
  render "$work/$name.html" --window-size=1280,1600 --screenshot="$images/plan-$name.png"
  bytes=$(wc -c <"$work/$name.html")
  n=$(pages "$work/$name.pdf")
  verdict="<= ${max_kb} KB, <= ${max_pages} pages"
  if ((bytes > max_kb * 1024 || n > max_pages)); then
    verdict="$verdict: NOT MET"
    status=1
  fi
  printf '%-10s %10d %6d  %s\n' "$name" "$bytes" "$n" "$verdict"
done <<'INPUTS'
example 20 3
gen100 60 8
gen500 150 15 --nodes 500 --pending 1000 --groups 40 --node-groups 12
gen300 200 15 --nodes 300 --pending 2000 --groups 20 --node-groups 8 --pods-per-node 30 --seed 4
INPUTS
exit $status

#!/usr/bin/env bash
# `hamisim plan` on one generated cluster in its two forms, HAMi annotations and HAMi's DRA mode
# (`gen --dra`), for issue #28's target: the DRA run within 2x the annotation run.
#   bench/dra_plan.sh [hamisim] [runs]
# Generates both forms into $OUT (default /tmp/hamisim-dra-plan), then runs `plan -o json`
# on each, alternating (annotation, DRA, annotation, ...) so both see the same machine, under
# /usr/bin/time -v. One line per run (wall, user, sys, max RSS), then the medians and the
# DRA/annotation ratio of wall and of CPU (user + sys). Size flags: NODES, PENDING,
# PODS_PER_NODE, NODE_GROUPS, PENDING_GROUPS (--groups; gen's defaults when unset), SEED.
set -euo pipefail
HAMISIM=${1:-build/src/cli/hamisim}
RUNS=${2:-3}
OUT=${OUT:-/tmp/hamisim-dra-plan}
size=(--nodes "${NODES:-1000}" --pending "${PENDING:-5000}" --pods-per-node "${PODS_PER_NODE:-30}"
      --node-groups "${NODE_GROUPS:-20}" --seed "${SEED:-1}")
if [ -n "${PENDING_GROUPS:-}" ]; then size+=(--groups "$PENDING_GROUPS"); fi

# --force: a second run writes over the first one's files (same names).
"$HAMISIM" gen "${size[@]}" --force --out "$OUT/annotations"
"$HAMISIM" gen "${size[@]}" --dra --force --out "$OUT/dra"

results=$(mktemp)
trap 'rm -f "$results"' EXIT
for run in $(seq "$RUNS"); do
  for form in annotations dra; do
    dir="$OUT/$form"
    /usr/bin/time -v -o "$dir/time.txt" "$HAMISIM" plan --cluster "$dir/cluster.json" \
      --node-groups "$dir/node-groups.yaml" --device-profiles "$dir/device-profiles.yaml" \
      -o json >"$dir/plan.json"
    awk -v form="$form" -v run="$run" -F': ' '
      /User time/ {u = $2} /System time/ {s = $2} /Maximum resident/ {r = $2}
      /Elapsed \(wall clock\)/ {n = split($2, t, ":"); w = 0; for (i = 1; i <= n; i++) w = w * 60 + t[i]}
      END {printf "%s %d %.2f %.2f %.2f %d\n", form, run, w, u, s, r}' "$dir/time.txt" >>"$results"
  done
done

printf '%-12s %4s %7s %7s %7s %10s\n' form run wall_s user_s sys_s maxrss_MB
awk '{printf "%-12s %4d %7.2f %7.2f %7.2f %10.0f\n", $1, $2, $3, $4, $5, $6 / 1024}' "$results"
median() {  # form column
  awk -v f="$1" -v c="$2" '$1 == f {print (c == "cpu") ? $4 + $5 : $c}' "$results" | sort -g |
    awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
aw=$(median annotations 3) dw=$(median dra 3) ac=$(median annotations cpu) dc=$(median dra cpu)
ar=$(median annotations 6) dr=$(median dra 6)
printf 'median wall: annotations %.2f s, DRA %.2f s, DRA/annotations %.2f\n' "$aw" "$dw" \
  "$(echo "$dw / $aw" | bc -l)"
printf 'median CPU:  annotations %.2f s, DRA %.2f s, DRA/annotations %.2f\n' "$ac" "$dc" \
  "$(echo "$dc / $ac" | bc -l)"
printf 'median RSS:  annotations %.0f MB, DRA %.0f MB\n' "$(echo "$ar / 1024" | bc -l)" \
  "$(echo "$dr / 1024" | bc -l)"

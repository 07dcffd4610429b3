#!/usr/bin/env bash
# bench/lab_start.sh [RUNS] — how long scripts/lab-cluster.sh takes to bring
# a lab up (4 main + 1 profiling node, until every node is idle) and down, on
# each profile: `site` in a fresh DIR (MariaDB's system tables bootstrapped,
# slurmdbd's schema and the lab's associations made) and again in the same
# DIR (database kept), and `simple`.  Medians of RUNS runs (default 3).
# Needs root and the lab's packages (.ci/run).  Markdown rows on stdout;
# docs/live.md ("Lab cluster, tests and demo") records them.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
lab=scripts/lab-cluster.sh
work=$(mktemp -d /tmp/lab-start.XXXXXX)
trap 'for d in "$work"/*/; do bash $lab down "$d" >/dev/null 2>&1 || true; done; rm -rf "$work"' EXIT

median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
seconds() { # command... -> wall seconds
    local t0=$EPOCHREALTIME
    "$@" >/dev/null
    echo "$EPOCHREALTIME $t0" | awk '{printf "%.2f\n", $1 - $2}'
}

declare -A up down
for ((r = 1; r <= runs; r++)); do
    for profile in site simple; do
        dir=$work/$profile-$r
        up[$profile]+="$(seconds bash $lab up "$dir" --profile "$profile") "
        down[$profile]+="$(seconds bash $lab down "$dir") "
    done
    # The same site DIR again: the database and its associations are kept.
    dir=$work/site-$r
    rm -f "$dir/pids.stopped"
    up[site-again]+="$(seconds bash $lab up "$dir") "
    down[site-again]+="$(seconds bash $lab down "$dir") "
done

echo "| profile | up s (median of $runs) | down s |"
echo "|---|---|---|"
for profile in simple site site-again; do
    printf '| %s | %s | %s |\n' "$profile" \
        "$(tr ' ' '\n' <<<"${up[$profile]}" | grep . | median)" \
        "$(tr ' ' '\n' <<<"${down[$profile]}" | grep . | median)"
done

#!/usr/bin/env bash
# bench/trace_load.sh OLD_TRACE_LOAD [ROUNDS] — the trace loader against an
# older build of itself and against one awk pass, at the same time (issue 14;
# on a shared machine only same-time comparisons mean anything).
# Each round runs, one after the other: OLD_TRACE_LOAD (bench/trace_load.c
# linked against an older liblucid.a), build/bench/trace_load, and
# `awk -F, '{s+=$5}'` over the same file (mawk: it only splits fields).
# The loaders load the trace 5 times in one process; CPU = user + sys of the
# process / 5.  Prints every round, then the medians (default 5 rounds).
# Env: TRACE, VCS (default: the 1M-job synthetic trace of bench/scale.sh,
# $OUT/scale-1000000, made with `lucid trace synth --jobs 1000000 --nodes
# 10000` when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: bench/trace_load.sh OLD_TRACE_LOAD [ROUNDS]}
rounds=${2:-5}
out=${OUT:-bench/out}
new=build/bench/trace_load
[ -x "$new" ] || { cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build build -j2 --target trace_load lucid_cli >/dev/null; }
trace=${TRACE:-$out/scale-1000000/trace.csv}
vcs=${VCS:-$out/scale-1000000/vc_config.csv}
if [ ! -f "$trace" ]; then
    mkdir -p "$out/scale-1000000"
    build/lucid trace synth --out "$out/scale-1000000" --jobs 1000000 --nodes 10000 --vcs 15 --load 0.9 --seed 1 >/dev/null
fi
# "cpu wall" of a command, both in seconds
measure() { /usr/bin/time -f '%U %S %e' "$@" 2>&1 >/dev/null | tail -1 | awk '{print $1 + $2, $3}'; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
echo "round | old CPU s | old wall s | new CPU s | new wall s | awk CPU s | awk wall s (per load)"
for r in $(seq "$rounds"); do
    o=$(measure "$old" "$trace" "$vcs" 5)
    n=$(measure "$new" "$trace" "$vcs" 5)
    a=$(measure awk -F, '{s+=$5}' "$trace")
    echo "$o $n $a" | awk -v r="$r" '{printf "%d %.3f %.3f %.3f %.3f %.3f %.3f\n", r, $1/5, $2/5, $3/5, $4/5, $5, $6}' | tee -a "$rows"
done
for c in 2 3 4 5 6 7; do printf '%s ' "$(cut -d' ' -f$c "$rows" | median)"; done | awk '{printf "median: old %.3f CPU / %.3f wall, new %.3f / %.3f, awk %.3f / %.3f; old/new CPU %.2fx, new/awk CPU %.2f\n", $1, $2, $3, $4, $5, $6, $1/$3, $3/$5}'

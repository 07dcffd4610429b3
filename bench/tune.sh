#!/usr/bin/env bash
# bench/tune.sh [RUNS] — how long `lucid tune` takes on Venus (the issue's
# bound: under 2 minutes on this machine), median of RUNS runs (default 3):
#  1. examples/venus.ini — the authors' model outputs, knobs only;
#  2. examples/venus-online.ini — models trained online: load forecasts,
#     one online run, the replay search, then online runs of the retrain
#     periods; the stage lines say when each stage ended.
# Each run also checks its tuned file with an independent `lucid simulate`
# (the tuner's reported avg JCT must come back exactly).  Markdown rows on
# stdout; docs/tuning.md records them.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
lucid=$PWD/build/lucid
[ -x "$lucid" ] || { cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build build -j2 >/dev/null; }
out=$PWD/bench/out/tune
mkdir -p "$out"

median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

echo "| experiment | wall s (each run) | wall s (median of $runs) | CPU s (median) | best avg JCT | verified by lucid simulate |"
echo "|---|---|---|---|---|---|"
for exp in venus venus-online; do
    walls=(); cpus=(); best=""; verified=yes
    for i in $(seq "$runs"); do
        /usr/bin/time -f "%e %U %S" -o "$out/time.txt" \
            "$lucid" tune "examples/$exp.ini" --out "$out/$exp-tuned.ini" >"$out/$exp-$i.log"
        read -r wall user sys <"$out/time.txt"
        walls+=("$wall"); cpus+=("$(awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}')")
        best=$(sed -n 's/^best lucid avg_jct=\([0-9.]*\).*/\1/p' "$out/$exp-$i.log")
        # Simulate the written file from another directory (its paths are absolute).
        (cd "$out" && "$lucid" simulate "$exp-tuned.ini" --policies lucid --quiet --out "$out/$exp-check")
        got=$(awk -F, '$1 == "lucid" && $2 == "all" {print $4}' "$out/$exp-check/summary.csv")
        [ "$got" = "$best" ] || verified="NO ($got vs $best)"
        grep -E '\[[0-9.]+ s, [0-9.]+ s CPU\]' "$out/$exp-$i.log" | sed 's/^/    /' >&2 || true
    done
    echo "| $exp | ${walls[*]} | $(printf '%s\n' "${walls[@]}" | median) | $(printf '%s\n' "${cpus[@]}" | median) | $best | $verified |"
done

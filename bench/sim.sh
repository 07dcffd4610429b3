#!/usr/bin/env bash
# bench/sim.sh [RUNS] — simulator speed and memory.
#  1. All six policies on Venus (reference semantics): wall time of the whole
#     command and the simulation alone, median of RUNS runs.
#  2. Synthetic traces of 10k / 100k / 1M jobs on 100 / 1,000 / 10,000 nodes
#     (15 VCs, offered load 0.9 like Venus): fifo and lucid, wall time and
#     peak RSS, median of RUNS runs.
# Results go to stdout as Markdown rows; docs/benchmarks.md records them.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
lucid=build/lucid
[ -x "$lucid" ] || { cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build build -j2 >/dev/null; }
out=bench/out
mkdir -p "$out"

median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

echo "| run | wall s (median of $runs) | simulation s | peak RSS MB |"
echo "|---|---|---|---|"
walls=(); sims=(); rss=()
for i in $(seq "$runs"); do
    /usr/bin/time -f "%e %M" -o "$out/time.txt" "$lucid" simulate examples/venus.ini --out "$out/venus" >"$out/venus.txt"
    read -r wall kb <"$out/time.txt"
    walls+=("$wall"); rss+=("$kb")
    sims+=("$(grep -o 'simulated in [0-9.]*' "$out/venus.txt" | awk '{print $3}')")
done
echo "| Venus, 6 policies, reference | $(printf '%s\n' "${walls[@]}" | median) | $(printf '%s\n' "${sims[@]}" | median) | $(( $(printf '%s\n' "${rss[@]}" | median | cut -d. -f1) / 1024 )) |"

for spec in "10000 100" "100000 1000" "1000000 10000"; do
    set -- $spec
    jobs=$1 nodes=$2
    dir=$out/synth-$jobs
    [ -f "$dir/trace.csv" ] || "$lucid" trace synth --out "$dir" --jobs "$jobs" --nodes "$nodes" --vcs 15 --load 0.9 --seed 1 >/dev/null
    for policy in fifo lucid; do
        walls=(); sims=(); rss=()
        for i in $(seq "$runs"); do
            /usr/bin/time -f "%e %M" -o "$out/time.txt" "$lucid" simulate "$dir/experiment.ini" --policies "$policy" --compat fixed --out "$out/synth-res-$policy" >"$out/synth.txt"
            read -r wall kb <"$out/time.txt"
            walls+=("$wall"); rss+=("$kb")
            sims+=("$(grep -o 'simulated in [0-9.]*' "$out/synth.txt" | awk '{print $3}')")
        done
        echo "| $jobs jobs, $nodes nodes, $policy | $(printf '%s\n' "${walls[@]}" | median) | $(printf '%s\n' "${sims[@]}" | median) | $(( $(printf '%s\n' "${rss[@]}" | median | cut -d. -f1) / 1024 )) |"
    done
done

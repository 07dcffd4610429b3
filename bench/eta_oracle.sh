#!/usr/bin/env bash
# bench/eta_oracle.sh — the ceiling of the start-time predictions' error:
# Venus (fixed semantics, all six policies) and the synthetic second trace
# (`lucid trace synth --jobs 20000 --seed 1`) predicted with oracle duration
# estimates (each job's estimate = its trace duration, written to an
# estimates file and given as [lucid] and [qssf] estimates).  What error
# remains is the replay's (deep FIFO queues placed by volume, packing,
# arrivals to come), not the duration model's.  FIFO's schedule does not
# depend on estimates, so its rows compare like with like; Lucid orders by
# estimate x GPUs, so its schedule changes with them.  Prints
# eta-summary.csv's `all` rows per trace.
# Usage: bench/eta_oracle.sh   (docs/backfill.md records the output)
set -euo pipefail
cd "$(dirname "$0")/.."
lucid=build/lucid
out=bench/out/eta-oracle
mkdir -p "$out"
oracle() { # trace.csv -> estimates file with estimate = duration
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "duration") d = i; print "job_id,estimate"; next }
        { print $1 "," $d }' "$1" >"$2.tmp" && mv "$2.tmp" "$2"
}
rows() {
    awk -F, -v l="$1" '$2 == "all" { printf "| %s | %s | %s | %.1f %% | %.1f %% |\n", l, $1, $3, 100 * $4, 100 * $5 }' "$2"
}
echo "| trace | policy | jobs waited > 60 s | coverage P10-P90 | median relative error |"
echo "|---|---|---|---|---|"
oracle data/venus-sept/trace.csv "$out/venus-oracle.csv"
"$lucid" simulate examples/venus.ini --out "$out/venus" --set simulate.compat=fixed \
    --set lucid.estimates="$PWD/$out/venus-oracle.csv" --set qssf.estimates="$PWD/$out/venus-oracle.csv" --quiet
rows "Venus, oracle" "$out/venus/eta-summary.csv"
"$lucid" trace synth --out "$out/synth" --jobs 20000 --seed 1 >/dev/null
oracle "$out/synth/trace.csv" "$out/synth-oracle.csv"
"$lucid" simulate "$out/synth/experiment.ini" --out "$out/synth/results" --set simulate.compat=fixed \
    --set lucid.estimates="$PWD/$out/synth-oracle.csv" --set qssf.estimates="$PWD/$out/synth-oracle.csv" --quiet
rows "synth, oracle" "$out/synth/results/eta-summary.csv"

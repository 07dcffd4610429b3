#!/usr/bin/env bash
# bench/fairshare_sim.sh [OUT] — the cost and the gain of fair share in the
# simulator (docs/fairshare.md): all six policies with
# [simulate] fairshare_weight 0 (off) and 2, on Venus (examples/venus.ini as
# it is, reference semantics, and with --compat fixed), on the ten ITP
# clusters (lucid trace import of data/itp) and on a `lucid trace synth`
# trace drawn from Venus (10,000 jobs); prints the Markdown table of
# docs/fairshare.md from the runs' summary.csv (OUT, default
# bench/out/fairshare).  About two minutes on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/out/fairshare}
lucid=build/lucid
[ -x "$lucid" ] || { echo "bench/fairshare_sim.sh: build lucid first (build/lucid)" >&2; exit 1; }
mkdir -p "$out"

run() { # NAME EXPERIMENT [simulate options]
    local name=$1 exp=$2; shift 2
    for w in 0 2; do
        echo "fairshare: $name, weight $w" >&2
        "$lucid" simulate "$exp" --quiet --out "$out/results/$name-w$w" \
            --set simulate.fairshare_weight=$w "$@"
    done
}

run venus examples/venus.ini
run venus-fixed examples/venus.ini --compat fixed

rm -rf "$out/itp-src" && mkdir -p "$out/itp-src"
tar xzf data/itp/raw-traces.tar.gz -C "$out/itp-src"
[ -f "$out/itp-trace/trace.csv" ] ||
    "$lucid" trace import --format itp "$out"/itp-src/cluster*.csv --out "$out/itp-trace" \
        >/dev/null 2>"$out/itp-import.log"
run itp "$out/itp-trace/experiment.ini"

[ -f "$out/synth/trace.csv" ] ||
    "$lucid" trace synth --out "$out/synth" --jobs 10000 --seed 1 >/dev/null
run synth "$out/synth/experiment.ini" --compat fixed

python3 bench/fairshare_sim_table.py "$out"

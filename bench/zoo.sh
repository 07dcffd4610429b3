#!/usr/bin/env bash
# bench/zoo.sh [OUT] — all six policies on every trace the repository can
# make or hold: Venus (September 2020, fixed semantics), the ten ITP
# clusters (lucid trace import of data/itp), trace synth at 100k and 1M
# jobs; one table of avg JCT, delay, queue, profiler GPU-seconds, gap to the
# floor, bounded slowdown and Jain's indices written to docs/zoo.md.
# Every number comes from the runs' summary.csv (OUT, default bench/out/zoo).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/out/zoo}
lucid=build/lucid
[ -x "$lucid" ] || { cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build build -j2 >/dev/null; }
mkdir -p "$out"

run() { # NAME EXPERIMENT [simulate options]
    local name=$1 exp=$2; shift 2
    echo "zoo: $name" >&2
    "$lucid" simulate "$exp" --quiet --out "$out/results/$name" "$@"
}

run venus examples/venus.ini --compat fixed

rm -rf "$out/itp-src" && mkdir -p "$out/itp-src"
tar xzf data/itp/raw-traces.tar.gz -C "$out/itp-src"
"$lucid" trace import --format itp "$out"/itp-src/cluster*.csv --out "$out/itp-trace" >/dev/null 2>"$out/itp-import.log"
run itp "$out/itp-trace/experiment.ini"

for spec in "100000 1000" "1000000 10000"; do
    set -- $spec
    dir=$out/synth-$1
    [ -f "$dir/trace.csv" ] || "$lucid" trace synth --out "$dir" --jobs "$1" --nodes "$2" --vcs 15 --load 0.9 --seed 1 >/dev/null
    run "synth-$1" "$dir/experiment.ini" --compat fixed
done

python3 bench/zoo_table.py "$out" "$(git rev-parse --short HEAD)" >docs/zoo.md.tmp && mv docs/zoo.md.tmp docs/zoo.md
echo "zoo: wrote docs/zoo.md" >&2

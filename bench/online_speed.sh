#!/usr/bin/env bash
# bench/online_speed.sh [RUNS] — the online path's cost and what warm-started
# retraining changes (docs/benchmarks.md, docs/online.md):
#  1. `lucid simulate examples/venus-online.ini` (fixed semantics), RUNS runs
#     (default 3) with warm-started retraining (the default), one with
#     `--set lucid.warm_start=no` (every model from scratch) and one with
#     the schedule before daily estimates (weekly estimates, the first
#     duration model at the start of week 2; docs/online.md): wall and CPU
#     (user + sys) seconds, median of the runs, and online Lucid's avg JCT;
#  2. avg JCT at seeds 1, 2, 3 and 42 (the seed also drives the models'
#     bags, so this is the noise a change must be read against), warm
#     started; also from scratch with SEEDS_FULL=1 (4 more minutes);
#  3. the duration model's MAE on the 14-day Venus split: trained from
#     scratch on days 1-14 (the default `lucid model train`), and
#     warm-started on days 1-14 from the model of days 1-7.
# Markdown rows on stdout.  `bench/tune.sh` times `lucid tune`.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
lucid=$PWD/build/lucid
[ -x "$lucid" ] || { cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build build -j2 --target lucid_cli >/dev/null; }
out=$PWD/bench/out/online_speed
mkdir -p "$out"
D=data/venus-sept

median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
jct() { awk -F, '$1 == "lucid" && $2 == "all" {print $4}' "$1/summary.csv"; }

# run LABEL N ARGS...: N timed runs of `lucid simulate venus-online.ini ARGS`.
run() {
    local label=$1 n=$2; shift 2
    local walls=() cpus=() j=""
    for i in $(seq "$n"); do
        /usr/bin/time -f "%e %U %S" -o "$out/time.txt" \
            "$lucid" simulate examples/venus-online.ini --quiet --out "$out/$label" "$@"
        read -r wall user sys <"$out/time.txt"
        walls+=("$wall"); cpus+=("$(awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}')")
        j=$(jct "$out/$label")
    done
    echo "| $label | ${walls[*]} | $(printf '%s\n' "${walls[@]}" | median) | ${cpus[*]} | $(printf '%s\n' "${cpus[@]}" | median) | $j |"
}

echo "| online Venus run | wall s (each) | wall s (median) | CPU s (each) | CPU s (median) | avg JCT |"
echo "|---|---|---|---|---|---|"
run warm "$runs"
run full 1 --set lucid.warm_start=no
run weekly 1 --set lucid.estimate_period=604800 --set lucid.min_history=100

echo
echo "| retraining | seed 1 | seed 2 | seed 3 | seed 42 | mean |"
echo "|---|---|---|---|---|---|"
modes=yes
[ "${SEEDS_FULL:-0}" = 1 ] && modes="yes no"
for mode in $modes; do
    vals=()
    for s in 1 2 3 42; do
        "$lucid" simulate examples/venus-online.ini --quiet --seed "$s" --set lucid.warm_start=$mode \
            --out "$out/seed-$mode-$s"
        vals+=("$(jct "$out/seed-$mode-$s")")
    done
    mean=$(printf '%s\n' "${vals[@]}" | awk '{s += $1} END {printf "%.3f", s / NR}')
    echo "| warm_start = $mode |$(printf ' %s |' "${vals[@]}") $mean |"
done

echo
echo "| duration model, 14-day split | MAE s | R2 |"
echo "|---|---|---|"
"$lucid" model train --kind duration --data $D/trace.csv --train-until '2020-09-15 00:00:00' --out "$out/d14.json" >/dev/null
"$lucid" model train --kind duration --data $D/trace.csv --train-until '2020-09-08 00:00:00' --out "$out/d7.json" >/dev/null
"$lucid" model train --kind duration --data $D/trace.csv --train-until '2020-09-15 00:00:00' \
    --warm-start "$out/d7.json" --out "$out/d14-warm.json" >/dev/null
for m in d14 d7 d14-warm; do
    "$lucid" model eval --model "$out/$m.json" --data $D/trace.csv --from '2020-09-15 00:00:00' |
        awk -v m="$m" '$1 == "model" {printf "| %s | %.0f | %.3f |\n", m, $5, $9}'
done

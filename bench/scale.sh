#!/usr/bin/env bash
# bench/scale.sh [SIZES...] — how every policy's cost grows with the trace
# (issue 14).  For each size N (default: 10000 100000 1000000 10000000) a
# synthetic trace of N jobs on N/100 nodes (15 VCs, offered load 0.9, seed 1;
# `lucid trace synth`) is simulated once per policy (`--threads 1`, fixed
# semantics), RUNS times (default 3; env RUNS), and then all six policies in
# one command.  Reported per run: wall time of the command, the simulation
# alone (its own "simulated in W s (C s CPU)" line: wall and CPU), CPU time
# of the command (user+sys) and peak RSS; medians over the runs.  Finally
# the growth exponent per policy: the least-squares slope of log(simulation
# time) against log(N) over the sizes >= 100k, from the simulation's wall
# time and from its CPU time (on a shared machine the wall time includes
# waiting for a core; the CPU time does not).  All six at 10M jobs need ~4.5 GB
# (`[simulate] stream` turns on there: one policy's results at a time) and
# run only when 8 GB are available.  One run at 10M can be off by 40 % on a
# VM that hands freed memory back to its host (faulting in the 1.4 GB of
# per-job records then costs more; docs/benchmarks.md): for figures to
# record, BIG_RUNS=3.  Env: RUNS, BIG_RUNS (runs at sizes >= 10M, default 1),
# OUT (work folder, default bench/out).  Markdown on stdout; the traces stay
# in $OUT/scale-N for reruns.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000 1000000 10000000)
runs=${RUNS:-3}
big_runs=${BIG_RUNS:-1}
lucid=build/lucid
[ -x "$lucid" ] || { cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build build -j2 --target lucid_cli >/dev/null; }
out=${OUT:-bench/out}
mkdir -p "$out"
policies=(fifo sjf qssf srtf tiresias lucid)

median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

# measure DIR POLICIES N: prints "wall sim sim_cpu cpu rss_mb" (medians)
measure() {
    local dir=$1 list=$2 n=$3 walls=() sims=() sim_cpus=() cpus=() rss=()
    for _ in $(seq "$n"); do
        /usr/bin/time -f "%e %U %S %M" -o "$out/time.txt" "$lucid" simulate "$dir/experiment.ini" \
            --policies "$list" --compat fixed --threads 1 --out "$out/scale-res-${list//,/-}" >"$out/scale.txt" 2>/dev/null
        read -r wall user sys kb <"$out/time.txt"
        walls+=("$wall"); rss+=("$kb")
        cpus+=("$(echo "$user $sys" | awk '{print $1 + $2}')")
        sims+=("$(grep -o 'simulated in [0-9.]*' "$out/scale.txt" | awk '{print $3}')")
        sim_cpus+=("$(grep -o 's ([0-9.]* s CPU)' "$out/scale.txt" | tr -d '(' | awk '{print $2}')")
    done
    echo "$(printf '%s\n' "${walls[@]}" | median) $(printf '%s\n' "${sims[@]}" | median)" \
        "$(printf '%s\n' "${sim_cpus[@]}" | median)" \
        "$(printf '%s\n' "${cpus[@]}" | median) $(( $(printf '%s\n' "${rss[@]}" | median | cut -d. -f1) / 1024 ))"
}

echo "| jobs | policy | wall s | simulation s | simulation CPU s | CPU s | peak RSS MB |"
echo "|---|---|---|---|---|---|---|"
: >"$out/scale-points.txt"
for n in "${sizes[@]}"; do
    dir=$out/scale-$n
    nodes=$((n / 100 > 20 ? n / 100 : 20))
    [ -f "$dir/trace.csv" ] || "$lucid" trace synth --out "$dir" --jobs "$n" --nodes "$nodes" \
        --vcs 15 --load 0.9 --seed 1 >/dev/null
    r=$runs
    [ "$n" -lt 10000000 ] || r=$big_runs
    for p in "${policies[@]}" all; do
        avail_mb=$(awk '/MemAvailable/ {print int($2 / 1024)}' /proc/meminfo)
        if [ "$p" = all ] && [ "$n" -ge 10000000 ] && [ "$avail_mb" -lt 8000 ]; then
            echo "| $n | all | (skipped: ${avail_mb} MB available, the run needs ~4.5 GB) | | | | |"
            continue
        fi
        read -r wall sim sim_cpu cpu mb < <(measure "$dir" "$p" "$r")
        echo "| $n | $p | $wall | $sim | $sim_cpu | $cpu | $mb |"
        echo "$n $p $sim $sim_cpu" >>"$out/scale-points.txt"
    done
done

echo
echo "| policy | growth exponent, simulation wall time | growth exponent, simulation CPU time |"
echo "|---|---|---|"
# slope COLUMN POLICY: least-squares slope of log(column) on log(jobs), sizes >= 100k
slope() {
    awk -v p="$2" -v c="$1" '$2 == p && $1 >= 100000 && $c > 0 {x = log($1); y = log($c); n++; sx += x; sy += y; sxx += x * x; sxy += x * y}
        END {if (n >= 2) printf "%.2f", (n * sxy - sx * sy) / (n * sxx - sx * sx); else printf "(needs two sizes >= 100k)"}' \
        "$out/scale-points.txt"
}
for p in "${policies[@]}" all; do
    echo "| $p | $(slope 3 "$p") | $(slope 4 "$p") |"
done

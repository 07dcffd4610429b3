#!/usr/bin/env bash
# bench/backfill.sh — issue 13's simulator goals on Venus September:
#  1. backfill none / easy / conservative for fifo, qssf and lucid (learned
#     estimates: the experiment's estimates_lucid.csv), both semantics: avg
#     JCT, avg queue of large (> 8 GPUs) jobs, and the reservation counters;
#     then Lucid with backfill_window / backfill_min_gpus, both semantics,
#     and on four synthetic traces;
#  2. start-time estimates (predictions at submission): coverage and median
#     relative error per policy, fixed semantics (eta-summary.csv), with the
#     estimate files, with the online models (Lucid; ~40 s), and on a second
#     trace (`lucid trace synth`, 20,000 jobs);
#  3. backfill on learned estimates against backfill on users' time limits,
#     on Venus with limits added by bench/time_limits.py (no time-limited GPU
#     trace is in the repository);
#  4. the run's time with and without predictions, and with hourly
#     re-predictions (median of RUNS).
# Usage: bench/backfill.sh [RUNS]   (docs/backfill.md records the output)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
lucid=build/lucid
out=bench/out/backfill
mkdir -p "$out"
median() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

echo "| semantics | policy | backfill | avg JCT | large-job avg queue | reservations | moved later | backfilled |"
echo "|---|---|---|---|---|---|---|---|"
for compat in reference fixed; do
    for bf in none easy conservative; do
        "$lucid" simulate examples/venus.ini --out "$out/$compat-$bf" --set simulate.compat=$compat \
            --set simulate.policies=fifo,qssf,lucid --set simulate.eta=off \
            --set fifo.backfill=$bf --set qssf.backfill=$bf --set lucid.backfill=$bf >"$out/$compat-$bf.txt"
        for policy in fifo qssf lucid; do
            jct=$(awk -v p=$policy '/^Table 4/ { t = 4 } /^Table 5/ { t = 5 } t == 4 && $1 == p { print $2 }' "$out/$compat-$bf.txt")
            large=$(awk -v p=$policy '/^Table 5/ { t = 5 } t == 5 && $1 == p { print $3 }' "$out/$compat-$bf.txt")
            counts=$(grep "^backfill $policy " "$out/$compat-$bf.txt" |
                sed -E 's/.*: ([0-9]+) jobs held a reservation, moved later ([0-9]+) times.*; ([0-9]+) jobs backfilled/\1 | \2 | \3/' || true)
            echo "| $compat | $policy | $bf | $jct | $large | ${counts:-- | - | -} |"
        done
    done
done

# 1b. Lucid with the look-ahead window and the size class (backfill_window,
# backfill_min_gpus): the rules tried for issue 13's goal "large-job queue
# below Lucid's without backfill, avg JCT no worse", both semantics, and the
# same on four synthetic traces (fixed semantics), where large jobs starve.
lucid_row() { # label, output of lucid simulate
    awk -v l="$1" '/^Table 4/ { t = 4 } /^Table 5/ { t = 5 }
        t == 4 && $1 == "lucid" { j = $2 } t == 5 && $1 == "lucid" { q = $3; s = $7 }
        /^backfill lucid \(/ { r = $8; m = $15; b = $21 }
        END { printf "| %s | %s | %s | %s | %s | %s | %s |\n", l, j, q, s, r ? r : "-", m ? m : "-", b ? b : "-" }' "$2"
}
echo
echo "| semantics, backfill, window s, min GPUs | avg JCT | large-job avg queue | small-job avg queue | reservations | moved later | backfilled |"
echo "|---|---|---|---|---|---|---|"
for compat in reference fixed; do
    "$lucid" simulate examples/venus.ini --out "$out/w" --set simulate.compat=$compat \
        --set simulate.policies=lucid --set simulate.eta=off >"$out/w.txt"
    lucid_row "$compat, none" "$out/w.txt"
    for bf in easy conservative; do
        for w in 0 1200 2400 3600 7200; do
            for g in 0 9; do
                "$lucid" simulate examples/venus.ini --out "$out/w" --set simulate.compat=$compat \
                    --set simulate.policies=lucid --set simulate.eta=off --set lucid.backfill=$bf \
                    --set lucid.backfill_window=$w --set lucid.backfill_min_gpus=$g >"$out/w.txt"
                lucid_row "$compat, $bf, $w, $g" "$out/w.txt"
            done
        done
    done
done
echo
echo "| synthetic trace (seed), backfill, window s, min GPUs | avg JCT | large-job avg queue | small-job avg queue | reservations | moved later | backfilled |"
echo "|---|---|---|---|---|---|---|"
for seed in 1 2 3 4; do
    "$lucid" trace synth --out "$out/synth-$seed" --jobs 20000 --seed $seed >/dev/null
    for rule in "none 0" "easy 0" "conservative 0" "easy 1200" "easy 3600" "conservative 1200"; do
        set -- $rule
        "$lucid" simulate "$out/synth-$seed/experiment.ini" --out "$out/w" --set simulate.compat=fixed \
            --set simulate.policies=lucid --set simulate.eta=off --set lucid.backfill=$1 \
            --set lucid.backfill_window=$2 --set lucid.backfill_min_gpus=9 >"$out/w.txt"
        lucid_row "synth $seed, $1, $2, 9" "$out/w.txt"
    done
done

echo
echo "| policy | jobs waited > 60 s | coverage P10-P90 | median relative error |"
echo "|---|---|---|---|"
"$lucid" simulate examples/venus.ini --out "$out/eta" --set simulate.compat=fixed --quiet
awk -F, '$2 == "all" { printf "| %s | %s | %.1f %% | %.1f %% |\n", $1, $3, 100 * $4, 100 * $5 }' "$out/eta/eta-summary.csv"


echo
echo "Online models (examples/venus-online.ini, fixed semantics):"
echo
"$lucid" simulate examples/venus-online.ini --out "$out/eta-online" --set simulate.compat=fixed --quiet
awk -F, '$2 == "all" { printf "| %s (online) | %s | %.1f %% | %.1f %% |\n", $1, $3, 100 * $4, 100 * $5 }' "$out/eta-online/eta-summary.csv"

echo
echo "Second trace (lucid trace synth --jobs 20000 --seed 1; its noisy estimates, sigma 0.5):"
echo
"$lucid" trace synth --out "$out/synth" --jobs 20000 --seed 1 >/dev/null
"$lucid" simulate "$out/synth/experiment.ini" --out "$out/synth/results" --set simulate.compat=fixed --quiet
awk -F, '$2 == "all" { printf "| %s (synth) | %s | %.1f %% | %.1f %% |\n", $1, $3, 100 * $4, 100 * $5 }' "$out/synth/results/eta-summary.csv"

echo
echo "Backfill on learned estimates against users' time limits (Venus + bench/time_limits.py, fixed):"
echo
python3 bench/time_limits.py data/venus-sept/trace.csv "$out/venus-limits.csv"
echo "| policy | backfill | estimates | avg JCT | large-job avg queue | reservations | moved later | backfilled |"
echo "|---|---|---|---|---|---|---|---|"
for bf in easy conservative; do
    for est in "model 1.2" "time_limit 1.2" "time_limit 1"; do
        set -- $est
        sets=()
        for policy in fifo qssf lucid; do
            sets+=(--set "$policy.backfill=$bf" --set "$policy.backfill_estimate=$1" --set "$policy.backfill_margin=$2")
        done
        "$lucid" simulate examples/venus.ini --jobs "$out/venus-limits.csv" --out "$out/limits" \
            --set simulate.compat=fixed --set simulate.policies=fifo,qssf,lucid --set simulate.eta=off \
            "${sets[@]}" >"$out/limits.txt"
        for policy in fifo qssf lucid; do
            jct=$(awk -v p=$policy '/^Table 4/ { t = 4 } /^Table 5/ { t = 5 } t == 4 && $1 == p { print $2 }' "$out/limits.txt")
            large=$(awk -v p=$policy '/^Table 5/ { t = 5 } t == 5 && $1 == p { print $3 }' "$out/limits.txt")
            counts=$(grep "^backfill $policy " "$out/limits.txt" |
                sed -E 's/.*: ([0-9]+) jobs held a reservation, moved later ([0-9]+) times.*; ([0-9]+) jobs backfilled/\1 | \2 | \3/')
            echo "| $policy | $bf | $1, margin $2 | $jct | $large | $counts |"
        done
    done
done

echo
echo "| Venus, 6 policies, fixed | wall s (median of $runs) | CPU s (user + sys) |"
echo "|---|---|---|"
for eta in off on hourly; do
    walls=(); cpus=()
    flags=(--set simulate.eta=$eta)
    [ "$eta" = hourly ] && flags=(--set simulate.eta=on --set simulate.eta_hourly=on)
    for i in $(seq "$runs"); do
        /usr/bin/time -f "%e %U %S" -o "$out/time.txt" "$lucid" simulate examples/venus.ini \
            --out "$out/t-$eta" --set simulate.compat=fixed "${flags[@]}" --quiet
        read -r wall user sys <"$out/time.txt"
        walls+=("$wall"); cpus+=("$(echo "$user + $sys" | bc)")
    done
    echo "| eta = $eta | $(printf '%s\n' "${walls[@]}" | median) | $(printf '%s\n' "${cpus[@]}" | median) |"
done

#!/usr/bin/env bash
# cli_simulate.sh — `lucid simulate` and `lucid trace synth` from the command
# line: bad inputs give one clear line naming file, line and field and a
# non-zero exit; the README's example runs; outputs are deterministic.
# Usage: cli_simulate.sh LUCID SOURCE_DIR
set -u
source "$2/tests/lib/checks.sh"
bad=$src/tests/bad

sim() { "$lucid" simulate --quiet --out "$tmp/out" --policies fifo --vcs "$bad/vcs.csv" "$@"; }

expect_error "negative duration" "negative_duration.csv:3: duration: -3: a duration must be a positive number of seconds" sim --jobs "$bad/negative_duration.csv"
expect_error "unknown VC" "unknown_vc.csv:2: vc: unknown VC 'vcZ'" sim --jobs "$bad/unknown_vc.csv"
expect_error "bad GPU count" "bad_gpu.csv:3: gpu_num: 'x' is not an integer" sim --jobs "$bad/bad_gpu.csv"
expect_error "truncated row" "truncated_row.csv:3: expected 5 fields as in the header, found 3" sim --jobs "$bad/truncated_row.csv"
expect_error "missing column" "missing_column.csv:1: submit_time: required column is missing" sim --jobs "$bad/missing_column.csv"
expect_error "bad date" "bad_date.csv:2: submit_time: '2020-13-01 00:00:00' is neither" sim --jobs "$bad/bad_date.csv"
expect_error "duplicate id" "duplicate_id.csv:3: job_id: duplicate job id 1" sim --jobs "$bad/duplicate_id.csv"
expect_error "bad VC file" "bad_vcs.csv:2: nodes: 'two' is not an integer" "$lucid" simulate --quiet --jobs "$bad/good.csv" --vcs "$bad/bad_vcs.csv"
expect_error "missing file" "nope.csv: cannot open" sim --jobs "$bad/nope.csv"
expect_error "unknown key" "bad_key.ini:6: [simulate] threadz: unknown key" "$lucid" simulate --quiet "$bad/bad_key.ini"
expect_error "bad value" "bad_value.ini:5: [simulate] threads: 'lots' is not an integer" "$lucid" simulate --quiet "$bad/bad_value.ini"
expect_error "unknown section" "bad_section.ini:4: [nonsense] x: unknown section [nonsense]" "$lucid" simulate --quiet "$bad/bad_section.ini"
expect_error "missing estimate" "short_estimates.csv: no estimate for job 2 (trace line 3)" sim --jobs "$bad/good.csv" --policies qssf --set "qssf.estimates=$bad/short_estimates.csv"
expect_error "unknown policy" "unknown policy 'lifo'" sim --jobs "$bad/good.csv" --policies lifo
expect_error "unknown placer" "unknown placer 'best'" sim --jobs "$bad/good.csv" --placer best
expect_error "unknown option" "unknown option '--frobnicate'" sim --jobs "$bad/good.csv" --frobnicate
expect_error "unknown defect" "unknown defect 'time_travel'" sim --jobs "$bad/good.csv" --fix time_travel
expect_error "synth without --out" "--out DIR is required" "$lucid" trace synth --jobs 5
expect_error "synth bad load" "--load: 'x' is not a positive number" "$lucid" trace synth --out "$tmp/s" --load x

# Lucid's side files are read beside the estimates on a second thread
# ([simulate] threads = 2, the default); with several bad ones the error is
# the one a reading in order meets first (estimates, sharing labels,
# colocation pairs, forecast), with one thread or two.
printf 'job_id,priority\n1,100\n2,50\n' >"$tmp/est.csv"
for threads in 1 2; do
    expect_error "estimates before sharing ($threads)" "short_estimates.csv: no estimate for job 2" \
        sim --jobs "$bad/good.csv" --policies lucid --threads $threads \
        --set "lucid.estimates=$bad/short_estimates.csv" --set "lucid.sharing_labels=$tmp/nope_sharing.csv"
    expect_error "sharing before forecast ($threads)" "nope_sharing.csv: cannot open" \
        sim --jobs "$bad/good.csv" --policies lucid --threads $threads --set "lucid.estimates=$tmp/est.csv" \
        --set "lucid.sharing_labels=$tmp/nope_sharing.csv" --set "lucid.forecast=$tmp/nope_forecast.csv"
    expect_error "pairs before forecast ($threads)" "nope_pairs.csv: cannot open" \
        sim --jobs "$bad/good.csv" --policies lucid --threads $threads --set "lucid.estimates=$tmp/est.csv" \
        --set "lucid.colocation=$tmp/nope_pairs.csv" --set "lucid.forecast=$tmp/nope_forecast.csv"
    expect_error "forecast last ($threads)" "nope_forecast.csv: cannot open" \
        sim --jobs "$bad/good.csv" --policies lucid --threads $threads --set "lucid.estimates=$tmp/est.csv" \
        --set "lucid.forecast=$tmp/nope_forecast.csv"
done

# The trace's optional columns are carried to jobs-<policy>.csv, text quoted
# as CSV wants (a comma and a quote in a user name), an empty time limit
# left empty (VC vcA of $bad/vcs.csv).
printf 'job_id,vc,gpu_num,submit_time,duration,user,state,time_limit,gpu_type\n1,vcA,1,0,10,"ann, ""a""",COMPLETED,60,V100\n2,vcA,1,0,5,bob,FAILED,,\n' >"$tmp/carry.csv"
check "carried columns" sim --jobs "$tmp/carry.csv"
check "carried header" grep -qx 'job_id,vc,gpu_num,submit_time,duration,start_time,end_time,queue,jct,delay,profiled,finished_in_profiler,profiler_s,packed_with,user,state,time_limit,gpu_type' "$tmp/out/jobs-fifo.csv"
check "carried quoted user" grep -q ',,,,"ann, ""a""",COMPLETED,60,V100$' "$tmp/out/jobs-fifo.csv"
check "carried empty limit" grep -q ',,,,bob,FAILED,,$' "$tmp/out/jobs-fifo.csv"

# A good run writes the outputs with their headers.
if sim --jobs "$bad/good.csv" --series && [ -s "$tmp/out/summary.csv" ] &&
    head -1 "$tmp/out/jobs-fifo.csv" | grep -q '^job_id,vc,gpu_num,submit_time,duration,start_time,end_time,queue,jct,delay,profiled,finished_in_profiler,profiler_s,packed_with$' &&
    grep -q '^fifo,all,2,5.000,0.000,0.000,' "$tmp/out/summary.csv" &&
    head -1 "$tmp/out/series-fifo.csv" | grep -q '^time,vc,total_gpus,idle_gpus,pending_gpus'; then
    passes=$((passes + 1))
else
    echo "FAIL: good run outputs"; failures=$((failures + 1))
fi
# A rerun into the same folder replaces every file (the old ones are swapped
# out at the commit and deleted on a thread) and leaves nothing hidden.
ino_before=$(stat -c %i "$tmp/out/jobs-fifo.csv")
check "rerun into the same folder" sim --jobs "$bad/good.csv" --series
check "rerun replaced the jobs file" test "$(stat -c %i "$tmp/out/jobs-fifo.csv")" != "$ino_before"
check "rerun left no hidden file" test -z "$(ls -A "$tmp/out" | grep '^\.')"
check "rerun's jobs file whole" grep -q '^job_id,vc,gpu_num,submit_time' "$tmp/out/jobs-fifo.csv"

# lucid explain re-runs the saved experiment: job 2 (2 GPUs) of good.csv under
# fifo starts at 12 with no wait; unknown jobs and directories are refused.
if "$lucid" explain "$tmp/out" 2 --policy fifo >"$tmp/explain.txt" &&
    grep -q '^job 2: VC vcA, 2 GPUs, submitted at 12, runs 5 s; policy fifo' "$tmp/explain.txt" &&
    grep -q '^started at 12 after a queueing delay of 0 s$' "$tmp/explain.txt"; then
    passes=$((passes + 1))
else
    echo "FAIL: explain"; cat "$tmp/explain.txt"; failures=$((failures + 1))
fi
expect_error "explain unknown job" "explain: no job 99 in" "$lucid" explain "$tmp/out" 99
expect_error "explain not an output dir" "is $tmp/nowhere an output directory of lucid simulate?" "$lucid" explain "$tmp/nowhere" 1

# The bundled example runs all six policies (README's first command).
if (cd "$src" && "$lucid" simulate examples/venus.ini --quiet --out "$tmp/venus") &&
    [ "$(grep -c ',all,' "$tmp/venus/summary.csv")" -eq 6 ]; then
    passes=$((passes + 1))
else
    echo "FAIL: examples/venus.ini"; failures=$((failures + 1))
fi

# Synthetic traces: same seed, same files; they simulate cleanly.
(cd "$src" && "$lucid" trace synth --out "$tmp/s1" --jobs 2000 --nodes 40 --vcs 4 --seed 7 >/dev/null &&
    "$lucid" trace synth --out "$tmp/s2" --jobs 2000 --nodes 40 --vcs 4 --seed 7 >/dev/null)
if cmp -s "$tmp/s1/trace.csv" "$tmp/s2/trace.csv" && cmp -s "$tmp/s1/estimates.csv" "$tmp/s2/estimates.csv" &&
    [ "$(wc -l < "$tmp/s1/trace.csv")" -eq 2001 ] &&
    "$lucid" simulate "$tmp/s1/experiment.ini" --quiet --threads 1 --out "$tmp/r1" &&
    "$lucid" simulate "$tmp/s1/experiment.ini" --quiet --threads 2 --out "$tmp/r2" &&
    cmp -s "$tmp/r1/jobs-lucid.csv" "$tmp/r2/jobs-lucid.csv" && cmp -s "$tmp/r1/summary.csv" "$tmp/r2/summary.csv"; then
    passes=$((passes + 1))
else
    echo "FAIL: synthetic trace determinism"; failures=$((failures + 1))
fi

# [simulate] stream = on: policies one after another, each one's results
# written and freed before the next; every output byte the same as all at
# once (both semantics, backfill, series, start-time predictions), and the
# terminal's tables too.
same_stream=1
for args in "--compat reference" "--compat fixed --series --set lucid.backfill=conservative --set fifo.backfill=easy"; do
    # shellcheck disable=SC2086
    (cd "$src" && "$lucid" simulate examples/venus.ini $args --set simulate.stream=off --out "$tmp/st-off" >"$tmp/st-off.txt" &&
        "$lucid" simulate examples/venus.ini $args --set simulate.stream=on --out "$tmp/st-on" >"$tmp/st-on.txt") || same_stream=0
    for f in "$tmp"/st-off/*.csv; do
        cmp -s "$f" "$tmp/st-on/$(basename "$f")" || { echo "stream: $(basename "$f") differs ($args)"; same_stream=0; }
    done
    diff <(grep -v 'simulated in' "$tmp/st-off.txt") <(grep -v 'simulated in' "$tmp/st-on.txt") >/dev/null || same_stream=0
    rm -rf "$tmp/st-off" "$tmp/st-on"
done
check "stream on and off write the same results" [ "$same_stream" = 1 ]
expect_error "stream: bad value" "[simulate] stream = maybe: expected auto, on or off" \
    "$lucid" simulate "$src/examples/venus.ini" --set simulate.stream=maybe --out "$tmp/st-bad"

# The slurm policy from the command line (issue 26): [slurm] keys reach it.
# One node of 8 GPUs; job 1 holds it until 1000; job 2 (1 GPU, t = 10)
# and job 3 (8 GPUs, t = 20).  PriorityWeightJobSize 1000: job 3 (P 1000)
# runs first, 1000..1100, job 2 (P 125) after it; favor_small = yes turns
# the factor around (job 2 first).
printf 'job_id,vc,gpu_num,submit_time,duration\n1,a,8,0,1000\n2,a,1,10,100\n3,a,8,20,100\n' >"$tmp/slurm.csv"
printf 'vc,nodes\na,1\n' >"$tmp/slurm-vcs.csv"
slurm_start() { # RESULTS JOB: its start_time
    awk -F, -v j="$2" 'NR > 1 && $1 == j {print $6}' "$1/jobs-slurm.csv"
}
"$lucid" simulate --quiet --jobs "$tmp/slurm.csv" --vcs "$tmp/slurm-vcs.csv" --policies slurm \
    --set slurm.weight_jobsize=1000 --out "$tmp/sl1" &&
    "$lucid" simulate --quiet --jobs "$tmp/slurm.csv" --vcs "$tmp/slurm-vcs.csv" --policies slurm \
        --set slurm.weight_jobsize=1000 --set slurm.favor_small=yes --out "$tmp/sl2"
check "slurm: job size first" [ "$(slurm_start "$tmp/sl1" 3) $(slurm_start "$tmp/sl1" 2)" = "1000 1100" ]
check "slurm: favor_small" [ "$(slurm_start "$tmp/sl2" 2) $(slurm_start "$tmp/sl2" 3)" = "1000 1100" ]
expect_error "slurm: bad favor_small" "[slurm] favor_small: 'sometimes' is not yes or no" \
    "$lucid" simulate --quiet --jobs "$tmp/slurm.csv" --vcs "$tmp/slurm-vcs.csv" --policies slurm \
    --set slurm.favor_small=sometimes --out "$tmp/sl4"

# [lucid] profiler_overhead from the command line: the schedule of
# test_policies.c's lucid_profiler_overhead_holds_the_gpus (job 2, 8 GPUs,
# profiled after job 3 leaves at 100 + 7, then on main from 214), written
# into the run's experiment.ini only when set.
printf 'job_id,vc,gpu_num,submit_time,duration\n1,a,1,0,50\n2,a,8,0,500\n3,a,1,0,300\n' >"$tmp/ovh.csv"
printf 'vc,nodes\na,2\n' >"$tmp/ovh-vcs.csv"
printf 'job_id,estimate\n1,50\n2,500\n3,300\n' >"$tmp/ovh-est.csv"
ovh() {
    "$lucid" simulate --quiet --jobs "$tmp/ovh.csv" --vcs "$tmp/ovh-vcs.csv" --policies lucid \
        --set lucid.estimates="$tmp/ovh-est.csv" --set lucid.models=files --set lucid.profiler_nodes=1 \
        --set lucid.profiler_factor=8 --set lucid.profiler_time_limit=100 \
        --set lucid.profiler_autoscale=no "$@"
}
check "profiler_overhead: the run" ovh --set lucid.profiler_overhead=7 --out "$tmp/ovh7"
check "profiler_overhead: job 2 on main at 214" grep -q '^2,a,8,0,500,214,714,' "$tmp/ovh7/jobs-lucid.csv"
check "profiler_overhead: in the run's experiment" grep -qx 'profiler_overhead = 7' "$tmp/ovh7/experiment.ini"
check "profiler_overhead unset: the run" ovh --out "$tmp/ovh0"
check "profiler_overhead unset: job 2 on main at 200" grep -q '^2,a,8,0,500,200,700,' "$tmp/ovh0/jobs-lucid.csv"
check "profiler_overhead unset: not written" sh -c "! grep -q profiler_overhead '$tmp/ovh0/experiment.ini'"
expect_error "profiler_overhead: out of range" "[lucid] profiler_overhead: -2 out of range 0..86400" \
    ovh --set lucid.profiler_overhead=-2 --out "$tmp/ovh-bad"

finish cli_simulate

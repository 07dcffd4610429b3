#!/usr/bin/env bash
# cli_bounds.sh — `lucid bounds` and the floor / gap / bounded slowdown /
# fairness columns of summary.csv, against values worked out by hand on a
# 4-job trace (tests/data/bounds), and the Venus numbers.
# Usage: cli_bounds.sh LUCID SOURCE_DIR
set -u
source "$2/tests/lib/checks.sh"
cd "$src"
t=tests/data/bounds

# VC a (8 GPUs): work 800, 400 at 0 and 80 at 10: preemptive SRPT flows
# 160 + 60 + 10 = 230 -> 76.7 > its mean duration 56.7; VC b: 100 s > 12.5.
# Per-VC floor (230 + 100) / 4 = 82.5; mean duration 67.5.
"$lucid" bounds "$t/trace.csv" >"$tmp/b.txt"
check "bounds: mean duration 67.5" grep -q '^  mean duration  *67\.5 ' "$tmp/b.txt"
check "bounds: per-VC relaxation 82.5" grep -q '^  per-VC relaxation  *82\.5 ' "$tmp/b.txt"
check "bounds: VC a relaxation 76.7" grep -Eq '^a +3 +8 +56\.7 +76\.7$' "$tmp/b.txt"

# FIFO (hand): JCTs 100, 150, 100, 160 -> 127.5, gap 127.5/67.5 - 1;
# bounded slowdowns 1, 3, 1, 8 (mean 3.25, p99 3 + 0.97 x 5 = 7.85);
# users u1 {1, 3} and u2 {1, 8}: Jain 6.5^2 / (2 x (2^2 + 4.5^2)) = 0.871134;
# VCs a {1, 3, 8} and b {1}: 25 / (2 x 17) = 0.735294.
# Offered load (GPU-seconds asked over GPU-seconds offered from the first
# submission to the last): VC a 1280 / (8 x 10) = 16, VC b one submission
# time (empty), the cluster 1380 / (16 x 10) = 8.625.  No model inputs.
# Delay = JCT - duration = the queue (FIFO starts a job and runs it to its
# end); no profiler: 0 s, 0 GPU-s.
# GPU utilisation: VC a (8 GPUs) runs 8 x 100 + 8 x 50 + 4 x 20 = 1280 GPU-s
# between its first submission (0) and last end (170): 1280 / 1360 = 0.941176;
# VC b: 100 / (8 x 100) = 0.125; the cluster over 0..170: 1380 / (16 x 170) = 0.507353.
# Start-time calibration (the last two columns): no estimates given, so
# every job is planned at 1,000 s and, before 20 jobs ended, runs 0.25 / 1 /
# 4 times that.  Job 2 (queued at 0 behind 1) is predicted at 250 / 1000 /
# 4000 and starts at 100; job 3 (at 10, behind 2) at 500 / 2000 / 8000 and
# starts at 150.  Neither inside its interval; relative errors 900 / 100 = 9
# and (1990 - 140) / 140 = 13.2143: median 11.1071.  VC b: no job waited.
# Finish-time fairness (the last two columns; docs/fairshare.md): VC a has
# 8 GPUs; at 0 only u1 has jobs in it (N = 1): job 1 100 / 100 = 1, job 2
# 150 / 50 = 3; at 10 u1 and u2 (N = 2, slices of 4 GPUs, job 3's size):
# job 3 160 / 20 = 8.  VC b: job 4 alone, 1.  Max 8; above 1: 2 of 4 jobs,
# 2 of VC a's 3, none of VC b's.
"$lucid" simulate --jobs "$t/trace.csv" --vcs "$t/vc_config.csv" --policies fifo --out "$tmp/s" >"$tmp/s.txt"
check "summary.csv header" grep -q '^policy,vc,jobs,avg_jct,avg_queue,p999_queue,avg_delay,avg_profiler_s,profiler_gpu_s,floor,gap,bsld_mean,bsld_p99,jain_users,jain_vcs,gpu_util,eta_coverage,eta_median_rel_error,offered_load,inputs,ftf_max,ftf_over1$' "$tmp/s/summary.csv"
check "summary.csv FIFO all row" grep -q '^fifo,all,4,127\.500,60\.000,[0-9.]*,60\.000,0\.000,0,67\.500,0\.888889,3\.250000,7\.850000,0\.871134,0\.735294,0\.507353,0\.0000,11\.1071,8\.6250,,8\.000000,0\.500000$' "$tmp/s/summary.csv"
check "summary.csv VC a row" grep -q '^fifo,a,3,136\.667,80\.000,[0-9.]*,80\.000,0\.000,0,56\.667,1\.411765,4\.000000,7\.900000,0\.735294,,0\.941176,0\.0000,11\.1071,16\.0000,,8\.000000,0\.666667$' "$tmp/s/summary.csv"
check "summary.csv VC row: no Jain across VCs, no job waited" grep -q '^fifo,b,1,100\.000,0\.000,0\.000,0\.000,0\.000,0,100\.000,0\.000000,1\.000000,1\.000000,,,0\.125000,,,,,1\.000000,0\.000000$' "$tmp/s/summary.csv"
check "Table 4: GPU utilisation 50.7%, FTF max 8, 50% above 1" grep -Eq '^fifo .* 50\.7% +8\.0 +50\.0%$' "$tmp/s.txt"
# Table 5: no job over 8 GPUs ("-"); the small class is all four jobs.
check "Table 5: empty large class, small = all" grep -Eq '^fifo +- +- +- +- +128 +60 +88\.9% +3\.25$' "$tmp/s.txt"

# Venus: the numbers (floor 11,769 s; SRTF 7.1 %, Lucid 9.5 %, Tiresias 24.9 %).
"$lucid" simulate examples/venus.ini --out "$tmp/v" >"$tmp/v.txt"
check "Venus floor 11769" grep -q '^floor: mean job duration 11769 s' "$tmp/v.txt"
for want in "srtf 7.1%" "lucid 9.5%" "tiresias 24.9%"; do
    check "Venus gap $want" awk -v p="${want% *}" -v g="${want#* }" '$1 == p && $7 == g { found = 1 } END { exit !found }' "$tmp/v.txt"
done
"$lucid" bounds data/venus-sept/trace.csv >"$tmp/vb.txt"
check "Venus bounds: mean duration 11769.3" grep -q '^  mean duration  *11769\.3 ' "$tmp/vb.txt"

expect_error "bounds: no trace" "nope.csv: cannot open" "$lucid" bounds "$t/nope.csv" --vcs "$t/vc_config.csv"
expect_error "bounds: unknown option" "unknown option '--fast'" "$lucid" bounds "$t/trace.csv" --fast
finish cli_bounds

#!/usr/bin/env bash
# cli_trace_input.sh — hardened trace input (issue 11): a UTF-8 BOM is
# accepted, numbers are decimal only, times and durations are bounded
# (0..2^40 s, docs/formats.md) so nothing overflows, --series refuses a run
# spanning more than ten years instead of filling memory, and
# --skip-oversized says how many jobs it left out, in agreement with
# summary.csv.
# Usage: cli_trace_input.sh LUCID SOURCE_DIR
set -u
source "$2/tests/lib/checks.sh"
bad=$src/tests/bad

sim() { "$lucid" simulate --quiet --out "$tmp/out" --policies fifo,srtf,tiresias --vcs "$bad/vcs.csv" "$@"; }

# A BOM before the header: the same results as without it (good.csv: job 1
# runs 10-15, job 2 runs 12-17; summary average JCT 5).
if sim --jobs "$bad/bom.csv" && grep -q '^fifo,all,2,5.000,0.000,0.000,' "$tmp/out/summary.csv"; then
    passes=$((passes + 1))
else
    fail "BOM accepted"
fi
expect_error "hexadecimal duration" "hex_duration.csv:3: duration: '0x10' is not an integer" sim --jobs "$bad/hex_duration.csv"
expect_error "submit time near 2^63" "submit_near_2_63.csv:3: submit_time: 9223372036854775000 is beyond the latest supported time 1099511627776" sim --jobs "$bad/submit_near_2_63.csv"
expect_error "submit time 9e18" "submit_9e18.csv:3: submit_time: 9000000000000000000 is beyond the latest supported time" sim --jobs "$bad/submit_9e18.csv" --series

# The largest supported submit time runs (no overflow: the job ends 5 s
# after it starts) ...
if sim --jobs "$bad/submit_at_max.csv" && grep -q '^2,vcA,1,1099511627776,5,1099511627776,1099511627781,' "$tmp/out/jobs-srtf.csv"; then
    passes=$((passes + 1))
else
    fail "submit time 2^40 runs"
fi
# ... but a series over 2^40 s of simulated time is refused at once.
expect_error "series span" "--series covers at most 3650 days of simulated time, but this run reaches day 12725829" timeout 60 "$lucid" simulate --quiet --out "$tmp/out2" --policies fifo --vcs "$bad/vcs.csv" --jobs "$bad/submit_at_max.csv" --series

# --skip-oversized: VC vcA has 2 nodes = 16 GPUs; jobs 2 (32 GPUs) and 4 (17)
# are left out, the other two counted in the summary.
out=$("$lucid" simulate --out "$tmp/over" --policies fifo --vcs "$bad/vcs.csv" --jobs "$bad/oversized.csv" --skip-oversized 2>"$tmp/over.err")
if grep -qx 'lucid: --skip-oversized: left out 2 jobs larger than its VC' "$tmp/over.err" &&
    grep -q '^fifo,all,2,' "$tmp/over/summary.csv" &&
    printf '%s\n' "$out" | grep -q '^2 jobs, 1 policies'; then
    passes=$((passes + 1))
else
    fail "--skip-oversized counts: $(cat "$tmp/over.err") / $out"
fi
expect_error "oversized refused" "job 2 asks for 32 GPUs but VC vcA has only 16" "$lucid" simulate --quiet --out "$tmp/over2" --policies fifo --vcs "$bad/vcs.csv" --jobs "$bad/oversized.csv"

finish cli_trace_input

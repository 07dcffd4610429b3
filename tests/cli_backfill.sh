#!/usr/bin/env bash
# cli_backfill.sh — the backfill keys ([fifo] backfill, backfill_estimate,
# backfill_margin, backfill_window, backfill_min_gpus, via --set like every
# key) on a 3-job trace worked out by hand, learned estimates against
# users' time limits; bad values give one line; [simulate] eta writes
# eta-<policy>.csv and eta-summary.csv and leaves every other output byte
# for byte as with eta = off.
# Usage: cli_backfill.sh LUCID SOURCE_DIR
set -u
source "$2/tests/lib/checks.sh"
cd "$tmp"
# One node of 8 GPUs.  Job 1 (6 GPUs) runs 10 s: the model says 100, the
# user's limit 10.  Job 2 wants the whole node.  Job 3 (2 GPUs) runs 30 s
# with a limit of 1000.
cat >trace.csv <<'CSV'
job_id,vc,gpu_num,submit_time,duration,time_limit
1,a,6,0,10,10
2,a,8,1,5,5
3,a,2,2,30,1000
CSV
printf 'vc,nodes\na,1\n' >vc_config.csv
printf 'job_id,estimate\n1,100\n2,5\n3,30\n' >est.csv
cat >exp.ini <<'INI'
[trace]
jobs = trace.csv
vcs = vc_config.csv
start = 0
[simulate]
policies = fifo
[qssf]
estimates = est.csv
INI
start_of() { awk -F, -v j="$2" '$1 == j { print $6 }' "$1/jobs-fifo.csv"; }

# Model estimates: 2 is reserved from 100 (1's estimate); 3 (30 x 1.2 = 36 s)
# ends before that and backfills at 2, holding 2 GPUs to 32; 2 starts at 32.
"$lucid" simulate exp.ini --quiet --out model --set fifo.backfill=easy >/dev/null || fail "simulate model"
check "model: 3 backfilled at 2" [ "$(start_of model 3)" = 2 ]
check "model: 2 starts at 32" [ "$(start_of model 2)" = 32 ]
# Why it waits, in one sentence: reserved from 100 until 1 ends at 10, then
# from 32 (3's estimated end: 30 s from 2); free meanwhile: 2 GPUs at 1-2
# (3 starts at 2), then none, then 6 once 1 ends (3 holds 2).
"$lucid" explain model 2 >why.txt || fail "explain"
check "explain: reserved from ~100 until 10" grep -qx 'waited 1-10 (9 s): waits for 8 GPUs; reserved for it from ~100 on n0; 0 jobs ahead of it; free meanwhile: 0-2 GPUs, 0 whole nodes, at most 2 on one node' why.txt
check "explain: then from ~32" grep -qx 'waited 10-32 (22 s): waits for 8 GPUs; reserved for it from ~32 on n0; 0 jobs ahead of it; free meanwhile: 6 GPUs, 0 whole nodes, at most 6 on one node' why.txt
"$lucid" explain model 3 >why3.txt || fail "explain 3"
check "explain: 3 never waited" bash -c "! grep -q '^waited' why3.txt"
# Time limits: 2 is reserved from 10; 3 (1,200 s planned) would delay it: 2
# runs 10-15, then 3.
"$lucid" simulate exp.ini --quiet --out limit --set fifo.backfill=easy \
    --set fifo.backfill_estimate=time_limit >/dev/null || fail "simulate limit"
check "time_limit: 2 starts at 10" [ "$(start_of limit 2)" = 10 ]
check "time_limit: 3 starts at 15" [ "$(start_of limit 3)" = 15 ]
"$lucid" simulate exp.ini --out counted --set fifo.backfill=easy >counted.txt || fail "simulate counted"
check "stdout counts reservations" grep -q '^backfill fifo (easy, model estimates, margin 1.20): 1 jobs held a reservation' counted.txt
check "experiment.ini keeps the key" grep -q '^backfill = easy$' counted/experiment.ini

# The look-ahead window and the size class.  Model estimates: 2's earliest
# start is 100 at 1 (99 s away) and 32 at 10 (22 s away, 3's estimated
# end): a 30 s window reserves it at 10, a 20 s one never does (2 still
# starts at 32, when 3 ends).  backfill_min_gpus = 9: 2 (8 GPUs) never holds one.
"$lucid" simulate exp.ini --out w30 --set fifo.backfill=easy --set fifo.backfill_window=30 >w30.txt || fail "simulate w30"
check "window 30: 1 reservation" grep -q '^backfill fifo (easy, model estimates, margin 1.20): 1 jobs held a reservation' w30.txt
check "window 30: the rule printed" grep -qx 'backfill fifo: reservations only within 30 s (0: no limit), for jobs of >= 0 GPUs' w30.txt
"$lucid" simulate exp.ini --out w20 --set fifo.backfill=easy --set fifo.backfill_window=20 >w20.txt || fail "simulate w20"
check "window 20: no reservation" grep -q '^backfill fifo (easy, model estimates, margin 1.20): 0 jobs held a reservation' w20.txt
check "window 20: 2 starts at 32" [ "$(start_of w20 2)" = 32 ]
check "experiment.ini keeps backfill_window" grep -q '^backfill_window = 20$' w20/experiment.ini
"$lucid" simulate exp.ini --out g9 --set fifo.backfill=easy --set fifo.backfill_min_gpus=9 >g9.txt || fail "simulate g9"
check "min_gpus 9: no reservation" grep -q '^backfill fifo (easy, model estimates, margin 1.20): 0 jobs held a reservation' g9.txt
check "unset: no rule line" bash -c '! grep -q "reservations only within" counted.txt'
check "unset: experiment.ini without the keys" bash -c '! grep -q "backfill_window\|backfill_min_gpus" counted/experiment.ini'
expect_error "bad window" "--set: [fifo] backfill_window: '1h' is not an integer" \
    "$lucid" simulate exp.ini --quiet --out bad --set fifo.backfill=easy --set fifo.backfill_window=1h
expect_error "bad min_gpus" "--set: [lucid] backfill_min_gpus: -1 out of range 0..100000" \
    "$lucid" simulate exp.ini --quiet --out bad --set lucid.backfill_min_gpus=-1
{ cat exp.ini; printf '[sjf]\nbackfill_window = -5\n'; } >badwin.ini
expect_error "bad window in a file" "badwin.ini:10: [sjf] backfill_window: -5 out of range 0..2147483647" \
    "$lucid" simulate badwin.ini --quiet --out bad
expect_error "bad backfill" "[fifo] backfill = sideways: expected none, easy or conservative" \
    "$lucid" simulate exp.ini --quiet --out bad --set fifo.backfill=sideways
expect_error "bad estimate" "[fifo] backfill_estimate = guess: expected model or time_limit" \
    "$lucid" simulate exp.ini --quiet --out bad --set fifo.backfill=easy --set fifo.backfill_estimate=guess
expect_error "bad margin" "[fifo] backfill_margin = 0.5: expected a number from 1 to 100" \
    "$lucid" simulate exp.ini --quiet --out bad --set fifo.backfill=easy --set fifo.backfill_margin=0.5
expect_error "bad eta" "[simulate] eta = maybe: expected on or off" \
    "$lucid" simulate exp.ini --quiet --out bad --set simulate.eta=maybe

# eta on (the default) adds its files and changes no other byte.
"$lucid" simulate exp.ini --quiet --out on >/dev/null || fail "simulate eta on"
"$lucid" simulate exp.ini --quiet --out off --set simulate.eta=off >/dev/null || fail "simulate eta off"
check "eta-fifo.csv written" test -s on/eta-fifo.csv
check "eta-summary.csv written" grep -q '^policy,vc,jobs_waited,eta_coverage,eta_median_rel_error$' on/eta-summary.csv
check "no eta files when off" bash -c '! ls off/eta-* 2>/dev/null'
# (eta_coverage and eta_median_rel_error are columns 17 and 18 of 22)
check "summary.csv unchanged by eta but its eta columns" \
    cmp -s <(cut -d, -f1-16,19- on/summary.csv) <(cut -d, -f1-16,19- off/summary.csv)
check "summary.csv: eta columns empty when off" \
    bash -c "[ -z \"\$(awk -F, 'NR > 1 && (\$17 != \"\" || \$18 != \"\")' off/summary.csv)\" ]"
check "jobs-fifo.csv unchanged by eta" cmp -s on/jobs-fifo.csv off/jobs-fifo.csv
expect_error "bad eta_hourly" "[simulate] eta_hourly = often: expected on or off" \
    "$lucid" simulate exp.ini --quiet --out bad --set simulate.eta_hourly=often

# Calibration by hand: job 1 (8 GPUs) runs 0-8000 as estimated; job 2 (8
# GPUs) queued at 100 waits for it.  Before 20 jobs ended, a running job
# ends at its estimate x 0.25 / 1 / 4 (at least what it has run x 1.1 /
# 1.5 / 3): 2 is predicted at 2000 / 8000 / 32000 and starts at 8000, at
# its P50: coverage 1, error 0.  Hourly: at 3600 job 1 has run 0.45 of its
# estimate, so P10 = 0.45 x 1.1 x 8000 = 3960; at 7200, 0.9 x 1.1 -> 7920.
printf 'job_id,vc,gpu_num,submit_time,duration\n1,a,8,0,8000\n2,a,8,100,50\n' >wait.csv
printf 'job_id,estimate\n1,8000\n2,50\n' >wait-est.csv
"$lucid" simulate exp.ini --quiet --out wait --jobs wait.csv --set qssf.estimates=wait-est.csv \
    --set simulate.eta_hourly=on >/dev/null || fail "simulate wait"
check "summary.csv: eta columns" grep -q '^fifo,all,2,.*,1\.0000,0\.0000,[^,]*,,[0-9.]*,[0-9.]*$' wait/summary.csv
check "eta-summary.csv agrees" grep -qx 'fifo,all,1,1.0000,0.0000' wait/eta-summary.csv
check "eta-fifo.csv: at queueing" grep -qx '2,a,8,100,100,8000,7900,2000,8000,32000,queued' wait/eta-fifo.csv
check "eta-fifo.csv: at 3600" grep -qx '2,a,8,100,3600,8000,7900,3960,8000,32000,hourly' wait/eta-fifo.csv
check "eta-fifo.csv: at 7200" grep -qx '2,a,8,100,7200,8000,7900,7920,8000,32000,hourly' wait/eta-fifo.csv
check "eta-fifo.csv: no more rows" [ "$(wc -l <wait/eta-fifo.csv)" = 5 ]
"$lucid" simulate exp.ini --quiet --out wait-once --jobs wait.csv --set qssf.estimates=wait-est.csv >/dev/null ||
    fail "simulate wait without hourly"
check "hourly rows only with eta_hourly" [ "$(grep -c hourly wait-once/eta-fifo.csv)" = 0 ]
check "hourly rows change no prediction at queueing" \
    cmp -s <(grep -v hourly wait/eta-fifo.csv) wait-once/eta-fifo.csv
check "hourly rows change no schedule" cmp -s wait/jobs-fifo.csv wait-once/jobs-fifo.csv
check "hourly rows change no summary" cmp -s wait/summary.csv wait-once/summary.csv
# Re-running with eta off removes the stale eta files of the earlier run.
"$lucid" simulate exp.ini --quiet --out on --set simulate.eta=off >/dev/null || fail "re-run off"
check "stale eta files removed" bash -c '! ls on/eta-* 2>/dev/null'
finish cli_backfill

#!/usr/bin/env bash
# cli_import.sh — `lucid trace import`: each format's excerpt converts to exact
# counts and checksums, the Venus round trip through HeliosData's schema gives
# back the same jobs and the same Table 4, bad input gives one clear line.
# Usage: cli_import.sh LUCID SOURCE_DIR
set -u
source "$2/tests/lib/checks.sh"
data=$src/tests/data/traces
cd "$src"

# field FILE KEY: the value of a MANIFEST line "KEY: value".
field() { sed -n "s/^$2: //p" "$1" | head -1; }
# removed FILE RULE: how many jobs a MANIFEST rule removed.
removed() { sed -n "s/^rule: $2 removed=\([0-9]*\):.*/\1/p" "$1"; }
# body_sha FILE: sha256 of a file (to pin converted output).
body_sha() { sha256sum "$1" | cut -c1-64; }

# ---- helios: the whole bundled Venus trace, round trip ----
python3 "$data/helios/venus_to_helios.py" data/venus-sept/trace.csv "$tmp/cluster_log.csv"
"$lucid" trace import --format helios "$tmp/cluster_log.csv" "$data/helios/cluster_gpu_number.csv" \
    --out "$tmp/venus" --origin "2020-04-01 00:02:31" --like examples/venus.ini \
    --workload-from data/venus-sept/trace.csv >/dev/null
check "helios round trip: 23859 jobs written" [ "$(field "$tmp/venus/MANIFEST" jobs_written)" = 23859 ]
# Job by job, in the same order: every column the simulator reads.
check "helios round trip: same jobs, same order" python3 - data/venus-sept/trace.csv "$tmp/venus/trace.csv" <<'PY'
import csv, sys
a = list(csv.DictReader(open(sys.argv[1])))
b = list(csv.DictReader(open(sys.argv[2])))
cols = ["job_id", "user", "vc", "gpu_num", "cpu_num", "state", "submit_time", "duration",
        "model", "dataset", "batchsize", "amp", "speed", "gpu_util", "gmem_util", "gmem",
        "submit_datetime"]
bad = [x["job_id"] for x, y in zip(a, b) if any(x[c] != y[c] for c in cols)]
sys.exit(1 if len(a) != 23859 or len(a) != len(b) or bad else 0)
PY
check "helios round trip: vc_config.csv as Lucid's" cmp -s <(tail -n +2 "$tmp/venus/vc_config.csv") <(tail -n +2 data/venus-sept/vc_config.csv)
check "helios round trip: MANIFEST checksum is the source's" \
    grep -q "^source: .*/cluster_log.csv sha256=$(body_sha "$tmp/cluster_log.csv") bytes=$(wc -c <"$tmp/cluster_log.csv")$" "$tmp/venus/MANIFEST"
check "helios round trip: licence text carried" grep -q "Attribution 4.0 International" "$tmp/venus/MANIFEST"
"$lucid" simulate examples/venus.ini --quiet --out "$tmp/ref" &&
    "$lucid" simulate "$tmp/venus/experiment.ini" --quiet
for f in summary.csv jobs-fifo.csv jobs-sjf.csv jobs-srtf.csv jobs-qssf.csv jobs-tiresias.csv jobs-lucid.csv; do
    check "helios round trip: $f as examples/venus.ini" cmp -s "$tmp/ref/$f" "$tmp/venus/results/$f"
done
check "helios round trip: Table 4 FIFO row is the paper's" grep -q '^fifo,all,23859,65720\.543,53951\.272,' "$tmp/venus/results/summary.csv"

# ---- helios: the 300-job excerpt and the rules ----
"$lucid" trace import --format helios "$data/helios/cluster_log.csv" "$data/helios/cluster_gpu_number.csv" --out "$tmp/h300" >/dev/null
check "helios excerpt: 300 jobs" [ "$(field "$tmp/h300/MANIFEST" jobs_written)" = 300 ]
check "helios excerpt: trace.csv checksum" [ "$(body_sha "$tmp/h300/trace.csv")" = "92138150a3618ab9c72ea45f64422a5ceb1b08712bdb06f065231f58a8ce5abf" ]
check "helios excerpt: simulates" "$lucid" simulate "$tmp/h300/experiment.ini" --quiet --policies fifo,sjf
"$lucid" trace import --format helios "$data/helios/rules.csv" "$data/helios/cluster_gpu_number.csv" --out "$tmp/rules" >/dev/null
m=$tmp/rules/MANIFEST
check "helios rules: one job per rule" [ "$(removed "$m" cpu_only)$(removed "$m" zero_duration)$(removed "$m" vc_without_gpus)$(removed "$m" larger_than_vc)" = 1111 ]
check "helios rules: 3 of 7 kept" [ "$(field "$m" records_read)/$(field "$m" jobs_written)" = 7/3 ]
"$lucid" trace import --format helios "$data/helios/cluster_log.csv" "$data/helios/cluster_gpu_number.csv" \
    --since "2020-09-01 06:00:00" --until "2020-09-01 12:00:00" --out "$tmp/window" >/dev/null
check "helios window: since/until counted" [ "$(removed "$tmp/window/MANIFEST" before_since)+$(removed "$tmp/window/MANIFEST" after_until)+$(field "$tmp/window/MANIFEST" jobs_written)" = "$(awk -F, 'NR>1 && $9<"2020-09-01 06:00:00"' "$data/helios/cluster_log.csv" | wc -l)+$(awk -F, 'NR>1 && $9>="2020-09-01 12:00:00"' "$data/helios/cluster_log.csv" | wc -l)+$(awk -F, 'NR>1 && $9>="2020-09-01 06:00:00" && $9<"2020-09-01 12:00:00"' "$data/helios/cluster_log.csv" | wc -l)" ]
b=$data/helios/bad
expect_error "helios unknown state" "unknown_state.csv:4: state: unknown state 'PREEMPTED'" "$lucid" trace import --format helios "$b/unknown_state.csv" --out "$tmp/bad"
expect_error "helios missing field" "missing_field.csv:4: expected 13 fields" "$lucid" trace import --format helios "$b/missing_field.csv" --out "$tmp/bad"
expect_error "helios non-UTF-8" "non_utf8.csv:4: user: byte 0xe9 is not UTF-8" "$lucid" trace import --format helios "$b/non_utf8.csv" --out "$tmp/bad"
expect_error "helios bad time" "bad_time.csv:3: submit_time: '2020-09-31 01:00:00' is not a time" "$lucid" trace import --format helios "$b/bad_time.csv" --out "$tmp/bad"
expect_error "helios missing column" "missing_column.csv:1: submit_time: required column is missing" "$lucid" trace import --format helios "$b/missing_column.csv" --out "$tmp/bad"
check "failed import leaves no folder" [ ! -e "$tmp/bad" ]
expect_error "unknown format" "unknown format 'nope'" "$lucid" trace import --format nope x --out "$tmp/bad"
cp "$data/helios/cluster_log.csv" "$tmp/h300/trace.csv"
expect_error "input is not overwritten" "is an input; choose another --out" "$lucid" trace import --format helios "$tmp/h300/trace.csv" --out "$tmp/h300"

# ---- sacct: the lab cluster's jobs ----
sa=$data/sacct
"$lucid" trace import --format sacct "$sa/lab.sacct" "$sa/lab/nodes.txt" --out "$tmp/lab" >/dev/null
m=$tmp/lab/MANIFEST
check "sacct lab: 9 of 13 jobs" [ "$(field "$m" records_read)/$(field "$m" jobs_written)" = 13/9 ]
check "sacct lab: never started 2, running 1, CPU 1" [ "$(removed "$m" never_started)$(removed "$m" still_running)$(removed "$m" cpu_only)" = 211 ]
check "sacct lab: GPUs and times are what the lab ran" python3 "$sa/check_lab.py" "$sa/lab" "$tmp/lab/trace.csv"
check "sacct lab: partitions as VCs, sized from scontrol" [ "$(tail -n +2 "$tmp/lab/vc_config.csv" | paste -sd' ')" = "main,2 profiling,1" ]
check "sacct lab: 4 GPUs per node" [ "$(field "$m" gpus_per_node)" = 4 ]
check "sacct lab: trace.csv checksum" [ "$(body_sha "$tmp/lab/trace.csv")" = "d9112672de6c026def8c7d6a458b1bea00560664f6b8f13cefd6f07a34f193ef" ]
check "sacct lab: simulates" "$lucid" simulate "$tmp/lab/experiment.ini" --quiet
# --slurm-conf: the site's priority and scheduler become the slurm policy,
# run beside the six (docs/slurm-policy.md).
printf 'SchedulerType=sched/backfill\nSchedulerParameters=bf_interval=10\nPriorityWeightFairshare=10000\nPriorityWeightAge=1000\nPriorityCalcPeriod=1\n' >"$tmp/slurm.conf"
"$lucid" trace import --format sacct "$sa/lab.sacct" "$sa/lab/nodes.txt" --slurm-conf "$tmp/slurm.conf" --out "$tmp/lab-sc" >/dev/null
check "sacct --slurm-conf: the policies and the site's keys" grep -q "^policies = fifo,sjf,srtf,qssf,tiresias,lucid,slurm$" "$tmp/lab-sc/experiment.ini"
check "sacct --slurm-conf: [slurm] keys" [ "$(sed -n '/^\[slurm\]/,/^$/p' "$tmp/lab-sc/experiment.ini" | grep -c -e '^weight_fairshare = 10000$' -e '^weight_age = 1000$' -e '^calc_period = 60$' -e '^backfill = conservative$' -e '^backfill_interval = 10$')" = 5 ]
check "sacct --slurm-conf: simulates" "$lucid" simulate "$tmp/lab-sc/experiment.ini" --quiet --out "$tmp/lab-sc/results"
check "sacct --slurm-conf: the slurm policy ran" [ -s "$tmp/lab-sc/results/jobs-slurm.csv" ]
# The slurm policy's associations, cluster counts (3 nodes of 32 CPUs) and
# start latency from the records: a chain of 12 jobs of 4 GPUs and 10 s on
# one node, all submitted at 12:00:00, each started 1, 0, 1, 0, ... s
# after what freed it (its submission, then the previous job's end): 0.50.
{
    echo 'JobID|User|Account|Partition|AllocTRES|ReqTRES|Submit|Start|End|Elapsed|State|NNodes'
    t=1
    for k in $(seq 1 12); do
        s=$(printf '12:%02d:%02d' $((t / 60)) $((t % 60)))
        e=$(printf '12:%02d:%02d' $(((t + 10) / 60)) $(((t + 10) % 60)))
        u=$([[ $k == 1 ]] && echo bob || echo alice)
        echo "$k|$u|team$((k % 2))|main|cpu=1,node=1,gres/gpu=4|cpu=1,node=1,gres/gpu=4|2026-12-03T12:00:00|2026-12-03T$s|2026-12-03T$e|00:00:10|COMPLETED|1"
        t=$((t + 10 + (k % 2 == 0 ? 1 : 0)))
    done
} >"$tmp/chain.sacct"
"$lucid" trace import --format sacct "$tmp/chain.sacct" "$sa/lab/nodes.txt" --slurm-conf "$tmp/slurm.conf" --out "$tmp/chain" >/dev/null
check "sacct --slurm-conf: start latency fitted (0.50)" grep -q '^start_latency = 0.50$' "$tmp/chain/experiment.ini"
check "sacct --slurm-conf: cluster nodes and CPUs from the node list" [ "$(grep -c -e '^cluster_nodes = 3$' -e '^cluster_cpus = 96$' "$tmp/chain/experiment.ini")" = 2 ]
check "sacct --slurm-conf: the associations (each user's first account)" grep -q '^accounts = team1:bob team0:alice$' "$tmp/chain/experiment.ini"
printf 'PriorityMaxAge=7days\n' >"$tmp/bad-slurm.conf"
expect_error "sacct --slurm-conf: a bad value" "bad-slurm.conf:1: PriorityMaxAge: '7days' is not a Slurm time" "$lucid" trace import --format sacct "$sa/lab.sacct" --slurm-conf "$tmp/bad-slurm.conf" --out "$tmp/lab-bad"
# lucid whatif: the same import, the seven policies, and the twin's error
# against the history — the numbers an independent reading of the two CSVs
# (bench/replay_error.py) gives.
"$lucid" whatif --format sacct "$sa/lab.sacct" "$sa/lab/nodes.txt" --slurm-conf "$tmp/slurm.conf" \
    --out "$tmp/wi" >"$tmp/wi.txt"
check "whatif: writes what it prints (after the import's line)" cmp -s <(tail -n +2 "$tmp/wi.txt") "$tmp/wi/whatif.txt"
want=$(python3 "$src/bench/replay_error.py" "$tmp/wi/trace/trace.csv" "$tmp/wi/results/jobs-slurm.csv" |
    sed -n 1p | sed -E 's/.*2 \/ 10 \/ 60 s: ([0-9]+) \/ ([0-9]+) \/ ([0-9]+) %; error median ([0-9]+) s, p90 ([0-9]+) s, max ([0-9]+) s.*/\1 \2 \3 \4 \5 \6/')
got=$(awk '/within 2 \/ 10 \/ 60 s/ {gsub("%", ""); printf "%.0f %.0f %.0f ", $(NF-4), $(NF-2), $NF}
    /start error median/ {printf "%s %s %s", $4, $7, $10}' "$tmp/wi/whatif.txt")
check "whatif: the replay's error is the history's ($got / $want)" test "$got" = "$want"
check "whatif: says how the twin was set up" grep -q '^  with Fair Tree over 1 account, billing CPU=1 GRES/gpu=0, start latency 0 s$' "$tmp/wi/whatif.txt"
check "whatif: each policy beside the replay" [ "$(grep -cE '^(fifo|sjf|srtf|qssf|tiresias|lucid|slurm) ' "$tmp/wi/whatif.txt")" = 7 ]
check "whatif: the replay is 0 against itself" grep -q '^slurm .* +0.0%  (the replay)$' "$tmp/wi/whatif.txt"
expect_error "whatif: slurm.conf required" "--slurm-conf FILE are required" \
    "$lucid" whatif --format sacct "$sa/lab.sacct" --out "$tmp/wi2"
out=$("$lucid" whatif --format helios "$data/helios/cluster_log.csv" --slurm-conf "$tmp/slurm.conf" --out "$tmp/wi3" 2>&1 >/dev/null)
rc=$?
check "whatif: a history without starts: exit 1, the reason last ($out)" \
    test "$rc" = 1 -a "$(tail -1 <<<"$out" | grep -c 'no first_start column: whatif needs a history with real starts')" = 1
"$lucid" trace import --format sacct "$sa/lab.sacct" --running --vc-by account --out "$tmp/lab2" >/dev/null
check "sacct --running keeps job 13 for its Elapsed (3 s)" grep -q '^13,root,teama,2,1,RUNNING,15,3,' "$tmp/lab2/trace.csv"
check "sacct --vc-by account" [ "$(tail -n +2 "$tmp/lab2/vc_config.csv" | cut -d, -f1 | sort | paste -sd' ')" = "teama teamb teamc" ]

# ---- sacct: every documented case (steps, arrays, typed GRES, limits) ----
"$lucid" trace import --format sacct "$sa/schema.sacct" "$sa/nodes.txt" --out "$tmp/schema" >/dev/null
m=$tmp/schema/MANIFEST
check "sacct schema: rule counts" [ "$(removed "$m" step)$(removed "$m" never_started)$(removed "$m" still_running)$(removed "$m" cpu_only)$(removed "$m" zero_duration)/$(field "$m" jobs_written)" = 22111/8 ]
check "sacct schema: typed GRES, 1-day elapsed, time limit" grep -q '^1002,bob,v100,16,32,TIMEOUT,600,90184,90000,v100,' "$tmp/schema/trace.csv"
check "sacct schema: untyped total wins over typed entries" grep -q '^1001,alice,a100,4,16,COMPLETED,0,3600,7200,a100,' "$tmp/schema/trace.csv"
check "sacct schema: array task id" grep -q '^1003000001,carol,a100,1,4,COMPLETED,1200,60,1800,,' "$tmp/schema/trace.csv"
check "sacct schema: 'CANCELLED by UID' is CANCELLED" grep -q '^1006,bob,v100,8,8,CANCELLED,3600,1200,3600,,' "$tmp/schema/trace.csv"
check "sacct schema: 2 nodes x 8 GPUs per partition" [ "$(tail -n +2 "$tmp/schema/vc_config.csv" | paste -sd' ')" = "a100,2 v100,2" ]
# The optional columns travel through the simulator to jobs-<policy>.csv.
"$lucid" simulate "$tmp/schema/experiment.ini" --quiet --policies fifo
check "jobs-fifo.csv carries user, state, time_limit, gpu_type" grep -q '^1002,v100,16,600,90184,600,90784,0,90184,0,,,,,bob,TIMEOUT,90000,v100$' "$tmp/schema/results/jobs-fifo.csv"
printf 'job_id,vc,gpu_num,submit_time,duration,time_limit\n1,a100,1,0,5,soon\n' >"$tmp/tl.csv"
expect_error "a bad time_limit is named" "tl.csv:2: time_limit: 'soon' is not an integer" "$lucid" simulate --quiet --jobs "$tmp/tl.csv" --vcs "$tmp/schema/vc_config.csv" --out "$tmp/tlout"
# ---- sacct --duplicates: a requeued job's records joined into one job ----
# duplicates.sacct (hand-made, as `sacct --duplicates` prints a lucid site):
# 2001 profiled (09:00:30-09:05:30, 300 s) then main (09:07-10:07, 3600 s);
# 2002 profiled (300 s), main run lost to a node failure (09:20-09:50,
# 1800 s), main again (10:05-11:05, 3600 s); 2003 never profiled; 2004
# cancelled while pending; 2005 profiled (120 s) then cancelled while
# pending on main; 2006 profiled, requeued and still pending; 2007 profiled
# (120 s) then packed by lucid: its main run holds gres/lucidshare=2 (the
# share GRES, its 2 shared GPUs) instead of gres/gpu.  Origin
# 09:00:00 (2001's own submission).  Columns after state: submit_time,
# duration (all runs), time_limit, first_start, earlier_runs.
"$lucid" trace import --format sacct "$sa/duplicates.sacct" --out "$tmp/dup" >/dev/null
m=$tmp/dup/MANIFEST
check "sacct duplicates: 14 rows, 5 jobs: 1 step, 6 joined, 1 never started, 1 waiting again" \
    [ "$(field "$m" records_read)/$(field "$m" jobs_written):$(removed "$m" step)$(removed "$m" requeue_record)$(removed "$m" never_started)$(removed "$m" waiting_again)" = 14/5:1611 ]
# 2001: submit 09:00:00 (not the requeue's 09:05:30), first start +30 s,
# 300 + 3600 = 3900 s run (4 x 3900 = 15,600 GPU-s), 300 s before its last run.
check "sacct duplicates: profiled job joined" grep -qx '2001,alice,main,4,8,COMPLETED,0,3900,7200,30,300,2024-03-01 09:00:00' "$tmp/dup/trace.csv"
# 2002: submit 09:10:00 = 600, first start 09:12:00 = 720, 300 + 1800 + 3600
# = 5700 s (2 x 5700 = 11,400 GPU-s), 300 + 1800 = 2100 s before its last run.
check "sacct duplicates: job requeued twice" grep -qx '2002,bob,main,2,4,COMPLETED,600,5700,14400,720,2100,2024-03-01 09:10:00' "$tmp/dup/trace.csv"
# 2003: one record, 09:20:00 = 1200, start 09:25:00 = 1500, 1200 s.
check "sacct duplicates: job never profiled" grep -qx '2003,carol,main,16,32,COMPLETED,1200,1200,3600,1500,0,2024-03-01 09:20:00' "$tmp/dup/trace.csv"
# 2005: only its profiling run ran (120 s): the main record adds nothing;
# state and partition are the last record's.
check "sacct duplicates: profiled, then cancelled while pending" grep -qx '2005,erin,main,1,2,CANCELLED,1800,120,1800,1810,120,2024-03-01 09:30:00' "$tmp/dup/trace.csv"
# 2007: submit 10:10:00 = 4200, first start +5 s, 120 + 1800 s, with its 2
# GPUs on both runs (the packed run's from gres/lucidshare).
check "sacct duplicates: packed main run joined" grep -qx '2007,gina,main,2,2,COMPLETED,4200,1920,1800,4205,120,2024-03-01 10:10:00' "$tmp/dup/trace.csv"
check "sacct duplicates: the cancelled and the waiting job are not written" [ "$(grep -c '^200[46],' "$tmp/dup/trace.csv")" = 0 ]
check "sacct duplicates: VCs are the last records' partitions" [ "$(tail -n +2 "$tmp/dup/vc_config.csv" | cut -d, -f1 | paste -sd' ')" = main ]
b=$sa/bad
expect_error "sacct conflicting duplicate" "conflict_gpus.sacct:3: AllocTRES: 8 GPUs, but job 3001 ran with 4 at line 2 (a requeued job keeps its GPUs)" "$lucid" trace import --format sacct "$b/conflict_gpus.sacct" --out "$tmp/bad"
expect_error "sacct unknown state" "unknown_state.sacct:3: State: unknown state 'SPECIAL_EXIT_X'" "$lucid" trace import --format sacct "$b/unknown_state.sacct" --out "$tmp/bad"
expect_error "sacct missing field" "missing_field.sacct:3: expected 13 fields as in the header, found 11" "$lucid" trace import --format sacct "$b/missing_field.sacct" --out "$tmp/bad"
expect_error "sacct non-UTF-8" "non_utf8.sacct:3: User: byte 0xfc is not UTF-8" "$lucid" trace import --format sacct "$b/non_utf8.sacct" --out "$tmp/bad"
expect_error "sacct bad TRES" "bad_tres.sacct:3: AllocTRES: 'cpu=1,gres/gpu=four' is not a TRES list" "$lucid" trace import --format sacct "$b/bad_tres.sacct" --out "$tmp/bad"
expect_error "sacct bad job id" "bad_jobid.sacct:3: JobID: 'job2001' is not a Slurm job id" "$lucid" trace import --format sacct "$b/bad_jobid.sacct" --out "$tmp/bad"
expect_error "sacct missing column" "missing_column.sacct:1: Submit: required column is missing" "$lucid" trace import --format sacct "$b/missing_column.sacct" --out "$tmp/bad"

# ---- itp: the first 30 real rows of each of the 10 clusters ----
it=$data/itp
"$lucid" trace import --format itp "$it"/cluster*.csv --out "$tmp/itp" >/dev/null
m=$tmp/itp/MANIFEST
check "itp excerpt: 300 jobs, 10 VCs" [ "$(field "$m" jobs_written)/$(field "$m" vcs)" = 300/10 ]
check "itp excerpt: 30 jobs per cluster" [ "$(tail -n +2 "$tmp/itp/trace.csv" | cut -d, -f3 | sort | uniq -c | awk '{print $1}' | sort -u)" = 30 ]
check "itp excerpt: job 1000001 is cluster01's first row" \
    grep -q "^1000001,,cluster01,$(sed -n 2p "$it/cluster01.csv" | cut -d, -f4),0,,.*,$(sed -n 2p "$it/cluster01.csv" | cut -d, -f1)$" "$tmp/itp/trace.csv"
check "itp excerpt: trace.csv checksum" [ "$(body_sha "$tmp/itp/trace.csv")" = 1d0cde190098cf63d079a272f120f22e9fe4ec254aa66203b9c734329d106c46 ]
check "itp excerpt: MIT licence carried" grep -q "MIT License" "$m"
"$lucid" trace import --format itp "$it"/cluster0[12].csv --vc-size cluster01=128,cluster02=64 --out "$tmp/itp2" >/dev/null
check "itp --vc-size" [ "$(tail -n +2 "$tmp/itp2/vc_config.csv" | paste -sd' ')" = "cluster01,16 cluster02,8" ]
expect_error "itp --vc-size unknown VC" "--vc-size: no VC 'cluster99'" "$lucid" trace import --format itp "$it/cluster01.csv" --vc-size cluster99=8 --out "$tmp/bad"
b=$it/bad
expect_error "itp non-UTF-8" "non_utf8.csv:4: job_id: byte 0xff is not UTF-8" "$lucid" trace import --format itp "$b/non_utf8.csv" --out "$tmp/bad"
expect_error "itp missing field" "missing_field.csv:4: expected 4 fields as in the header, found 3" "$lucid" trace import --format itp "$b/missing_field.csv" --out "$tmp/bad"
expect_error "itp bad number" "bad_number.csv:4: duration: '2.5h' is not an integer" "$lucid" trace import --format itp "$b/bad_number.csv" --out "$tmp/bad"
expect_error "itp missing column" "missing_column.csv:1: duration: required column is missing" "$lucid" trace import --format itp "$b/missing_column.csv" --out "$tmp/bad"
expect_error "itp UUID twice" "duplicate_uuid.csv:4: job_id: '965d744f-0445-c1a8-12af-97e4c536c66e' is also the job of line 2" "$lucid" trace import --format itp "$b/duplicate_uuid.csv" --out "$tmp/bad"
expect_error "itp submission time 2^63-1" "huge_submit.csv:3: submission_time: 9223372036854775807 s is more than ten years" "$lucid" trace import --format itp "$b/huge_submit.csv" --out "$tmp/bad"

# Issue 25: no silent size.  A cluster without a size gets the fewest
# whole nodes that hold its largest job at offered load <= 0.9, worked out
# here with awk from the source rows (cluster02 of the excerpt), and a
# warning with that load.
"$lucid" trace import --format itp "$it"/cluster*.csv --out "$tmp/itp3" >/dev/null 2>"$tmp/itp3.err"
want=$(tail -n +2 "$it/cluster02.csv" | awk -F, '$4 > 0 && $3 >= 1 { w += $4 * $3; if ($4 > big) big = $4; if (first == "" || $2 < first) first = $2; if ($2 > last) last = $2 }
    END { n = int(w / (last - first) / 0.9 / 8); if (n * 8 * 0.9 * (last - first) < w) n++; b = int((big + 7) / 8); if (b > n) n = b; printf "%d %.2f", n, w / (last - first) / (n * 8) }')
check "sizing rule: cluster02 = ${want% *} nodes" grep -qx "cluster02,${want% *}" "$tmp/itp3/vc_config.csv"
check "sizing rule warned with the load" grep -q "^lucid: warning: VC cluster02: the source gives no size; $(( ${want% *} * 8 )) GPUs by the sizing rule (offered load ${want#* }, at most 0.90" "$tmp/itp3.err"
check "sizing rule in the MANIFEST" grep -q "VC cluster02: no size in the source: $(( ${want% *} * 8 )) GPUs by the sizing rule" "$tmp/itp3/MANIFEST"
# Every policy on the imported trace: all six, Lucid online with the Venus
# prior, QSSF on Lucid's online estimates, the profiler taken out of the VCs.
x=$tmp/itp3/experiment.ini
check "import experiment: all six policies" grep -qx "policies = fifo,sjf,srtf,qssf,tiresias,lucid" "$x"
check "import experiment: online, Venus prior" bash -c "grep -qx 'models = online' '$x' && grep -qx 'prior = venus' '$x'"
taken=$(sed -n 's/^profiler_nodes_from = //p' "$x" | tr ',' '\n' | awk -F: '{ s += $2 } END { print s }')
check "import experiment: profiler nodes taken from the VCs ($taken)" [ "$taken" = "$(sed -n 's/^profiler_nodes = //p' "$x")" ]
if "$lucid" simulate "$x" >"$tmp/itp3.txt" 2>&1; then
    s3=$tmp/itp3/results/summary.csv
    check "six policies simulated" [ "$(awk -F, '$2 == "all"' "$s3" | wc -l)" = 6 ]
    check "summary.csv flags Lucid's prior" grep -q '^lucid,all,.*,online+venus_prior,[0-9.]*,[0-9.]*$' "$s3"
    check "summary.csv flags QSSF's estimates" grep -q '^qssf,all,.*,lucid_online_estimates,[0-9.]*,[0-9.]*$' "$s3"
    check "the terminal flags the prior" grep -q '^lucid: sharing scores and co-located speeds from the Venus prior' "$tmp/itp3.txt"
    check "MANIFEST flags the prior" grep -q 'prior=venus' "$tmp/itp3/results/MANIFEST"
    # lucid explain of QSSF re-runs Lucid for its estimates: the same start.
    j=$(awk -F, 'NR == 2 { print $1 }' "$tmp/itp3/results/jobs-qssf.csv")
    st=$(awk -F, -v j="$j" '$1 == j { print $6 }' "$tmp/itp3/results/jobs-qssf.csv")
    check "explain qssf on the imported trace: starts at $st" bash -c "'$lucid' explain '$tmp/itp3/results' $j --policy qssf | grep -q '^started at $st '"
    check "MANIFEST names the model inputs" bash -c "grep -qx 'model_inputs = lucid online+venus_prior' '$tmp/itp3/results/MANIFEST' && grep -qx 'model_inputs = qssf lucid_online_estimates' '$tmp/itp3/results/MANIFEST'"
else
    fail "simulate the imported ITP excerpt"; cat "$tmp/itp3.txt"
fi
# ---- philly: built to the published schema (README's example job + one per rule) ----
ph=$data/philly
"$lucid" trace import --format philly "$ph/cluster_job_log" "$ph/cluster_machine_list" --out "$tmp/ph" >/dev/null
m=$tmp/ph/MANIFEST
check "philly: 5 of 12 jobs" [ "$(field "$m" records_read)/$(field "$m" jobs_written)" = 12/5 ]
check "philly: one job per rule (no_times 2)" [ "$(removed "$m" no_attempt)$(removed "$m" no_submit_time)$(removed "$m" no_times)$(removed "$m" still_running)$(removed "$m" no_gpus)$(removed "$m" zero_duration)" = 112111 ]
# Hand-computed: README job = 74 s + 2 d 05:39:42 = 193256 s on 8 GPUs; 2 hosts x 8 GPUs.
check "philly sum: attempts summed, GPUs over hosts" [ "$(cut -d, -f1,4,7,8 "$tmp/ph/trace.csv" | tail -n +2 | paste -sd' ')" = "1,8,0,193256 2,16,2901,10800 8,1,10671,42 9,2,13101,3600 11,4,17001,6300" ]
check "philly: trace.csv checksum" [ "$(body_sha "$tmp/ph/trace.csv")" = "ff3752be8f59653125631e12ad28c8ca69e8f4a792cc4467c69045b02817efdb" ]
check "philly: nodes from the machine list" [ "$(field "$m" gpus_per_node)" = 8 ]
# The job log through a pipe (as from `tar -xzOf`): read once, same jobs,
# leading blank lines still counted in error positions; a machine list or a
# sacct node list through a pipe is refused (each is read twice).
"$lucid" trace import --format philly <(cat "$ph/cluster_job_log") "$ph/cluster_machine_list" --out "$tmp/ph-pipe" >/dev/null
check "philly from a pipe: same trace" cmp -s "$tmp/ph/trace.csv" "$tmp/ph-pipe/trace.csv"
expect_error "philly from a pipe: error line counts leading blank lines" "/dev/fd/" \
    "$lucid" trace import --format philly <(printf '\n\n[\n  {"vc": 1\n') --out "$tmp/ph-bad"
err=$("$lucid" trace import --format philly <(printf '\n\n[\n  {"vc": 1\n') --out "$tmp/ph-bad" 2>&1)
check "philly from a pipe: truncated at line 5" bash -c "[[ '$err' == *:5:\ truncated\ JSON* ]]"
expect_error "philly machine list from a pipe" "a machine list cannot be read from a pipe" \
    "$lucid" trace import --format philly "$ph/cluster_job_log" <(cat "$ph/cluster_machine_list") --out "$tmp/ph-bad"
expect_error "helios file from a pipe" "a Helios file cannot be read from a pipe" \
    "$lucid" trace import --format helios <(cat "$data/helios/cluster_log.csv") "$data/helios/cluster_gpu_number.csv" --out "$tmp/he-bad"
expect_error "sacct node list from a pipe" "a node list cannot be read from a pipe" \
    "$lucid" trace import --format sacct "$sa/schema.sacct" <(cat "$sa/nodes.txt") --out "$tmp/sa-bad"
"$lucid" trace import --format philly "$ph/cluster_job_log" --attempts span --out "$tmp/ph2" >/dev/null
check "philly span: first start to last end" [ "$(cut -d, -f1,8 "$tmp/ph2/trace.csv" | tail -n +2 | paste -sd' ')" = "1,193263 2,10800 8,42 9,7200 11,11700" ]
"$lucid" trace import --format philly "$ph/cluster_job_log" --attempts each --out "$tmp/ph3" >/dev/null
check "philly each: one job per attempt, resubmitted when the previous ended" [ "$(cut -d, -f1,7,8 "$tmp/ph3/trace.csv" | tail -n +2 | paste -sd' ')" = "1000,0,74 1001,104,193182 2000,2901,10800 8000,10671,42 9001,13101,3600 11000,17001,1800 11001,19101,3600 11002,24501,900" ]
check "philly: simulates" "$lucid" simulate "$tmp/ph/experiment.ini" --quiet
b=$ph/bad
expect_error "philly truncated JSON" "truncated.json:96: truncated JSON: end of file inside job record 3" "$lucid" trace import --format philly "$b/truncated.json" --out "$tmp/bad"
expect_error "philly missing field" "missing_field.json:49: vc: missing or not a string" "$lucid" trace import --format philly "$b/missing_field.json" --out "$tmp/bad"
expect_error "philly unknown status" "unknown_status.json:49: status: unknown status 'Preempted'" "$lucid" trace import --format philly "$b/unknown_status.json" --out "$tmp/bad"
expect_error "philly non-UTF-8" "non_utf8.json:88: job record 2: invalid JSON: unable to decode byte 0xff" "$lucid" trace import --format philly "$b/non_utf8.json" --out "$tmp/bad"
expect_error "philly trailing garbage" "not_a_list.json:50: expected a job object ('{'), found 'h'" "$lucid" trace import --format philly "$b/not_a_list.json" --out "$tmp/bad"

# ---- swf: built to the SWF 2.2 definition, 4 processors per GPU ----
sw=$data/swf
"$lucid" trace import --format swf "$sw/excerpt.swf" --procs-per-gpu 4 --out "$tmp/swf" >/dev/null
m=$tmp/swf/MANIFEST
check "swf: 7 of 12 lines, partial 2, no run time 2, no processors 1" [ "$(field "$m" records_read)/$(field "$m" jobs_written)/$(removed "$m" partial_execution)$(removed "$m" no_runtime)$(removed "$m" no_processors)" = 12/7/221 ]
# ceil(procs / 4): 4 -> 1, 8 -> 2, requested 16 (allocated unknown) -> 4, 6 -> 2;
# requested time -> time_limit; UnixStartTime 2005-01-01 08:00:00 UTC.
check "swf: GPUs, limits, states" [ "$(tail -n +2 "$tmp/swf/trace.csv" | cut -d, -f1,4,6,8,9 | paste -sd' ')" = "1,1,COMPLETED,3600,7200 2,2,FAILED,120,600 3,4,COMPLETED,1800,3600 5,8,COMPLETED,7200,14400 8,1,UNKNOWN,450, 9,16,COMPLETED,86400,86400 10,2,FAILED,30,120" ]
check "swf: calendar from UnixStartTime" grep -q ',2005-01-01 08:00:00$' "$tmp/swf/trace.csv"
check "swf: one VC of MaxProcs 64 / 4 = 16 GPUs" [ "$(tail -n +2 "$tmp/swf/vc_config.csv")" = "swf,2" ]
check "swf: trace.csv checksum" [ "$(body_sha "$tmp/swf/trace.csv")" = 5b1880aa5ec7f71d9229fd5f0699647b519da98d1705177f3492ecd05e132826 ]
check "swf: source hashed (on its own thread) as sha256sum does" grep -q "^source: .*/excerpt.swf sha256=$(sha256sum <"$sw/excerpt.swf" | cut -d' ' -f1) bytes=$(wc -c <"$sw/excerpt.swf")$" "$m"
# A pipe is read once, by the converter: same jobs, and the MANIFEST says
# it was not hashed (not the empty stream's checksum).
"$lucid" trace import --format swf <(cat "$sw/excerpt.swf") --procs-per-gpu 4 --out "$tmp/swf-pipe" >/dev/null
check "swf from a pipe: same trace" cmp -s "$tmp/swf/trace.csv" "$tmp/swf-pipe/trace.csv"
check "swf from a pipe: not hashed" grep -q '^source: .* sha256=- bytes=- (not a regular file: read once, not hashed)$' "$tmp/swf-pipe/MANIFEST"
"$lucid" trace import --format swf "$sw/excerpt.swf" --procs-per-gpu 4 --vc-by queue --vc-size queue1=32,queue2=32 --out "$tmp/swf2" >/dev/null
check "swf --vc-by queue" [ "$(tail -n +2 "$tmp/swf2/vc_config.csv" | paste -sd' ')" = "queue1,4 queue2,4" ]
b=$sw/bad
expect_error "swf unknown status" "unknown_status.swf:12: status: 7 is not an SWF status" "$lucid" trace import --format swf "$b/unknown_status.swf" --out "$tmp/bad"
expect_error "swf missing field" "missing_field.swf:12: expected 18 fields, found 17" "$lucid" trace import --format swf "$b/missing_field.swf" --out "$tmp/bad"
expect_error "swf not a number" "not_a_number.swf:12: field 4: '3O" "$lucid" trace import --format swf "$b/not_a_number.swf" --out "$tmp/bad"
expect_error "swf non-UTF-8" "non_utf8.swf:11: byte 0xfc is not UTF-8" "$lucid" trace import --format swf "$b/non_utf8.swf" --out "$tmp/bad"

# ---- pai2020: real machine spec, job and task tables built to the published schema ----
pa=$data/pai2020
"$lucid" trace import --format pai2020 "$pa/pai_job_table.csv" "$pa/pai_task_table.csv" "$pa/pai_machine_spec.csv" --out "$tmp/pai" >/dev/null
m=$tmp/pai/MANIFEST
check "pai: 4 of 11 jobs, one per rule, the mixed-type job in a 0-GPU VC" [ "$(field "$m" records_read)/$(field "$m" jobs_written)/$(removed "$m" still_running)$(removed "$m" never_started)$(removed "$m" no_task)$(removed "$m" no_times)$(removed "$m" cpu_only)$(removed "$m" zero_duration)$(removed "$m" vc_without_gpus)" = 11/4/1111111 ]
# a1a1: 4 workers x ceil(100/100) + 2 ps x 0 = 4 GPUs, 100005..103700; b2b2: 2 x 2 + 1 x ceil(0.25) = 5.
check "pai: GPUs from inst_num x ceil(plan_gpu/100), first start to last end" [ "$(tail -n +2 "$tmp/pai/trace.csv" | cut -d, -f1,3,4,8 | paste -sd' ')" = "3,V100M32,4,3695 4,V100M32,5,59900 2,MISC,1,38 1,V100,1,536" ]
# The real pai_machine_spec.csv: MISC 280 x 8 GPUs, V100 104 x 8, V100M32 135 x 8.
check "pai: VC sizes from the real machine spec" [ "$(tail -n +2 "$tmp/pai/vc_config.csv" | paste -sd' ')" = "MISC,280 V100,104 V100M32,135" ]
check "pai: trace.csv checksum" [ "$(body_sha "$tmp/pai/trace.csv")" = 52ddc17d0d6656d50f3850fde5b0b8648b17a2060a218a290651eccc816f29ae ]
expect_error "pai unknown status" "bad/pai_job_table.csv:3: status: unknown status 'Pending'" "$lucid" trace import --format pai2020 "$pa"/bad/pai_*.csv --out "$tmp/bad"
expect_error "pai missing field" "bad2/pai_task_table.csv:2: expected 10 fields" "$lucid" trace import --format pai2020 "$pa"/bad2/pai_*.csv --out "$tmp/bad"
expect_error "pai non-UTF-8" "bad3/pai_job_table.csv:2: user: byte 0xe9 is not UTF-8" "$lucid" trace import --format pai2020 "$pa"/bad3/pai_*.csv --out "$tmp/bad"

# ---- acme: the README's example rows + one per rule, time-zone-aware ----
ac=$data/acme
"$lucid" trace import --format acme "$ac/trace_seren.csv" "$ac/trace_kalos.csv" --out "$tmp/acme" >/dev/null
m=$tmp/acme/MANIFEST
check "acme: 7 of 10, cpu_only 1, no_times 1, zero_duration 1" [ "$(field "$m" records_read)/$(field "$m" jobs_written)/$(removed "$m" cpu_only)$(removed "$m" no_times)$(removed "$m" zero_duration)" = 10/7/111 ]
# 00:18:22+08:00 is 16:18:22 UTC the day before; Kalos' 03:10+08:00 (19:10 UTC on the
# 16th) sorts before its 11:00+00:00 jobs.
check "acme: offsets applied" [ "$(tail -n +2 "$tmp/acme/trace.csv" | cut -d, -f1,9 | paste -sd' ')" = "5778432,2023-02-28 16:18:22 5778469,2023-02-28 16:23:58 5778473,2023-02-28 16:40:00 5778474,2023-02-28 16:50:00 2000000003,2023-05-16 19:10:00 2000000001,2023-05-17 11:00:58 2000000002,2023-05-17 11:28:42" ]
check "acme: Kalos ids kept in source_id" grep -q '^2000000001,uf794,kalos,64,960,FAILED,6720156,18,2023-05-17 11:00:58,dlctk696s0jbvitv$' "$tmp/acme/trace.csv"
check "acme: node_num x 8 < gpu_num counted" grep -q '^Acme: .*; 1 jobs ask for more GPUs than node_num x 8' "$m"
check "acme: trace.csv checksum" [ "$(body_sha "$tmp/acme/trace.csv")" = b958c7859ac17e748357a3501e902d86c7ae79591fe01ef174b83d142edb9da7 ]
b=$ac/bad
expect_error "acme unknown state" "trace_unknown_state.csv:3: state: unknown state 'PREEMPTED'" "$lucid" trace import --format acme "$b/trace_unknown_state.csv" --out "$tmp/bad"
expect_error "acme missing field" "trace_missing_field.csv:3: expected 13 fields" "$lucid" trace import --format acme "$b/trace_missing_field.csv" --out "$tmp/bad"
expect_error "acme bad offset" "trace_bad_offset.csv:3: submit_time: '2023-03-01 00:18:22+8h': bad UTC offset" "$lucid" trace import --format acme "$b/trace_bad_offset.csv" --out "$tmp/bad"
expect_error "acme non-UTF-8" "trace_non_utf8.csv:3: user: byte 0xff is not UTF-8" "$lucid" trace import --format acme "$b/trace_non_utf8.csv" --out "$tmp/bad"

# ---- --workload-from: by job id, else (--sample-workload) one of the 32 reference
# jobs nearest in duration, seeded ----
{
    echo "job_id,vc,gpu_num,submit_time,duration,model,dataset,batchsize,amp,speed,gpu_util,gmem_util,gmem"
    for d in $(seq 1 40); do echo "$((1000 + d)),a,1,$d,$d,m$d,ds,32,0,1.0,50,20,1000"; done
} >"$tmp/ref.csv"
{
    echo "job_id,user,vc,gpu_num,cpu_num,state,submit_time,duration"
    echo "1005,u,a,1,1,COMPLETED,2020-01-01 00:00:00,77"
    echo "2001,u,a,1,1,COMPLETED,2020-01-01 00:00:01,100"
    echo "2002,u,a,1,1,COMPLETED,2020-01-01 00:00:02,1"
    echo "2003,u,a,1,1,COMPLETED,2020-01-01 00:00:03,20"
} >"$tmp/w.csv"
"$lucid" trace import --format helios "$tmp/w.csv" --workload-from "$tmp/ref.csv" --sample-workload --seed 3 --out "$tmp/w1" >/dev/null
"$lucid" trace import --format helios "$tmp/w.csv" --workload-from "$tmp/ref.csv" --sample-workload --seed 3 --out "$tmp/w2" >/dev/null
model() { awk -F, -v id="$2" 'NR > 1 && $1 == id { print substr($9, 2) }' "$1/trace.csv"; }
check "workload by id: job 1005 gets m5 whatever its duration" [ "$(model "$tmp/w1" 1005)" = 5 ]
# Duration 100: the 32 longest (9..40); 1: the 32 shortest (1..32); 20: 16 below, 16 from it (4..35).
m1=$(model "$tmp/w1" 2001) m2=$(model "$tmp/w1" 2002) m3=$(model "$tmp/w1" 2003)
check "sampled workloads from the 32 nearest durations ($m1 $m2 $m3)" \
    [ "${m1:-0}" -ge 9 -a "${m1:-0}" -le 40 -a "${m2:-0}" -ge 1 -a "${m2:-0}" -le 32 -a "${m3:-0}" -ge 4 -a "${m3:-0}" -le 35 ]
check "sampling is seeded: same seed, same trace" cmp -s "$tmp/w1/trace.csv" "$tmp/w2/trace.csv"
check "MANIFEST notes how workloads were filled" grep -q "1 jobs by job id, 3 sampled among the 32 jobs nearest in duration (seed 3), 0 left without" "$tmp/w1/MANIFEST"
"$lucid" trace import --format helios "$tmp/w.csv" --workload-from "$tmp/ref.csv" --out "$tmp/w3" >/dev/null
check "without --sample-workload the others get none" grep -q "1 jobs by job id, 0 sampled .*, 3 left without" "$tmp/w3/MANIFEST"

# ---- lucidd: the state database (tests/test_import_lucidd.c writes one with the
# daemon's own store); a file that is not one is refused in one line. ----
expect_error "lucidd: not a state database" "excerpt.swf: not a lucidd state database" "$lucid" trace import --format lucidd "$data/swf/excerpt.swf" --out "$tmp/bad"

# The MANIFEST's command line is quoted for the shell and redoes the import exactly.
check "MANIFEST command quotes arguments" grep -q "^command: lucid trace import --format helios .* --origin '2020-04-01 00:02:31' " "$tmp/venus/MANIFEST"
mv "$tmp/venus/trace.csv" "$tmp/venus-first.csv"
(eval "\"\$lucid\"$(sed -n 's/^command: lucid//p' "$tmp/venus/MANIFEST")" >/dev/null)
check "MANIFEST command reproduces trace.csv" cmp -s "$tmp/venus-first.csv" "$tmp/venus/trace.csv"

# --help lists every format and exits 0; no arguments is a usage error (2).
check "import --help lists the 8 formats" [ "$("$lucid" trace import --help | grep -cE '^  (helios|sacct|itp|philly|acme|pai2020|lucidd|swf) ')" = 8 ]
"$lucid" trace import >/dev/null 2>&1
check "import without arguments exits 2" [ $? = 2 ]

# Every MANIFEST balances: records read = written + removed (philly --attempts
# each is the documented exception: one record, one job per attempt).
for m in "$tmp"/*/MANIFEST; do
    case $m in */ph3/*) continue ;; esac
    check "records = written + removed in ${m#$tmp/}" [ "$(field "$m" records_read)" = $(( $(field "$m" jobs_written) + $(field "$m" jobs_removed) )) ]
done

# The full public trace, when it has been fetched (docs/traces.md gives the command):
# all 69,351 jobs accounted for, rule by rule.
if [ -n "${LUCID_TRACES:-}" ] && [ -f "$LUCID_TRACES/itp/cluster10.csv" ]; then
    "$lucid" trace import --format itp "$LUCID_TRACES"/itp/cluster*.csv --out "$tmp/itpfull" >/dev/null
    m=$tmp/itpfull/MANIFEST
    check "itp full: 69351 read" [ "$(field "$m" records_read)" = 69351 ]
    check "itp full: written + removed = 69351" [ $(( $(field "$m" jobs_written) + $(field "$m" jobs_removed) )) = 69351 ]
else
    echo "itp full trace: not fetched (set LUCID_TRACES, see docs/traces.md); skipped"
fi

finish cli_import

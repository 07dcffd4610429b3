#!/usr/bin/env bash
# lab_history.sh — a multi-user history made on the site lab under plain
# Slurm, read back from Slurm's accounting with `lucid trace import --format
# sacct --slurm-conf` by `lucid whatif`: (issue 26) the simulator's slurm
# policy replaying it, job by job against what Slurm did, and each policy
# beside that replay; then (issue 23) fair share's cost
# and gain on an imported trace with users: all six policies with
# [simulate] fairshare_weight 0 and 2 (docs/fairshare.md).
#
#   bench/lab_history.sh BUILD_DIR   (as root; about 12 minutes)
#
# The lab: scripts/lab-cluster.sh's site profile (sched/backfill with
# bf_interval 10, priority/multifactor with fair share, age and job size,
# slurmdbd), 4 main nodes x 8 GPUs, untyped GPUs, the plugins not loaded
# (plain Slurm).  The workload, from a fixed seed (awk's srand(7)), four
# users of the lab's two accounts:
#   root       100 jobs at once at t = 0 (a backlog)
#   lucidlab1   50 jobs, one every 5 s from t = 0
#   lucidlab2   50 jobs, one every 5 s from t = 60
#   nobody      40 jobs at once at t = 150
# each of 1, 2 or 4 GPUs and a 5..40 s payload, --time=5.  When every job
# has ended, `sacct --duplicates` (the command of docs/traces.md),
# `scontrol show node -o` and the lab's slurm.conf are imported; the
# simulator runs the trace's own experiment.ini (one VC per partition, sized
# from the nodes; the six policies and slurm).  Printed: whatif's report
# (the replay's error: starts within 2 / 10 / 60 s of Slurm's, the error's
# median, p90 and max, average JCT simulated against Slurm's; each policy
# against the replay), then the table of docs/fairshare.md for this trace.
# Results go to OUT (default /tmp/lucid-lab-history).
#
# MODE=lucid (issue 26's other half): the same workload with lucid's
# plugins and lucidd in front (--profile-limit 7 --packing on, the
# profiler's bypass and yield off), read back from lucidd's state
# (`trace import --format lucidd`), and replayed by the simulator's lucid
# policy set up as lucidd ran: the profiling node beside main's 32 GPUs,
# the same limit, estimates from the jobs' time limits (lucidd's heuristic
# before its first model).  Printed: the replay's error
# (bench/replay_error.py) against the starts lucidd's state recorded (each
# job's main start, or its profiling start if it ended in the profiler:
# the start the simulator's jobs-lucid.csv gives).
# REUSE=1 replays OUT's saved history again without running the lab
# (TWIN_LIMIT=S: the twin's profiling limit, default 7; TWIN_OVERHEAD=S:
# its [lucid] profiler_overhead, default 0).
set -euo pipefail
BUILD=$(cd "$1" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/lucid-lab-history}
mkdir -p "$OUT"

source "$SRC/bench/lab_run.sh"

lucid_replay() {
    rm -rf "$OUT/trace" "$OUT/results"
    "$BUILD/lucid" trace import --format lucidd "$lab/lucid.db" --vc-size lucidd=32 --out "$OUT/trace" >/dev/null
    # The twin as lucidd ran.  Each job's own length is its last run
    # (duration - earlier_runs): lucidd restarts a profiled job from its
    # beginning on main, and the simulator's Lucid discards the profiling
    # run the same way.  Estimates from the time limits (300 s for every
    # job: lucidd's heuristic before its first model); the real ends from
    # lucidd's state (a profiled job waited between its two runs).
    python3 - "$OUT/trace" "$lab/lucid.db" <<'PY'
import csv, sqlite3, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(f"{d}/trace.csv")))
with open(f"{d}/trace-last.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    for r in rows:
        r["duration"] = str(int(r["duration"]) - int(r["earlier_runs"] or 0))
        r["earlier_runs"] = "0"
        w.writerow(r)
with open(f"{d}/limits.csv", "w") as f:
    f.write("job_id,estimate\n")
    for r in rows:
        f.write(f"{r['job_id']},{r.get('time_limit') or 300}\n")
db = sqlite3.connect(f"file:{sys.argv[2]}?mode=ro", uri=True)
t0 = db.execute("SELECT min(submit_time) FROM jobs").fetchone()[0]
main = {}
with open(f"{d}/ends.csv", "w") as f:
    f.write("job_id,end_time\n")
    for job, end, first, last, prof in db.execute(
            "SELECT job_id, end_time, main_first_start, main_start, profile_start FROM jobs"):
        if end > 0:
            f.write(f"{job},{end - t0}\n")
        main[str(job)] = (first or last or prof) - t0
# The starts compared: the simulator's start_time of a profiled job is
# its main start (its profiling start is not in jobs-lucid.csv), so the
# history's is too: lucidd's first main start, or the profiling start of
# a job that ended in the profiler.
with open(f"{d}/trace-main.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    for r in rows:
        r = dict(r)
        r["first_start"] = str(main[r["job_id"]])
        w.writerow(r)
PY
    # One profiling node of 8 GPUs beside main (taken from no VC: the
    # import's profiler_nodes_from and borrow_vc dropped), jobs of up to 8
    # GPUs profiled, the 7-s limit (TWIN_LIMIT to try others), no
    # autoscaling, no overhead (TWIN_OVERHEAD to try one).
    grep -v '^\(jobs\|profiler_nodes_from\|borrow_vc\) =' "$OUT/trace/experiment.ini" |
        sed "s#^\[trace\]#[trace]\njobs = $OUT/trace/trace-last.csv#" >"$OUT/trace/twin.ini"
    "$BUILD/lucid" simulate "$OUT/trace/twin.ini" --quiet --out "$OUT/results" \
        --set simulate.policies=lucid --set lucid.profiler_nodes=1 --set lucid.profiler_factor=8 \
        --set lucid.profiler_autoscale=no --set lucid.profiler_time_limit="${TWIN_LIMIT:-7}" \
        --set lucid.profiler_overhead="${TWIN_OVERHEAD:-0}" \
        --set lucid.models=files --set lucid.estimates="$OUT/trace/limits.csv" 2>&1 |
        grep -v 'offered load' || true
    python3 "$SRC/bench/replay_error.py" "$OUT/trace/trace-main.csv" "$OUT/results/jobs-lucid.csv" \
        "$OUT/trace/ends.csv"
}

MODE=${MODE:-slurm}
lab=$OUT/lab
if [[ $MODE == lucid && ${REUSE:-0} == 1 ]]; then
    [[ -f $lab/lucid.db ]] || { echo "lab_history: REUSE=1: no history in $lab/lucid.db" >&2; exit 2; }
    lucid_replay
    exit 0
fi
if [[ $MODE == lucid ]]; then
    lab_run_up "$lab" lucid 4 8 --profile-limit 7 --packing on --profiler-bypass off \
        --profiler-yield off
else
    lab_run_up "$lab" slurm 4 8
fi
chmod 777 "$lab/out"
cat >"$lab/payload.sh" <<'EOF'
#!/bin/bash
sleep "$1"
EOF
chmod 755 "$lab/payload.sh"
# The plan: "at user gpus seconds", in submission order.
awk 'BEGIN { srand(7); g[0] = 1; g[1] = 2; g[2] = 4
    for (i = 0; i < 100; i++) print 0, "root", g[int(rand() * 3)], 5 + int(rand() * 36)
    for (i = 0; i < 50; i++) print 5 * i, "lucidlab1", g[int(rand() * 3)], 5 + int(rand() * 36)
    for (i = 0; i < 50; i++) print 60 + 5 * i, "lucidlab2", g[int(rand() * 3)], 5 + int(rand() * 36)
    for (i = 0; i < 40; i++) print 150, "nobody", g[int(rand() * 3)], 5 + int(rand() * 36) }' |
    sort -s -n -k1,1 >"$lab/plan.txt"
t0=$(date +%s.%N)
while read -r at user gpus secs; do
    python3 -c "import time, sys; d = $t0 + $at - time.time(); time.sleep(d if d > 0 else 0)"
    (cd "$lab/out" && runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" \
        sbatch --parsable -o /dev/null -p main --gres=gpu:"$gpus" --time=5 "$lab/payload.sh" "$secs") \
        >>"$lab/ids.txt"
done <"$lab/plan.txt"
deadline=$((SECONDS + 1500))
until [[ -z $(squeue -h -r -o %A 2>/dev/null | head -1 || true) ]]; do
    ((SECONDS < deadline)) || { echo "lab_history: jobs left after 25 minutes" >&2; break; }
    sleep 5
done
# slurmdbd records an end a moment after slurmctld: read until every job has one.
jobs=$(wc -l <"$lab/ids.txt")
deadline=$((SECONDS + 120))
while :; do
    TZ=UTC sacct -a --parsable2 --allocations --duplicates -S now-1days \
        -o JobID,User,Account,Partition,AllocTRES,ReqTRES,Submit,Start,End,Elapsed,State,NNodes,Timelimit \
        >"$OUT/jobs.sacct" 2>"$OUT/sacct.err" || true
    ended=$(awk -F'|' 'NR > 1 && $9 != "Unknown" && $9 != "" {print $1}' "$OUT/jobs.sacct" | sort -u | wc -l)
    ((ended >= jobs || SECONDS > deadline)) && break
    sleep 2
done
scontrol show node -o >"$OUT/nodes.txt"
cp "$lab/etc/slurm.conf" "$OUT/slurm.conf"
if [[ $MODE == lucid ]]; then
    # lucidd's record of every end is made at its next tick.
    deadline=$((SECONDS + 60))
    while "$BUILD/lucid" queue --socket "$LAB_RUN_SOCK" --noheader -o %i 2>/dev/null | grep -q .; do
        ((SECONDS < deadline)) || break
        sleep 1
    done
    lab_run_down "$lab"
    lucid_replay
    exit 0
fi
lab_run_down "$lab"
rm -rf "$OUT/whatif"
# The twin's error and each policy beside it (issue 26).
"$BUILD/lucid" whatif --format sacct "$OUT/jobs.sacct" "$OUT/nodes.txt" \
    --slurm-conf "$OUT/slurm.conf" --out "$OUT/whatif"
# Fair share's cost and gain on this imported trace (issue 23).
for w in 0 2; do
    "$BUILD/lucid" simulate "$OUT/whatif/trace/experiment.ini" --quiet --out "$OUT/results/lab-w$w" \
        --set simulate.fairshare_weight=$w
done
python3 "$SRC/bench/fairshare_sim_table.py" "$OUT" "lab=lab history, 4 users (sacct import)"

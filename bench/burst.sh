#!/usr/bin/env bash
# burst.sh — a burst of submissions on the site lab, under lucidd and under
# plain Slurm with the same configuration (issues 22 and 28).
#
#   bench/burst.sh BUILD_DIR [JOBS [MIN_S MAX_S]]   (as root)
#
# The lab: scripts/lab-cluster.sh's site profile, 8 main nodes x 8 GPUs +
# 1 profiling node (untyped GPUs: every job may use every node).  The
# burst: JOBS jobs (default 2000): half single `sbatch`, half arrays of 50,
# 1/2/4/8 GPUs and MIN_S..MAX_S-second payloads (default 5..60) drawn from
# a fixed seed, submitted as fast as sbatch goes.  Run 1: lucidd
# (--profile-limit 10, --tick-ms 500, packing off, the default
# --profiler-bypass on).  Run 2: the same burst, the plugins not loaded
# (plain Slurm: sched/backfill, multifactor).  Each run ends when every job
# has ended.  Printed per run (from Slurm's records: `sacct --duplicates`,
# the payloads' own start lines, sinfo samples every 5 s):
#   submit     seconds from the first to the last submission
#   started    jobs whose first run started within 60 / 120 / 240 s of the
#              first submission
#   first      median submit-to-first-start (s)
#   lost/twice jobs that never completed / ran more than once on main
#   idle       main-GPU utilisation samples under 90 % while jobs waited
#   ticks      lucidd's ticks per second during the run (lucid status), the
#              lowest rate between two samples (~5 s) and the ticks that
#              ran over a second (lucid status's slow_ticks)
#   listing    how old Slurm's listing was when lucidd decided on it: the
#              median of the samples and the oldest of the run (lucid
#              status's slurm_job_reads.age_s, age_max_s)
# Results go to OUT (default /tmp/lucid-burst): one folder per run; each
# sample under 90 % while jobs waited leaves OUT/MODE/dips/TIME: every
# node's GPUs in use, main's running and pending jobs (Slurm's reasons and
# priorities) and, under lucid, `lucid queue`'s phases and reasons.
# HORIZON=S (environment) ends each run S seconds after the first
# submission: whatever has not ended is cancelled there (a full run of the
# default burst is about an hour per mode on 64 GPUs); then `started`, the
# samples and the tick rate cover the horizon, `first` is the median over
# every job with the unstarted ones counted as later than any start (printed
# only when more than half started), and `lost` leaves out the cancelled.
# MODES="lucid" (or "slurm") runs one mode only.  LUCIDD_ARGS="..." adds
# lucidd options after the ones above (e.g. "--backfill easy").
set -euo pipefail
BUILD=$(cd "$1" && pwd)
JOBS=${2:-2000} MIN_S=${3:-5} MAX_S=${4:-60}
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/lucid-burst}
HORIZON=${HORIZON:-0}
mkdir -p "$OUT"

source "$SRC/bench/lab_run.sh"

run() { # NAME lucid|slurm
    local name=$1 mode=$2 lab=$OUT/$1
    # shellcheck disable=SC2086 # LUCIDD_ARGS: more lucidd options, word-split
    lab_run_up "$lab" "$mode" 8 8 --tick-ms 500 --profile-limit 10 --packing off ${LUCIDD_ARGS:-}
    local sock=$LAB_RUN_SOCK
    cat >"$lab/payload.sh" <<'EOF'
#!/bin/bash
echo "start $SLURM_JOB_ID $(date +%s.%N) $SLURM_JOB_PARTITION" >>"$BURST_LOG"
sleep "$1"
EOF
    chmod 755 "$lab/payload.sh"
    export BURST_LOG=$lab/payload.log
    : >"$BURST_LOG"
    # The same draws for both runs: awk's srand(42).
    awk -v n="$JOBS" -v lo="$MIN_S" -v hi="$MAX_S" 'BEGIN { srand(42); g[0]=1; g[1]=2; g[2]=4; g[3]=8;
        for (i = 0; i < n / 2; i++) print "single", g[int(rand() * 4)], lo + int(rand() * (hi - lo + 1));
        for (i = 0; i < n / 100; i++) print "array", g[int(rand() * 4)], lo + int(rand() * (hi - lo + 1)) }' \
        >"$lab/plan.txt"
    local t0 t1 kind gpus secs
    t0=$(date +%s.%N)
    while read -r kind gpus secs; do
        if [[ $kind == single ]]; then
            sbatch --parsable -o /dev/null -p main --gres=gpu:"$gpus" --export=ALL "$lab/payload.sh" "$secs" >>"$lab/ids.txt"
        else
            sbatch --parsable -o /dev/null -p main --array=0-49 --gres=gpu:"$gpus" --export=ALL "$lab/payload.sh" "$secs" >>"$lab/ids.txt"
        fi
    done <"$lab/plan.txt"
    t1=$(date +%s.%N)
    echo "$t0 $t1" >"$lab/submit-window"
    # Until every job ended: sample main GPUs and pending jobs every 5 s.
    local ticks0 ticks1
    ticks0=$([[ $mode == lucid ]] && "$BUILD/lucid" status --socket "$sock" | awk '/^ticks:/ {print $2}' || echo 0)
    while :; do
        local pending used
        pending=$(squeue -h -t PD -r -o %A 2>/dev/null | wc -l)
        used=$(sinfo -h -p main -N -O 'GresUsed:40' 2>/dev/null | grep -o 'gpu:[0-9]*' | cut -d: -f2 | awk '{s += $1} END {print s + 0}')
        local tk="-1 -1 -1 -1"
        [[ $mode == lucid ]] && tk=$("$BUILD/lucid" status --socket "$sock" --json 2>/dev/null |
            python3 -c 'import json, sys; d = json.load(sys.stdin); r = d.get("slurm_job_reads", {}); print(d.get("ticks", -1), d.get("slow_ticks", -1), r.get("age_s", -1), r.get("age_max_s", -1))' 2>/dev/null || echo "-1 -1 -1 -1")
        echo "$(date +%s.%N) ${used:-0} $pending $tk" >>"$lab/samples.txt"
        # A sample under 90 % while jobs wait: what each node had free, what
        # waited and why (Slurm's view and lucid's), for reading the dip.
        if ((pending > 0 && ${used:-0} * 10 < 9 * 64)); then
            local dip=$lab/dips/$(date +%s.%N)
            mkdir -p "$lab/dips"
            { echo "# used ${used:-0} pending $pending"
              sinfo -h -N -O 'NodeList:8,Partition:10,StateLong:12,Gres:12,GresUsed:40'
              echo "# squeue (running/completing on main, then pending)"
              squeue -h -r -t R,CG -p main -o '%i %T %b %N %S'
              squeue -h -r -t PD -o '%i %P %b %r %Q %S' | awk 'NR <= 200'
              if [[ $mode == lucid ]]; then
                  echo "# lucid queue"
                  "$BUILD/lucid" queue --socket "$sock" -t profiling,moving,main-queue,running \
                      -o '%i %T %b %N %Q %r' 2>&1 | awk 'NR <= 300'
              fi
            } >"$dip" 2>&1 || true
        fi
        [[ -z $(squeue -h -r -o %A 2>/dev/null | head -1) ]] && break
        if ((HORIZON > 0)) && python3 -c "import sys, time; sys.exit(time.time() - $t0 < $HORIZON)"; then
            # Every job and array task by its own id, until none is left
            # (lucidd splits arrays and requeues as it goes).
            local try
            for try in $(seq 30); do
                [[ -z $(squeue -h -r -o %i 2>/dev/null | head -1) ]] && break
                squeue -h -r -o %i | xargs -r scancel 2>/dev/null || true
                sleep 1
            done
            break
        fi
        sleep 5
    done
    local tend
    tend=$(date +%s.%N)
    ticks1=$([[ $mode == lucid ]] && "$BUILD/lucid" status --socket "$sock" | awk '/^ticks:/ {print $2}' || echo 0)
    echo "$ticks0 $ticks1 $t1 $tend" >"$lab/ticks"
    # slurmdbd records an end a moment after slurmctld: read until all ended.
    local deadline=$((SECONDS + 120)) open
    while :; do
        TZ=UTC sacct -a -X --duplicates -n -P -o JobIDRaw,State,Partition,Submit,Start,End -S now-1days \
            >"$lab/sacct.txt" 2>>"$lab/sacct.err" || true
        open=$(awk -F'|' '{last[$1] = $2} END {for (j in last) if (last[j] !~ /^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY)/) n++; print n + 0}' "$lab/sacct.txt")
        # Every job listed (an empty answer is slurmdbd still busy), none open.
        (((open == 0 && $(cut -d'|' -f1 "$lab/sacct.txt" | sort -u | wc -l) >= JOBS) ||
            SECONDS > deadline)) && break
        sleep 1
    done
    lab_run_down "$lab"
    python3 - "$lab" "$mode" "$HORIZON" "$JOBS" <<'EOF'
import calendar, statistics, sys, time
lab, mode, horizon, njobs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
t0, t1 = map(float, open(f"{lab}/submit-window").read().split())
first = {}
for line in open(f"{lab}/payload.log"):
    _, jid, t, part = line.split()
    first.setdefault(jid, float(t))
runs = {}
for line in open(f"{lab}/sacct.txt"):
    p = line.strip().split("|")
    if len(p) < 6:
        continue
    runs.setdefault(p[0], []).append((p[1].split()[0], p[2], p[5]))
jobs = len(runs)
ended_ok = ("COMPLETED", "CANCELLED") if horizon else ("COMPLETED",)


def cut_at_horizon(r):
    """Requeued (a profiling run's end) within 2 s of the horizon's cancel:
    cancelled held, before Slurm wrote the next record."""
    if not horizon or r[-1][0] != "REQUEUED":
        return False
    try:
        end = calendar.timegm(time.strptime(r[-1][2], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return False
    return end >= t0 + horizon - 2


lost = sum(1 for r in runs.values() if r[-1][0] not in ended_ok and not cut_at_horizon(r))
cancelled = sum(1 for r in runs.values() if r[-1][0] == "CANCELLED")
twice = sum(1 for r in runs.values() if sum(1 for s, part, _ in r if part == "main" and s != "REQUEUED") > 1)
started = [t - t0 for t in first.values()]
within = [sum(1 for s in started if s <= w) for w in (60, 120, 240)]
# Submit-to-first-start needs each task's submit time: sacct Submit is the
# requeue time for requeued runs, so take the earliest submit of the job.
subs = {}
for line in open(f"{lab}/sacct.txt"):
    p = line.strip().split("|")
    if len(p) >= 6 and p[3] not in ("", "Unknown"):
        from datetime import datetime
        ts = datetime.strptime(p[3], "%Y-%m-%dT%H:%M:%S").timestamp()
        subs[p[0]] = min(subs.get(p[0], ts), ts)
waits = [first[j] - subs[j] for j in first if j in subs]
if horizon:  # the unstarted (not all in sacct: a job cancelled held never was eligible) last
    waits += [float("inf")] * max(0, njobs - len(waits))
median = statistics.median_low(sorted(waits)) if waits else float("nan")
idle = 0
samples = 0
tick_marks = []  # (t, ticks, slow ticks) where lucid status answered
ages, age_max = [], -1.0  # the listing's age at the last decision, the oldest
for line in open(f"{lab}/samples.txt"):
    t, used, pending, *tk = line.split()
    if int(pending) > 0:
        samples += 1
        idle += int(used) < 0.9 * 64
    if len(tk) >= 2 and int(tk[0]) >= 0:
        tick_marks.append((float(t), int(tk[0]), int(tk[1])))
    if len(tk) == 4 and float(tk[2]) >= 0:
        ages.append(float(tk[2]))
        age_max = max(age_max, float(tk[3]))
# The tick rate in each window between two samples (~5 s): its lowest, and
# the ticks over a second (lucidd counts and logs each).
rates = [(b[1] - a[1]) / (b[0] - a[0]) for a, b in zip(tick_marks, tick_marks[1:]) if b[0] > a[0]]
low_rate = min(rates) if rates else 0
slow = tick_marks[-1][2] if tick_marks else 0
ticks0, ticks1, ts1, tend = map(float, open(f"{lab}/ticks").read().split())
rate = (ticks1 - ticks0) / (tend - ts1) if mode == "lucid" and tend > ts1 else 0
print(f"{mode:6s} jobs={jobs} submit={t1 - t0:.0f}s started<=60/120/240s={within[0]}/{within[1]}/{within[2]} "
      f"first_start_median={median:.1f}s lost={lost} twice={twice} "
      f"util<90%_while_waiting={idle}/{samples} ticks/s={rate:.2f}"
      + (f" lowest_5s_ticks/s={low_rate:.2f} slow_ticks={slow}" if mode == "lucid" else "")
      + (f" listing_age_median/max={statistics.median(ages):.2f}/{age_max:.2f}s" if ages else "")
      + (f" horizon={horizon}s started={sum(1 for s in started if s <= horizon)} cancelled={cancelled}" if horizon else ""))
EOF
}

for mode in ${MODES:-lucid slurm}; do
    run "$mode" "$mode" | tee "$OUT/result-$mode.txt"
done

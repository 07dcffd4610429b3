#!/usr/bin/env bash
# lucidd_soak.sh — lucidd's memory stays flat over many ticks with 2,000 jobs
# listed by Slurm (issue 28): libslurm's job listing leaked ~100 bytes per
# listed job per read, 2.4 GB an hour at 2,000 jobs and two ticks a second.
#   bash lucidd_soak.sh SOURCE_DIR BUILD_DIR [TICKS]
# Lab: 2 main nodes + 1 profiling node, MinJobAge 3600 s (ended jobs stay
# listed).  Workload: two arrays of 1,000 tasks (MaxArraySize) with --begin
# tomorrow on main (lucidd splits them, takes in and holds every task; none
# takes capacity); then the first array is cancelled (1,000 ended jobs, still
# listed).  A client keeps
# changing one job's comment, so slurmctld's job data changes all the time
# and every tick reads the whole listing (counted by lucidd:
# status.slurm_job_reads.read).  lucidd runs a 100 ms tick (a faster tick
# stands in for a longer soak).  Checked: once lucidd lists every job, its
# RSS after TICKS (600) more ticks, of which at least half read the whole
# listing, is at most 5 MB above its RSS at the start of that stretch (the
# issue's bound); under AddressSanitizer, whose quarantine holds freed
# memory, the bound is not checked and LeakSanitizer's exit status at the
# end (lucidd stopped with SIGTERM) is.  Waits are on what lucidd and Slurm
# report, never on fixed sleeps.
set -euo pipefail
SRC=$1 BUILD=$2 TICKS=${3:-600}
LAB=$BUILD/lab-soak
rm -rf "$LAB"
mkdir -p "$LAB"
LUCIDD_PID="" CHURN_PID=""
cleanup() {
    local pid
    for pid in $CHURN_PID $LUCIDD_PID; do
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    bash "$SRC/scripts/lab-cluster.sh" down "$LAB" >/dev/null 2>&1 || true
}
trap cleanup EXIT
fail() { echo "lucidd_soak: $*" >&2; tail -n 20 "$LAB/lucidd.log" >&2 || true; exit 1; }

bash "$SRC/scripts/lab-cluster.sh" up "$LAB" --nodes 2 --prof-nodes 1 --min-job-age 3600 >/dev/null
export SLURM_CONF=$LAB/etc/slurm.conf
SOCK=$LAB/lucidd.sock
asan=0
if ldd "$BUILD/lucidd" | grep -q libasan; then
    asan=1
    TICKS=$((TICKS / 3)) # no RSS bound to check; LeakSanitizer needs only some reads
fi

status() { "$BUILD/lucid" status --socket "$SOCK" --json; }
field() { # status JSON on stdin, python expression over `s`
    python3 -c "import json,sys; s=json.load(sys.stdin); print($1)"
}
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$LUCIDD_PID/status"; }
wait_until() { # seconds, what, command...
    local limit=$1 what=$2; shift 2
    local deadline=$((SECONDS + limit))
    until "$@"; do
        ((SECONDS < deadline)) || fail "timed out after ${limit}s waiting for $what"
        kill -0 "$LUCIDD_PID" 2>/dev/null || fail "lucidd exited"
        sleep 0.2
    done
}

A=$(sbatch --parsable -p main --gres=gpu:1 --begin=now+1day --array=0-999 -o /dev/null --wrap true)
B=$(sbatch --parsable -p main --gres=gpu:1 --begin=now+1day --array=0-999 -o /dev/null --wrap true)
setsid "$BUILD/lucidd" --state "$LAB/lucid.db" --socket "$SOCK" --tick-ms 100 \
    --metrics-test-dir "$LAB" </dev/null >>"$LAB/lucidd.log" 2>&1 &
LUCIDD_PID=$!

# lucidd splits the array (256 tasks a tick) and holds every task (1 GPU each:
# a job asking no GPUs is left to Slurm).
waiting() { [[ $(status 2>/dev/null | field 's["phases"]["main-queue"] + s["phases"]["profile-queue"]' 2>/dev/null) -eq 2000 ]]; }
wait_until 180 "lucidd to take in 2,000 tasks" waiting
scancel "$A"
ended() { [[ $(status | field 'sum(s["ended"].values())') -eq 1000 ]]; }
wait_until 60 "lucidd to see 1,000 cancels" ended
listed=$(squeue -h -r -t all -j "$A,$B" | wc -l)
[[ $listed -eq 2000 ]] || fail "Slurm lists $listed tasks, not 2,000"

# Slurm's job data changes all the time (slurmctld's last_job_update).
ONE=$(squeue -h -r -t PD -j "$B" -o %i | awk 'NR == 1')
(i=0; while :; do scontrol update jobid="$ONE" comment="soak $i" >/dev/null 2>&1 || true; i=$((i + 1)); done) &
CHURN_PID=$!

ticks() { status | field 's["ticks"]'; }
reads() { status | field 's["slurm_job_reads"]["read"]'; }
at_least_ticks() { [[ $(ticks) -ge $1 ]]; }
wait_until 60 "100 ticks" at_least_ticks 100
t0=$(ticks) r0=$(reads) rss0=$(rss_kb)
wait_until $((TICKS / 2 + 120)) "$TICKS more ticks" at_least_ticks $((t0 + TICKS))
t1=$(ticks) r1=$(reads) rss1=$(rss_kb)
kill "$CHURN_PID" 2>/dev/null && wait "$CHURN_PID" 2>/dev/null || true
CHURN_PID=""
growth=$((rss1 - rss0))
echo "lucidd_soak: 2000 listed jobs, ticks $t0 -> $t1, full listings read $((r1 - r0)), RSS $rss0 -> $rss1 kB (growth $growth kB)"
(((r1 - r0) * 2 >= t1 - t0)) || fail "only $((r1 - r0)) of $((t1 - t0)) ticks read the listing: the soak did not exercise it"
if ((asan)); then
    echo "lucidd_soak: AddressSanitizer build: RSS bound not checked (its quarantine holds freed memory); LeakSanitizer checks at exit"
elif ((growth > 5 * 1024)); then
    fail "RSS grew $growth kB over $((t1 - t0)) ticks (bound: 5 MB)"
fi
kill -TERM "$LUCIDD_PID"
rc=0
wait "$LUCIDD_PID" || rc=$?
LUCIDD_PID=""
((rc == 0)) || fail "lucidd exited with status $rc after SIGTERM (LeakSanitizer reports in $LAB/lucidd.log)"
echo "lucidd_soak: ok"

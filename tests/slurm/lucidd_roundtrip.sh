#!/usr/bin/env bash
# lucidd_roundtrip.sh — the sacct round trip of a lucid-managed run (issue
# 23): lucidd runs a few jobs on the site-profile lab (slurmdbd), then
# `lucid trace import --format lucidd` of its state database and
# `lucid trace import --format sacct` of `sacct --duplicates` must describe
# the same jobs, and both must agree with Slurm's raw records.
#   bash lucidd_roundtrip.sh SOURCE_DIR BUILD_DIR
# Lab: 1 main + 1 profiling node of 8 GPUs, lucid's plugins, lucidd with a
# 5 s profiling limit, packing off (a packed main run has no GPUs in
# AllocTRES, which the sacct join refuses) and the profiler bypass off (so
# the 8-GPU job waits for the profiler instead of going to main unprofiled).
# Jobs, submitted together:
#   LONG  1 GPU, 15 s: profiled 5 s, requeued by lucidd, runs 15 s on main
#   SHORT 1 GPU,  2 s: ends in the profiler (one record)
#   WIDE  8 GPUs, 7 s: waits for the profiler (LONG and SHORT hold 2 of its
#         GPUs), profiled 5 s, moved, then waits on main behind LONG
# Checked by check_roundtrip.py: the same three jobs on both sides, submit
# identical and equal to the first sacct record's Submit (inside the sbatch
# call), wait / duration / earlier_runs within 2 s of each other and holding
# the payloads' own runs (their start/stop lines), and plain sacct (no
# --duplicates) showing only the main record, submitted after the real
# submission.  Waits are on what lucidd and Slurm report.
set -euo pipefail
SRC=$1 BUILD=$2
LAB=$BUILD/lab-roundtrip
rm -rf "$LAB"
mkdir -p "$LAB/gpu"
LUCIDD_PID=""
cleanup() {
    if [[ -n $LUCIDD_PID ]]; then
        kill -TERM "$LUCIDD_PID" 2>/dev/null || true
        wait "$LUCIDD_PID" 2>/dev/null || true
    fi
    bash "$SRC/scripts/lab-cluster.sh" down "$LAB" >/dev/null 2>&1 || true
}
trap cleanup EXIT
SOCK=$LAB/lucidd.sock
fail() {
    echo "lucidd_roundtrip: $*" >&2
    [[ -S $SOCK ]] && "$BUILD/lucid" queue --all --socket "$SOCK" >&2 2>/dev/null
    tail -n 20 "$LAB/lucidd.log" >&2 || true
    exit 1
}
source "$SRC/tests/lib/wait.sh"

bash "$SRC/scripts/lab-cluster.sh" up "$LAB" --profile site --nodes 1 --prof-nodes 1 \
    --plugins "$BUILD/plugins" >/dev/null
export SLURM_CONF=$LAB/etc/slurm.conf
grep -q '^AccountingStorageType=accounting_storage/slurmdbd' "$SLURM_CONF" ||
    fail "the site profile has no slurmdbd (sacct --duplicates needs it)"
setsid "$BUILD/lucidd" --state "$LAB/lucid.db" --socket "$SOCK" --tick-ms 250 \
    --heartbeat "$LAB/heartbeat" --profile-limit 5 --packing off --profiler-bypass off --profiler-yield off \
    --metrics-test-dir "$LAB/gpu" </dev/null >>"$LAB/lucidd.log" 2>&1 &
LUCIDD_PID=$!
wait_until 30 "lucidd to answer" "$BUILD/lucid" status --socket "$SOCK"
wait_until 10 "lucidd's heartbeat (the lab fails open without it)" test -s "$LAB/heartbeat"

# The payload: its GPU sample for the test metrics backend, then one line
# per start / stop (the requeue's SIGTERM) / end with the partition and the
# time to the nanosecond: Slurm's raw record of each run, kept outside
# Slurm's accounting and lucid's.
cat >"$LAB/payload.sh" <<'EOF'
#!/bin/bash
dur=$1 report=$2 mdir=$3
echo "40 2000 10" >"$mdir/$SLURM_JOB_ID.gpu"
echo "start $SLURM_JOB_ID $SLURM_JOB_PARTITION $(date +%s.%N)" >>"$report"
stopped() { echo "stop $SLURM_JOB_ID $SLURM_JOB_PARTITION $(date +%s.%N)" >>"$report"; exit 143; }
trap stopped TERM
sleep "$dur" & wait $! || stopped
echo "end $SLURM_JOB_ID $SLURM_JOB_PARTITION $(date +%s.%N)" >>"$report"
EOF
# `submitted NAME JOB BEFORE AFTER`: the wall clock around each sbatch, the
# real submission's bounds.
: >"$LAB/submitted.txt"
submit() { # name gpus seconds
    local before after job
    before=$(date +%s.%N)
    job=$(sbatch --parsable --gres="gpu:$2" -t 5 -o /dev/null "$LAB/payload.sh" "$3" \
        "$LAB/report.txt" "$LAB/gpu") || fail "sbatch of $1 failed"
    after=$(date +%s.%N)
    echo "submitted $1 $job $before $after" >>"$LAB/submitted.txt"
    echo "$job"
}
SINCE=$(date -u -d '-2 min' +%Y-%m-%dT%H:%M:%S)
LONG=$(submit long 1 15)
SHORT=$(submit short 1 2)
WIDE=$(submit wide 8 7)

# PHASE of each job in lucid's listing, "JOB:PHASE ...".
phases() {
    "$BUILD/lucid" queue --all --json --socket "$SOCK" 2>/dev/null | python3 -c '
import json, sys
print(" ".join("%d:%s" % (j["job"], j["phase"]) for j in json.load(sys.stdin)["jobs"]))'
}
lucid_done() {
    local p
    p=" $(phases) "
    [[ $p == *" $LONG:done "* && $p == *" $SHORT:done-in-profiler "* && $p == *" $WIDE:done "* ]]
}
# Every record of the three jobs in sacct --duplicates has an End: LONG and
# WIDE two (profiling, main), SHORT one.
COLS=JobID,User,Account,Partition,AllocTRES,ReqTRES,Submit,Start,End,Elapsed,State,NNodes
sacct_ended() {
    TZ=UTC sacct -a -X -P --duplicates -S "$SINCE" -o "$COLS" -j "$LONG,$SHORT,$WIDE" \
        >"$LAB/dup.sacct" || return 1
    python3 - "$LAB/dup.sacct" "$LONG" "$SHORT" "$WIDE" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="|"))
want = {sys.argv[2]: 2, sys.argv[3]: 1, sys.argv[4]: 2}
ended = {j: sum(1 for r in rows if r["JobID"] == j and r["End"] not in ("", "Unknown")) for j in want}
sys.exit(0 if ended == want and all(r["End"] not in ("", "Unknown") for r in rows) else 1)
EOF
}
wait_until 120 "lucid to record $LONG done, $SHORT done-in-profiler, $WIDE done" lucid_done
wait_until 30 "sacct --duplicates to hold every end of $LONG, $SHORT, $WIDE" sacct_ended
TZ=UTC sacct -a -X -P -S "$SINCE" -o "$COLS" -j "$LONG,$SHORT,$WIDE" >"$LAB/last.sacct"
scontrol show node -o >"$LAB/nodes.txt"

"$BUILD/lucid" trace import --format lucidd "$LAB/lucid.db" --vc-size lucidd=16 \
    --out "$LAB/from-lucidd" >/dev/null || fail "lucid trace import --format lucidd failed"
"$BUILD/lucid" trace import --format sacct "$LAB/dup.sacct" "$LAB/nodes.txt" \
    --out "$LAB/from-sacct" >/dev/null || fail "lucid trace import --format sacct failed"
python3 "$SRC/tests/slurm/check_roundtrip.py" "$LAB" "$LONG" "$SHORT" "$WIDE"

kill -TERM "$LUCIDD_PID"
rc=0
wait "$LUCIDD_PID" || rc=$?
LUCIDD_PID=""
((rc == 0)) || fail "lucidd exited with status $rc after SIGTERM"
echo "lucidd_roundtrip: ok (jobs $LONG, $SHORT, $WIDE: lucidd's record and sacct --duplicates agree)"

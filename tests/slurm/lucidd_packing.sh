#!/usr/bin/env bash
# lucidd_packing.sh — issue 24: packing on a device-confined site.  On the
# site profile of the lab (task/cgroup, ConstrainDevices=yes, slurmdbd, the
# share GRES gres/lucidshare), lucidd --packing on runs:
#   partners  P4, P2, P1 (4, 2, 1 GPUs; light; long): profiled, then main;
#   newcomers N4, N2, N1 (same sizes; light; short) once the partners run
#             in main: profiled, then packed onto them, one pair per size;
#   refused   R (2 GPUs; 23,000 MiB of GPU memory: with any partner more
#             than one GPU's 24,576 MiB): profiled, then run on GPUs of its own.
# Partners are root's; newcomers and R belong to lucidlab1 (an ordinary
# user), submitted while lucidd is down (SIGKILLed after the partners
# start, then restarted); lucidlab1 cancels N1 while it runs packed.
# Every run's payload opens every GPU device file of its node and reports
# which it could open (an allowed fake device answers ENXIO, a denied one
# EPERM), CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS and LUCID_PACKED_GPUS.
# check_packing.py then asserts, from those reports, lucid's queue and
# Slurm's accounting (sacct --duplicates), that each run opened exactly its
# GPUs (a packed run: its partner's), numbered 0..n-1 as CUDA sees them
# inside the job; that each pair shared the partner's GPUs while both ran;
# that sacct shows a packed run's GPUs as gres/lucidshare=N (and billing
# as for N GPUs); and that `lucid trace import` of lucidd's state and of
# sacct give each packed job its GPUs.
#   bash lucidd_packing.sh SOURCE_DIR BUILD_DIR
# Cluster: n1 (a100), n2 (v100) x 8 GPUs main, p1 (a100) x 8 profiling.
# About 1.5 minutes.
set -euo pipefail
SRC=$1 BUILD=$2
LAB=$BUILD/lab-packing
rm -rf "$LAB"
mkdir -p "$LAB/out" "$LAB/gpu"
LUCIDD_PID="" SOCK_DIR=""
cleanup() {
    [[ -n $LUCIDD_PID ]] && { kill -KILL "$LUCIDD_PID" && wait "$LUCIDD_PID"; } 2>/dev/null || true
    bash "$SRC/scripts/lab-cluster.sh" down "$LAB" >/dev/null 2>&1 || true
    [[ -n $SOCK_DIR ]] && rm -rf "$SOCK_DIR"
    return 0
}
trap cleanup EXIT

bash "$SRC/scripts/lab-cluster.sh" up "$LAB" --profile site --nodes 2 --gpus 8 --prof-nodes 1 \
    --plugins "$BUILD/plugins" --lucid-conf "heartbeat=$LAB/heartbeat" \
    --lucid-conf "fail_open_after=600" >"$LAB/up.log"
export SLURM_CONF=$LAB/etc/slurm.conf
SOCK_DIR=$(mktemp -d /tmp/lucid-packing.XXXXXX)
SOCK=$SOCK_DIR/lucidd.sock
fail() { echo "lucidd_packing: FAIL: $*" >&2; tail -n 20 "$LAB/lucidd.log" >&2 || true; exit 1; }
lucid() { "$BUILD/lucid" "$@" --socket "$SOCK"; }
source "$SRC/tests/lib/wait.sh"
echo "pid=$$ time=$(date +%s) intake=0" >"$LAB/heartbeat"
for node in $(sinfo -h -N -t drain -o %N 2>/dev/null | sort -u); do
    echo "lucidd_packing: $node drained at start ($(sinfo -h -n "$node" -o %E)); resumed"
    scontrol update nodename="$node" state=resume
done

# The payload: its GPU sample for lucidd's test metrics backend, then one
# line per run, then it sleeps until its time is up or its stop file exists.
cat >"$LAB/payload.sh" <<'EOF'
#!/bin/bash
dur=$1 util=$2 gmem=$3 report=$4 mdir=$5 stop=$6
echo "$util $gmem 10" >"$mdir/$SLURM_JOB_ID.gpu"
open=""
for f in "$LUCID_LAB_DEV/$SLURMD_NODENAME"/nvidia*; do
    (exec 3<>"$f") 2>&1 | grep -q "No such device or address" && open+="${f##*nvidia},"
done
echo "run $SLURM_JOB_ID $SLURM_JOB_PARTITION $SLURMD_NODENAME jobgpus=${SLURM_JOB_GPUS:-} cvd=${CUDA_VISIBLE_DEVICES:-} packed=${LUCID_PACKED_GPUS:-} open=${open%,} at=$(date +%s)" >>"$report"
end=$((SECONDS + dur))
while ((SECONDS < end)) && [[ ! -e $stop ]]; do sleep 0.2; done
echo "end $SLURM_JOB_ID $SLURM_JOB_PARTITION at=$(date +%s)" >>"$report"
EOF
chmod 755 "$LAB/payload.sh"
export LUCID_LAB_DEV=$LAB/dev
: >"$LAB/jobs.txt" >"$LAB/report.txt"

chmod 777 "$LAB" "$LAB/out" "$LAB/gpu"
chmod 666 "$LAB/report.txt"
sub() { # USER ROLE GPUS SECONDS GMEM_MIB TIME_LIMIT_MIN: records "id role gpus"
    local id
    id=$(cd "$LAB/out" && runuser -u "$1" -- env SLURM_CONF="$SLURM_CONF" LUCID_LAB_DEV="$LUCID_LAB_DEV" \
        sbatch --parsable -o /dev/null --open-mode=append -p main -J "$2" --gres="gpu:$3" -t "$6" \
        "$LAB/payload.sh" "$4" 20 "$5" "$LAB/report.txt" "$LAB/gpu" "$LAB/stop") ||
        fail "sbatch $2 refused"
    echo "${id%%;*} $2 $3" >>"$LAB/jobs.txt"
}
id_of() { awk -v r="$1" '$2 == r {print $1}' "$LAB/jobs.txt"; }
on_main() { [[ $(squeue -h -j "$1" -o '%T %P' 2>/dev/null) == "RUNNING main" ]]; }
ended() { [[ -z $(squeue -h -j "$1" -o %T 2>/dev/null) ]]; }

start_lucidd() {
    setsid "$BUILD/lucidd" --state "$LAB/lucid.db" --socket "$SOCK" --heartbeat "$LAB/heartbeat" \
        --tick-ms 250 --profile-limit 3 --gpu-limit 8 --profiler-bypass off --profiler-yield off --packing on \
        --metrics-test-dir "$LAB/gpu" --fairshare-weight 0 --release-timeout 20 \
        </dev/null >>"$LAB/lucidd.log" 2>&1 &
    LUCIDD_PID=$!
    wait_until 30 "lucidd to answer" lucid status
}
start_lucidd

# Partners first (time limit 30 min: lucid's estimate, so the newcomers'
# priorities, 5 min, are within 2x of theirs).
# Partners as root, newcomers as an ordinary user (lucidlab1).
for size in 4 2 1; do sub root "P$size" "$size" 240 2000 30; done
for size in 4 2 1; do wait_until 60 "P$size to run on main" on_main "$(id_of "P$size")"; done
# lucidd killed (SIGKILL) and restarted while the partners run: the pairs
# form after the restart, from its state and Slurm's.
{ kill -KILL "$LUCIDD_PID" && wait "$LUCIDD_PID"; } 2>/dev/null || true
for size in 4 2 1; do sub lucidlab1 "N$size" "$size" 15 2000 5; done
sub lucidlab1 R 2 15 23000 5
start_lucidd
# N1 is cancelled by its owner once it runs packed: its partner runs on.
# Its payload's own start line is awaited too: a cancel before the payload
# has run leaves no main run to check.
ran_main() { grep -q "^run $1 main " "$LAB/report.txt"; }
wait_until 60 "N1 to run packed on main" on_main "$(id_of N1)"
wait_until 60 "N1's payload to start on main" ran_main "$(id_of N1)"
runuser -u lucidlab1 -- env SLURM_CONF="$SLURM_CONF" scancel "$(id_of N1)" || fail "scancel N1"
for role in N4 N2 N1 R; do wait_until 120 "$role to end" ended "$(id_of "$role")"; done
on_main "$(id_of P1)" || fail "P1 stopped with its packed partner's cancel"
lucid queue --all --json >"$LAB/queue.json"
touch "$LAB/stop"
for size in 4 2 1; do wait_until 30 "P$size to end" ended "$(id_of "P$size")"; done

# Slurm's accounting of every run (slurmdbd may lag the end by a moment);
# check_packing.py reads N1's main record CANCELLED and P1's still running
# at the cancel (it ends at the stop file).
ids=$(awk '{print $1}' "$LAB/jobs.txt" | paste -sd,)
sacct_all() {
    sacct -D -X -n -P -j "$ids" -o JobID,Partition,State,AllocTRES >"$LAB/sacct.txt" &&
        (($(awk -F'|' '$3 !~ /RUNNING|PENDING/' "$LAB/sacct.txt" | wc -l) >= 14))
}
wait_until 60 "sacct to list every run" sacct_all
# Both imports of the same run: lucidd's state, and sacct --duplicates.
TZ=UTC sacct -D -X -P -j "$ids" \
    -o JobID,User,Account,Partition,AllocTRES,ReqTRES,Submit,Start,End,Elapsed,State,NNodes,Timelimit \
    >"$LAB/history.sacct"
"$BUILD/lucid" trace import --format lucidd "$LAB/lucid.db" --vc-size lucidd=16 --out "$LAB/import-lucidd" >/dev/null ||
    fail "trace import --format lucidd"
"$BUILD/lucid" trace import --format sacct "$LAB/history.sacct" --vc-size main=16 --out "$LAB/import-sacct" >/dev/null ||
    fail "trace import --format sacct"
python3 "$SRC/tests/slurm/check_packing.py" "$LAB" || fail "check_packing.py"
echo "lucidd_packing: passed"

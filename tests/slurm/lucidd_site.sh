#!/usr/bin/env bash
# lucidd_site.sh — issue 22's placement checks on the site profile of the lab
# (sched/backfill, multifactor, task/cgroup with ConstrainDevices, slurmdbd,
# CR_Core_Memory, GPUs of two types), judged from Slurm's records: each
# payload's own start line (node, CUDA_VISIBLE_DEVICES), `sacct --duplicates`
# (state, nodes, allocated GPUs of every run) and lucid's queue.
#   bash lucidd_site.sh SOURCE_DIR BUILD_DIR
# Cluster: n1, n2 a100 x4; n3, n4 v100 x4; profiling node p1 a100 x4; every
# node 8 CPUs and 16000 MB (DefMemPerCPU 2000).  lucidd: profiling limit
# 4 s, packing off, --release-timeout 20.
# Phases (each waits on what Slurm or lucid reports, never a fixed sleep):
#   1. resources: a CPU-only job takes 6 of n1's 8 CPUs (-w n1); then
#      C4 (--gres=gpu:a100:1 -c 4) must run its main run on n2, not on n1
#      (4 free GPUs, 2 free CPUs); X (--exclusive --gres=gpu:1) gets a whole
#      node (all 4 GPUs, no other job there when it starts); M (a100:1,
#      --mem 12000) must not share a node with another 12000 MB job.
#   2. request forms on two types: --gres=gpu:v100:2, -N 2 --gres=gpu:v100:4,
#      --gres=gpu:a100:2, --gpus=a100:2, --gpus-per-node=2, -n 2
#      --gpus-per-task=1, --gres=gpu:0, a CPU-only job and a heterogeneous
#      job: every job completes, typed ones only on nodes of their type, and
#      the GPUs Slurm allocated (sacct AllocTRES) are the GPUs lucid counted.
#   3. a maintenance reservation on n1 starting in 150 s: A (--gres=gpu:a100:4
#      -t 10, would run into it) runs its main run on n2 at once.
#   4. the profiling node drained: a new 1-GPU job starts on main without
#      waiting (reason "not profiled"), p1 resumed after.
#   5. slurmd of the node running R (--requeue --gres=gpu:v100:4) is
#      killed: once Slurm marks the node down and requeues R, lucid places it
#      on the other v100 node, where it completes.
# A job lucid shows `releasing` for more than RELEASE_LAG s is a failure
# (sampled every 0.5 s from `lucid queue --json`).
set -euo pipefail
SRC=$1 BUILD=$2
LAB=$BUILD/lab-site
LAB_SCRIPT=${LAB_SCRIPT:-$SRC/scripts/lab-cluster.sh}
rm -rf "$LAB"
mkdir -p "$LAB/out"
LUCIDD_PID="" SAMPLER_PID="" SOCK_DIR=""
cleanup() {
    local pid
    for pid in "$SAMPLER_PID" "$LUCIDD_PID"; do
        [[ -n $pid ]] && { kill -KILL "$pid" && wait "$pid"; } 2>/dev/null || true
    done
    bash "$LAB_SCRIPT" down "$LAB" >/dev/null 2>&1 || true
    [[ -n $SOCK_DIR ]] && rm -rf "$SOCK_DIR"
    return 0
}
trap cleanup EXIT
RELEASE_LAG=30

bash "$LAB_SCRIPT" up "$LAB" --profile site --nodes 4 --gpus 4 --prof-nodes 1 --cpus 8 \
    --memory 16000 --plugins "$BUILD/plugins" --lucid-conf "heartbeat=$LAB/heartbeat" \
    --lucid-conf "fail_open_after=600" >"$LAB/up.log"
export SLURM_CONF=$LAB/etc/slurm.conf
SOCK_DIR=$(mktemp -d /tmp/lucid-site.XXXXXX)
SOCK=$SOCK_DIR/lucidd.sock
: >"$LAB/errors.txt"
: >"$LAB/jobs.txt"
err() { echo "$*" >>"$LAB/errors.txt"; echo "lucidd_site: FAIL: $*" >&2; }
die() { err "$*"; exit 1; }
lucid() { "$BUILD/lucid" "$@" --socket "$SOCK"; }
echo "pid=$$ time=$(date +%s) intake=0" >"$LAB/heartbeat"

# payload.sh SECONDS [FILE]: records where it runs and which GPUs it was
# given, then runs SECONDS or until FILE exists.
cat >"$LAB/payload.sh" <<'EOF'
#!/bin/bash
echo "start $SLURM_JOB_ID $(date +%s.%N) node=$SLURMD_NODENAME cuda=${CUDA_VISIBLE_DEVICES:-} gpus=${SLURM_JOB_GPUS:-}" >>"$LUCID_SITE_LOG"
end=$((SECONDS + $1))
while ((SECONDS < end)) && [[ -z ${2:-} || ! -e $2 ]]; do sleep 0.2; done
echo "end $SLURM_JOB_ID $(date +%s.%N)" >>"$LUCID_SITE_LOG"
EOF
chmod 755 "$LAB/payload.sh"
chmod 777 "$LAB" "$LAB/out"
export LUCID_SITE_LOG=$LAB/payload.log
: >"$LUCID_SITE_LOG"
chmod 666 "$LUCID_SITE_LOG"

sub() { # ROLE SECONDS sbatch-options... -> records "id role"
    local role=$1 dur=$2 id
    shift 2
    id=$(cd "$LAB/out" && sbatch --parsable -o "$LAB/out/%j.out" -J "$role" --export=ALL "$@" \
        "$LAB/payload.sh" "$dur" "$LAB/stop-$role") || die "sbatch $role ($*) refused"
    echo "${id%%;*} $role" >>"$LAB/jobs.txt"
}
id_of() { awk -v r="$1" '$2 == r {print $1}' "$LAB/jobs.txt"; }
wait_until() { # seconds what command...
    local limit=$1 what=$2
    shift 2
    local deadline=$((SECONDS + limit))
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || { err "timed out after ${limit}s waiting for $what"; return 1; }
        sleep 0.25
    done
}
state_of() { squeue -h -j "$1" -o %T 2>/dev/null || true; }
running() { [[ $(state_of "$1") == RUNNING ]]; }
running_on_main() { [[ $(squeue -h -j "$1" -o '%T %P' 2>/dev/null) == "RUNNING main" ]]; }
gone() { [[ -z $(squeue -h -j "$1" -o %T 2>/dev/null) ]]; }
all_gone() { [[ -z $(squeue -h -o %A 2>/dev/null) ]]; }

setsid "$BUILD/lucidd" --state "$LAB/lucid.db" --socket "$SOCK" --heartbeat "$LAB/heartbeat" \
    --tick-ms 250 --profile-limit 4 --packing off --release-timeout 20 \
    </dev/null >>"$LAB/lucidd.log" 2>&1 &
LUCIDD_PID=$!
wait_until 20 "lucidd to answer" lucid status || exit 1
python3 "$SRC/tests/slurm/check_site.py" sample "$SOCK" "$LAB/snapshots.jsonl" "$LAB/stop-sampler" &
SAMPLER_PID=$!

# PHASES="5" runs only some phases (by hand, while working on one); the
# checks of the phases not run are skipped.
PHASES=${PHASES:-1 2 3 4 5}
want() { [[ " $PHASES " == *" $1 "* ]]; }
echo "$PHASES" >"$LAB/phases"

# 1. Resources.
if want 1; then
sub HOG 300 -w n1 -c 6
wait_until 30 "the CPU job on n1" running "$(id_of HOG)" || exit 1
sub C4 6 --gres=gpu:a100:1 -c 4
sub X 6 --exclusive --gres=gpu:1
sub M1 20 --gres=gpu:v100:1 --mem 12000
sub M2 6 --gres=gpu:v100:1 --mem 12000
for r in C4 X M1 M2; do wait_until 120 "$r to end" gone "$(id_of $r)" || exit 1; done
touch "$LAB/stop-HOG"
fi

# 2. Request forms.
if want 2; then
sub V2 6 --gres=gpu:v100:2
sub V4N2 6 -N 2 --gres=gpu:v100:4
sub A2 6 --gres=gpu:a100:2
sub GA2 6 --gpus=a100:2
sub GPN 6 --gpus-per-node=2
sub GPT 6 -n 2 --gpus-per-task=1
sub G0 6 --gres=gpu:0
sub CPU 6
cat >"$LAB/het.sh" <<EOF
#!/bin/bash
#SBATCH --gres=gpu:1
#SBATCH hetjob
#SBATCH --gres=gpu:1
exec "$LAB/payload.sh" 6
EOF
id=$(cd "$LAB/out" && sbatch --parsable -o "$LAB/out/%j.out" -J HET --export=ALL "$LAB/het.sh") ||
    die "sbatch of a heterogeneous job refused"
echo "${id%%;*} HET" >>"$LAB/jobs.txt"
for r in V2 V4N2 A2 GA2 GPN GPT G0 CPU HET; do
    wait_until 150 "$r to end" gone "$(id_of $r)" || exit 1
done
fi

# 3. A maintenance reservation on n1 from 150 s on.
if want 3; then
scontrol create reservation reservationname=lab-maint starttime=now+150 duration=5 nodes=n1 \
    flags=maint users=root >/dev/null || die "cannot create the reservation"
sub A4 6 --gres=gpu:a100:4 -t 10
wait_until 90 "A4 to end" gone "$(id_of A4)" || exit 1
scontrol delete reservationname=lab-maint >/dev/null || true
fi

# 4. The profiling node drained.
if want 4; then
scontrol update nodename=p1 state=drain reason=lab-test >/dev/null
sub D1 4 --gres=gpu:1
wait_until 30 "D1 to run on main while p1 is drained" running_on_main "$(id_of D1)" || true
scontrol update nodename=p1 state=resume >/dev/null
wait_until 60 "D1 to end" gone "$(id_of D1)" || exit 1
fi

# 5. A node dies under a running --requeue job: its slurmd and the job's
#    step daemons are killed, as a crash would take them.
if want 5; then
sub R 300 --requeue --gres=gpu:v100:4
wait_until 60 "R to run on main" running_on_main "$(id_of R)" || exit 1
R_NODE=$(squeue -h -j "$(id_of R)" -o %N)
R_PID=$(awk -v n="slurmd-$R_NODE" '$1 == n {print $2}' "$LAB/pids")
[[ -n $R_PID ]] || die "no slurmd PID for $R_NODE"
echo "$R_NODE" >"$LAB/killed-node"
kill -KILL "$R_PID"
pkill -KILL -f "slurmstepd: \[$(id_of R)\." || true
# ... and the job's own processes (its cgroup's tasks), as a crash would.
for tasks in /sys/fs/cgroup/freezer/slurm_"$R_NODE"/uid_*/job_"$(id_of R)"/*/cgroup.procs; do
    [[ -f $tasks ]] && xargs -r kill -KILL <"$tasks" 2>/dev/null || true
done
running_elsewhere() { # job node: running on main, not on node
    local s
    s=$(squeue -h -j "$1" -o '%T %P %N' 2>/dev/null)
    [[ $s == "RUNNING main "* && $s != *" $2" ]]
}
wait_until 240 "R to run again after $R_NODE failed" running_elsewhere "$(id_of R)" "$R_NODE" || exit 1
touch "$LAB/stop-R"
wait_until 60 "R to end" gone "$(id_of R)" || exit 1
# lucid's record of R: the run the failure cut short stays in its history.
"$BUILD/lucid" queue --socket "$SOCK" --all --json -j "$(id_of R)" >"$LAB/R.json" ||
    die "lucid queue --json -j R failed"
fi

touch "$LAB/stop-sampler"
wait "$SAMPLER_PID" 2>/dev/null || true
SAMPLER_PID=""
sacct -X --duplicates -n -P -j "$(awk '{print $1}' "$LAB/jobs.txt" | paste -sd,)" \
    -o JobID,JobName,State,NodeList,AllocTRES,Start,End,Partition >"$LAB/sacct.txt" ||
    die "sacct failed"
python3 "$SRC/tests/slurm/check_site.py" check "$LAB" "$RELEASE_LAG" || exit 1
[[ -s $LAB/errors.txt ]] && exit 1
echo "lucidd_site: every check passed"

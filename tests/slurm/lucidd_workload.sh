#!/usr/bin/env bash
# lucidd_workload.sh — lucidd scheduling a real lab cluster (4 main nodes x 8
# GPUs + 1 profiling node): N sleep jobs of 1..16 GPUs whose payloads report
# their node, partition and CUDA_VISIBLE_DEVICES; check_workload.py then
# checks the issue's conditions from those reports and lucid's records.
#   bash lucidd_workload.sh SOURCE_DIR BUILD_DIR JOBS [faults]
# With `faults`, lucidd is killed with SIGKILL at three random moments and
# restarted, and slurmctld is restarted once, while the workload runs.
set -euo pipefail
SRC=$1 BUILD=$2 JOBS=$3 FAULTS=${4:-}
NAME=lab-workload-$JOBS${FAULTS:+-faults}
LAB=$BUILD/$NAME
rm -rf "$LAB"
mkdir -p "$LAB/out" "$LAB/gpu"
LUCIDD_PID=""
cleanup() {
    if [[ -n $LUCIDD_PID ]]; then
        { kill -KILL "$LUCIDD_PID" && wait "$LUCIDD_PID"; } 2>/dev/null || true
    fi
    bash "$SRC/scripts/lab-cluster.sh" down "$LAB" >/dev/null 2>&1 || true
}
trap cleanup EXIT
# No fixed port: lab-cluster.sh derives one from $LAB, so the same test run
# from two build trees at once does not collide.
# Untyped GPUs under faults: with typed ones (gpu:a100), Slurm 22.05 kept
# phantom GPUs allocated on the idle profiling node after this run's
# slurmctld restart amid lucid's packed jobs (GresUsed=gpu:a100:6 with no job
# there; "gres_select_filter_select_and_set ... job_spec lacks GRES counter"
# for each packed job), so 4- and 8-GPU jobs waited for the profiler forever.
# Fail-open off: the jobs are submitted before lucidd first starts and must
# wait for it (the lab's default would run them under plain Slurm).
bash "$SRC/scripts/lab-cluster.sh" up "$LAB" --plugins "$BUILD/plugins" --fail-open off \
    ${FAULTS:+--gpu-types none} >/dev/null
read -r _ _ _ PORT <"$LAB/etc/shape"
export SLURM_CONF=$LAB/etc/slurm.conf
SOCK=$LAB/lucidd.sock
LIMIT=3
# Packing off for the first part of the run (strict priority order, checked),
# on after lucidd's first restart (pairs, checked against Lucid's rules).
PACKING=off
MODEL_ARGS=()
# Extra lucidd options for a manual run (e.g. LUCIDD_EXTRA_ARGS="--backfill
# easy --backfill-window 1200 --backfill-min-gpus 9"; the strict-order check
# of the packing-off part then flags the backfilled jobs, as it should).
read -r -a EXTRA_ARGS <<<"${LUCIDD_EXTRA_ARGS:-}"

# On failure, besides lucid's log: Slurm's own view of every job lucid has
# not seen end (state, reason, hold, pin) and lucid's log lines on it, so a
# run that failed once in CI can be read from its output.
fail() {
    echo "lucidd_workload: $*" >&2
    tail -n 30 "$LAB/lucidd.log" >&2 || true
    local id
    for id in $("$BUILD/lucid" queue --socket "$SOCK" --noheader -o %i 2>/dev/null); do
        echo "--- job $id, Slurm:" >&2
        scontrol show job "$id" 2>&1 | grep -E 'JobState|Priority|ReqNodeList|AdminComment|TresPerNode' >&2 || true
        echo "--- job $id, lucid:" >&2
        grep -E "job $id[:,]" "$LAB/lucidd.log" | tail -n 12 >&2 || true
    done
    grep -E 'slurm: |error' "$LAB/lucidd.log" | tail -n 15 >&2 || true
    exit 1
}


start_lucidd() {
    setsid "$BUILD/lucidd" --state "$LAB/lucid.db" --socket "$SOCK" --metrics-port $((PORT + 90)) \
        --profile-limit $LIMIT --tick-ms 250 --packing "$PACKING" --metrics-test-dir "$LAB/gpu" --profiler-bypass off --profiler-yield off \
        ${MODEL_ARGS[@]+"${MODEL_ARGS[@]}"} ${EXTRA_ARGS[@]+"${EXTRA_ARGS[@]}"} \
        </dev/null >>"$LAB/lucidd.log" 2>&1 &
    LUCIDD_PID=$!
    # 30 s: a restarted lucidd re-applies its unacknowledged decisions before
    # it serves its socket, and under ASan on a loaded machine slurmctld
    # answered each with a 5-s retry ("the DB index is being set").
    local deadline=$((SECONDS + 30))
    until "$BUILD/lucid" status --socket "$SOCK" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || fail "lucidd did not answer"
        sleep 0.1
    done
}

start_lucidd_crashing() {
    setsid "$BUILD/lucidd" --state "$LAB/lucid.db" --socket "$SOCK" --profile-limit $LIMIT --profiler-bypass off --profiler-yield off \
        --tick-ms 250 --packing "$PACKING" --metrics-test-dir "$LAB/gpu" \
        ${EXTRA_ARGS[@]+"${EXTRA_ARGS[@]}"} </dev/null >>"$LAB/lucidd.log" 2>&1 &
    local pid=$! deadline=$((SECONDS + 20))
    while kill -0 "$pid" 2>/dev/null && [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]]; do
        ((SECONDS < deadline)) || fail "lucidd did not reach its injected crash"
        sleep 0.1
    done
    wait "$pid" 2>/dev/null || true
}

# The payload: reports start / stop (requeued) / end with its GPUs as the
# node's indices: SLURM_JOB_GPUS, or for a packed job (no GPU gres) the
# partner's list LUCID_PACKED_GPUS; not CUDA_VISIBLE_DEVICES, which device
# confinement (site profile) numbers 0..n-1 inside the job.  It writes
# its GPU sample for the test metrics backend, sleeps.
cat >"$LAB/payload.sh" <<'EOF'
#!/bin/bash
dur=$1 util=$2 report=$3 mdir=$4
me="$SLURM_JOB_ID $SLURMD_NODENAME $SLURM_JOB_PARTITION ${SLURM_JOB_GPUS:-${LUCID_PACKED_GPUS:-${CUDA_VISIBLE_DEVICES:-none}}} ${LUCID_PACKED_GPUS:-no}"
echo "$util 2000 10" >"$mdir/$SLURM_JOB_ID.gpu"
echo "start $me $(date +%s.%N)" >>"$report"
stopped() { echo "stop $me $(date +%s.%N)" >>"$report"; exit 143; }
trap stopped TERM
# A requeue signals the sleep too: only a sleep that ran out means "end".
sleep "$dur" & wait $! || stopped
echo "end $me $(date +%s.%N)" >>"$report"
EOF

# A fixed pseudo-random workload: GPUs, duration (1 s finishes in the
# profiler), time limit (lucid's estimate, hence priority), GPU utilisation
# (20 % light, 90 % heavy: sharing score).
RANDOM=20230325
: >"$LAB/jobs.txt"
gpu_choices=(1 1 2 2 4 4 8 16)
cd "$LAB/out"
for ((k = 0; k < JOBS; k++)); do
    gpus=${gpu_choices[RANDOM % 8]}
    if ((RANDOM % 3 == 0)); then dur=1; else dur=$((6 + RANDOM % 9)); fi
    minutes=$((1 + RANDOM % 30))
    util=$((RANDOM % 2 ? 20 : 90))
    nodes=$((gpus > 8 ? 2 : 1))
    id=$(sbatch --parsable -N "$nodes" --gres="gpu:$((gpus / nodes))" --time="$minutes" \
        -o /dev/null --open-mode=append \
        "$LAB/payload.sh" "$dur" "$util" "$LAB/report.txt" "$LAB/gpu") || fail "sbatch failed"
    echo "$id $gpus $dur $minutes $util" >>"$LAB/jobs.txt"
done
start_lucidd
echo "lucidd_workload: $JOBS jobs submitted"

all_final() {
    local left
    left=$("$BUILD/lucid" queue --socket "$SOCK" --json 2>/dev/null | grep -c '"job":' || true)
    [[ $left == 0 ]] && [[ -z "$(squeue -h -o %i 2>/dev/null)" ]] &&
        [[ $("$BUILD/lucid" queue --socket "$SOCK" --all --json | grep -c '"job":') == "$JOBS" ]]
}

if [[ -n $FAULTS ]]; then
    fault=0
    for moment in $((3 + RANDOM % 8)) $((3 + RANDOM % 8)) $((3 + RANDOM % 8)); do
        sleep "$moment"
        { kill -KILL "$LUCIDD_PID" && wait "$LUCIDD_PID"; } 2>/dev/null || true
        fault=$((fault + 1))
        PACKING=on
        echo "lucidd_workload: lucidd killed (SIGKILL) $moment s later; restarting"
        if ((fault == 1)); then
            # A job started by Slurm while lucid is down (an operator's release).
            while read -r id _ dur _; do
                if ((dur > 4)) && [[ $(squeue -h -j "$id" -o '%T %Q' 2>/dev/null) == "PENDING 0" ]]; then
                    scontrol release "$id" && echo "lucidd_workload: job $id released behind lucid's back"
                    break
                fi
            done <"$LAB/jobs.txt"
        fi
        if ((fault == 2)); then
            bash "$SRC/scripts/lab-cluster.sh" restart-ctld "$LAB" >/dev/null
            date +%s.%N >>"$LAB/ctld_restarts.txt"
            echo "lucidd_workload: slurmctld restarted while lucidd was down"
        fi
        if ((fault == 3)); then
            # Dies by itself right after recording its 2nd decision, before
            # applying it: the restart must re-apply it, once.
            LUCIDD_TEST_CRASH_AFTER_RECORD=2 start_lucidd_crashing
            echo "lucidd_workload: lucidd crashed between recording and applying a decision"
        fi
        start_lucidd
    done
else
    sleep 25
    kill -TERM "$LUCIDD_PID"
    wait "$LUCIDD_PID" || fail "lucidd did not stop cleanly on SIGTERM"
    PACKING=on
    start_lucidd
    echo "lucidd_workload: lucidd restarted with packing on"
fi

deadline=$((SECONDS + 300))
until all_final; do
    ((SECONDS < deadline)) || fail "workload not finished after 300 s: $("$BUILD/lucid" queue --socket "$SOCK")"
    sleep 1
done
"$BUILD/lucid" queue --socket "$SOCK" --all --json >"$LAB/queue.json"
# Slurm's side of the final state: every job completed (MinJobAge keeps them listed).
while read -r id _; do
    state=$(scontrol show job "$id" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    [[ $state == COMPLETED ]] || fail "Slurm says job $id is $state"
done <"$LAB/jobs.txt"
: >"$LAB/explain.json"
while read -r id _; do
    "$BUILD/lucid" queue --socket "$SOCK" --job "$id" --json | tr -d '\n' >>"$LAB/explain.json"
    echo >>"$LAB/explain.json"
done <"$LAB/jobs.txt"
# Bad input on the socket: one clear error back, and the daemon goes on serving.
reply=$(python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"{not json\n"); print(s.recv(4096).decode())' "$SOCK")
grep -q '"ok":false' <<<"$reply" || fail "garbage request answered: $reply"
reply=$("$BUILD/lucid" queue --socket "$SOCK" --job 999999 2>&1) && fail "unknown job accepted"
grep -q "no such job under lucid" <<<"$reply" || fail "unknown job: $reply"
curl -s "http://127.0.0.1:$((PORT + 90))/metrics" >"$LAB/metrics.txt" 2>/dev/null ||
    (exec 3<>"/dev/tcp/127.0.0.1/$((PORT + 90))" && printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3 && cat <&3 >"$LAB/metrics.txt")
grep -q '^lucid_finished_in_profiler_total [1-9]' "$LAB/metrics.txt" || fail "metrics: $(head -c 600 "$LAB/metrics.txt")"
python3 "$SRC/tests/slurm/check_workload.py" "$LAB" $LIMIT || fail "checks failed"

if [[ -z $FAULTS ]]; then
    # The models (issue 5), a few seconds: a broken sharing tree stops lucidd
    # with one line naming the file; restarted with a small history, lucidd
    # trains its duration model on the finished jobs at once, a new job is
    # estimated by it, and a trained sharing tree is in use.
    printf '{"format": "lucid-model", "kind": "cart", "vers' >"$LAB/broken.json"
    reply=$("$BUILD/lucidd" --state "$LAB/other.db" --socket "$LAB/other.sock" \
        --sharing-model "$LAB/broken.json" 2>&1) && fail "a broken sharing model was accepted"
    grep -q "^lucidd: --sharing-model $LAB/broken.json" <<<"$reply" || fail "broken model: $reply"
    "$BUILD/lucid" model train --kind sharing --data "$SRC/data/venus-sept/sharing_labels.csv" \
        --out "$LAB/share.json" >/dev/null
    kill -TERM "$LUCIDD_PID"
    wait "$LUCIDD_PID" || fail "lucidd did not stop cleanly on SIGTERM"
    MODEL_ARGS=(--min-history 10 --retrain-period 3600 --sharing-model "$LAB/share.json")
    start_lucidd
    models() {
        "$BUILD/lucid" status --socket "$SOCK" --json | python3 -c '
import json, sys
m = {x["name"]: x for x in json.load(sys.stdin)["models"]}
print(m["duration"]["version"], m["duration"]["rows"], m["sharing"]["version"])'
    }
    deadline=$((SECONDS + 60))
    until read -r version rows sharing < <(models) && ((version == 1)); do
        ((SECONDS < deadline)) || fail "no duration model trained: $(models)"
        sleep 0.5
    done
    ((rows >= JOBS - 5 && rows <= JOBS && sharing == 1)) || fail "models: $version $rows $sharing"
    id=$(sbatch --parsable --gres=gpu:1 --time=5 -o /dev/null --wrap 'sleep 60') || fail "sbatch failed"
    deadline=$((SECONDS + 20))
    until "$BUILD/lucid" queue --socket "$SOCK" --job "$id" 2>/dev/null |
        grep -q "^estimate: duration v1 — duration model v1 (trained on $rows finished jobs): .* = intercept"; do
        ((SECONDS < deadline)) || fail "new job not estimated by the model: $("$BUILD/lucid" queue --socket "$SOCK" --job "$id" 2>&1)"
        sleep 0.5
    done
    scancel "$id"
    "$BUILD/lucid" queue --socket "$SOCK" --job "$id" | grep '^estimate'
fi
"$BUILD/lucid" status --socket "$SOCK" >"$LAB/status.txt"
cat "$LAB/status.txt"
echo "lucidd_workload: $JOBS jobs, all checks passed in ${SECONDS}s"

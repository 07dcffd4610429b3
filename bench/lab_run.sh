# lab_run.sh — sourced by the lab benchmarks (burst.sh, fairshare.sh): one
# run's lab on scripts/lab-cluster.sh's site profile (untyped GPUs, one
# profiling node, ended jobs listed for an hour), either with lucid's
# plugins and lucidd or as plain Slurm.  Needs SRC and BUILD set.
#
#   lab_run_up LAB lucid|slurm NODES GPUS [LUCIDD_OPTION...]
#       a fresh lab in LAB; exports SLURM_CONF; with lucid starts lucidd
#       (its state, socket and heartbeat in LAB, then LUCIDD_OPTIONs) and
#       waits until it answers.  Sets LAB_RUN_SOCK and LAB_RUN_LUCIDD.
#   lab_run_down LAB
#       stops that lucidd and the lab.
#   lab_run_payload LAB
#       LAB/payload.sh SECONDS: sleeps, with "start|end JOBID TIME
#       PARTITION" lines in LAB/payload.log (exported as FS_LOG); LAB/out
#       writable by the lab's users.
#   lab_run_submit LAB USER COUNT SECONDS
#       COUNT one-GPU jobs of that payload on main as USER (--time=5),
#       each "JOBID USER TIME" in LAB/jobs.txt.

lab_run_up() {
    local lab=$1 mode=$2 nodes=$3 gpus=$4
    shift 4
    bash "$SRC/scripts/lab-cluster.sh" down "$lab" >/dev/null 2>&1 || true
    rm -rf "$lab"
    mkdir -p "$lab/out"
    local plugins=()
    [[ $mode == lucid ]] && plugins=(--plugins "$BUILD/plugins" --lucid-conf "heartbeat=$lab/heartbeat"
                                     --lucid-conf "fail_open_after=600")
    bash "$SRC/scripts/lab-cluster.sh" up "$lab" --profile site --nodes "$nodes" --gpus "$gpus" \
        --prof-nodes 1 --gpu-types none --min-job-age 3600 ${plugins[@]+"${plugins[@]}"} >"$lab/up.log"
    export SLURM_CONF=$lab/etc/slurm.conf
    LAB_RUN_SOCK=$lab/lucidd.sock LAB_RUN_LUCIDD=""
    echo "pid=$$ time=$(date +%s) intake=0" >"$lab/heartbeat"
    [[ $mode == lucid ]] || return 0
    setsid "$BUILD/lucidd" --state "$lab/lucid.db" --socket "$LAB_RUN_SOCK" --heartbeat "$lab/heartbeat" \
        "$@" </dev/null >"$lab/lucidd.log" 2>&1 &
    LAB_RUN_LUCIDD=$!
    until "$BUILD/lucid" status --socket "$LAB_RUN_SOCK" >/dev/null 2>&1; do sleep 0.2; done
}

lab_run_down() {
    [[ -n ${LAB_RUN_LUCIDD:-} ]] && kill "$LAB_RUN_LUCIDD" 2>/dev/null || true
    LAB_RUN_LUCIDD=""
    bash "$SRC/scripts/lab-cluster.sh" down "$1" >/dev/null 2>&1 || true
}

lab_run_payload() {
    local lab=$1
    chmod 777 "$lab/out"
    cat >"$lab/payload.sh" <<'EOF'
#!/bin/bash
echo "start $SLURM_JOB_ID $(date +%s.%N) $SLURM_JOB_PARTITION" >>"$FS_LOG"
sleep "$1"
echo "end $SLURM_JOB_ID $(date +%s.%N) $SLURM_JOB_PARTITION" >>"$FS_LOG"
EOF
    chmod 755 "$lab/payload.sh"
    export FS_LOG=$lab/payload.log
    : >"$FS_LOG"
    chmod 666 "$FS_LOG"
}

lab_run_submit() {
    local lab=$1 user=$2 count=$3 secs=$4 i id
    for ((i = 0; i < count; i++)); do
        id=$(cd "$lab/out" && runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" FS_LOG="$FS_LOG" \
            sbatch --parsable -o /dev/null -p main --gres=gpu:1 --time=5 --export=ALL \
            "$lab/payload.sh" "$secs")
        echo "$id $user $(date +%s.%N)" >>"$lab/jobs.txt"
    done
}

#!/usr/bin/env bash
# lucidd_operator.sh — lucidd under an operator's workload on the lab cluster
# (4 main nodes x 8 GPUs + 1 profiling node), checked from Slurm's own
# records (jobcomp/filetxt) and the payloads' start/end lines by
# check_operator.py.  Issue 10's "Done when".
#   bash lucidd_operator.sh SOURCE_DIR BUILD_DIR operator|outages|failopen
# operator: mixed GPU counts and durations, failures, cancels while held /
#   profiling / running, an array, dependencies (satisfiable and never),
#   --begin, -H then `lucid release`, -w, --exclude, --gpus=16 without -N, a
#   resize after intake, a release attempt by user nobody, a non-ASCII name
#   cut mid-character; `lucid queue --all --json`, `lucid status --json` and
#   squeue sampled every 0.5 s.
# outages: lucidd SIGKILLed during profiling and kept down past the profiling
#   limit and MinJobAge; slurmctld down 60 s while jobs end in the profiler;
#   the state file deleted and lucidd restarted; a second lucidd on the same
#   state; slow clients (socket and /metrics, as nobody).
# failopen: lucidd stopped; new jobs run unheld after the plugin's bound, held
#   ones are handed back by the watchdog; lucidd restarted.
# Every failed expectation is collected (errors.txt) and printed; the run goes
# on so one report shows all of them.  Exit 1 if any.
set -euo pipefail
SRC=$1 BUILD=$2 MODE=${3:-operator}
LAB=$BUILD/lab-operator-$MODE
rm -rf "$LAB"
mkdir -p "$LAB/out" "$LAB/gpu"
chmod 777 "$LAB/out" # user nobody's jobs write here too
LUCIDD_PID="" SAMPLER_PID="" WATCHDOG_PID="" EXTRA_PIDS=() BEAT_PIDS=()
CHECKER=$SRC/tests/slurm/check_operator.py
cleanup() {
    local pid
    for pid in "$SAMPLER_PID" "$LUCIDD_PID" "$WATCHDOG_PID" ${EXTRA_PIDS[@]+"${EXTRA_PIDS[@]}"} ${BEAT_PIDS[@]+"${BEAT_PIDS[@]}"}; do
        [[ -n $pid ]] && { kill -KILL "$pid" && wait "$pid"; } 2>/dev/null || true
    done
    bash "$SRC/scripts/lab-cluster.sh" down "$LAB" >/dev/null 2>&1 || true
    rm -rf "$SOCK_DIR"
}
SOCK_DIR=""
trap cleanup EXIT

LIMIT=4      # profiling limit, s
TICK_MS=250
MIN_JOB_AGE=600
FAIL_OPEN=600
case $MODE in
    outages) MIN_JOB_AGE=5 ;;
    failopen) FAIL_OPEN=8 ;;
    operator) ;;
    *) echo "lucidd_operator: unknown mode $MODE" >&2; exit 2 ;;
esac
bash "$SRC/scripts/lab-cluster.sh" up "$LAB" --plugins "$BUILD/plugins" --min-job-age "$MIN_JOB_AGE" \
    --lucid-conf "heartbeat=$LAB/heartbeat" --lucid-conf "fail_open_after=$FAIL_OPEN" >/dev/null
read -r _ _ _ PORT <"$LAB/etc/shape"
export SLURM_CONF=$LAB/etc/slurm.conf
# The socket in a folder user nobody can reach (the build tree may not be).
SOCK_DIR=$(mktemp -d /tmp/lucid-op.XXXXXX)
chmod 755 "$SOCK_DIR"
SOCK=$SOCK_DIR/lucidd.sock
METRICS=$((PORT + 90))
: >"$LAB/errors.txt"
: >"$LAB/jobs.txt"
: >"$LAB/events.txt"
touch "$LAB/payload.log"
chmod 666 "$LAB/payload.log" "$LAB/errors.txt" "$LAB/events.txt"

# One line each: a multi-line command output is folded.
err() { echo "$*" | tr '\n' ' ' | sed 's/ *$//' >>"$LAB/errors.txt"; echo >>"$LAB/errors.txt"; echo "lucidd_operator: FAIL: $*" >&2; }
# One write per event: background helpers (cancel_when, ...) log events at
# the same time as the main script, and two writes per line could interleave
# (CI once read "resized ... cancel ..." as one line and missed the cancel).
event() {
    local line
    line="$(date +%s.%N) $*"
    printf '%s\n' "${line//$'\n'/ }" >>"$LAB/events.txt"
}
die() { err "$*"; exit 1; } # used only where nothing after could be checked
lucid() { "$BUILD/lucid" "$@" --socket "$SOCK"; }
# lucid's phase (and waits_for) of one job, from the socket; empty when unknown.
phase() { python3 "$CHECKER" phase "$SOCK" "$1" 2>/dev/null || true; }
sstate() { squeue -h -t all -j "$1" -o '%T %Q %P' 2>/dev/null | head -1; }

# lucidd's options under the contract; a missing one is a finding, and the
# rest still runs without it.
HEARTBEAT_ARGS=()
# (the help is read whole first: grep -q closing the pipe early would kill
# lucidd with SIGPIPE and, under pipefail, read as a missing option)
LUCIDD_HELP=$("$BUILD/lucidd" --help 2>&1 || true)
if grep -qE '^ +--heartbeat' <<<"$LUCIDD_HELP"; then
    HEARTBEAT_ARGS=(--heartbeat "$LAB/heartbeat")
else
    err "lucidd has no --heartbeat option (contract: lucidd --heartbeat FILE); the test beats for it"
fi
# The plugin fails open without a heartbeat: the jobs submitted before
# lucidd's first tick are held as they would be under a running lucidd.
beat() { echo "pid=$1 time=$(date +%s) intake=0" >"$LAB/heartbeat.tmp" && mv "$LAB/heartbeat.tmp" "$LAB/heartbeat"; }
beat $$
# Extra lucidd options for a manual run (LUCIDD_EXTRA_ARGS, as in
# lucidd_workload.sh), e.g. backfill's.
read -r -a EXTRA_ARGS <<<"${LUCIDD_EXTRA_ARGS:-}"
start_lucidd() { # extra lucidd arguments...
    setsid "$BUILD/lucidd" --state "$LAB/lucid.db" --socket "$SOCK" --metrics-port "$METRICS" \
        --profile-limit $LIMIT --tick-ms $TICK_MS --metrics-test-dir "$LAB/gpu" --profiler-bypass off --profiler-yield off \
        ${HEARTBEAT_ARGS[@]+"${HEARTBEAT_ARGS[@]}"} ${EXTRA_ARGS[@]+"${EXTRA_ARGS[@]}"} "$@" \
        </dev/null >>"$LAB/lucidd.log" 2>&1 &
    LUCIDD_PID=$!
    if ((${#HEARTBEAT_ARGS[@]} == 0)); then # stand-in: beats while this lucidd lives
        (while kill -0 "$LUCIDD_PID" 2>/dev/null && [[ $(awk '{print $3}' "/proc/$LUCIDD_PID/stat" 2>/dev/null) != Z ]]; do
            beat "$LUCIDD_PID"; sleep 1; done) &
        BEAT_PIDS+=($!)
    fi
    local deadline=$((SECONDS + 15))
    until "$BUILD/lucid" status --socket "$SOCK" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || { err "lucidd did not answer within 15 s"; tail -5 "$LAB/lucidd.log" >&2; return 1; }
        sleep 0.1
    done
    event lucidd-up "$LUCIDD_PID"
}
kill_lucidd() { # signal
    [[ -n $LUCIDD_PID ]] || return 0
    kill "-$1" "$LUCIDD_PID" 2>/dev/null || true
    wait "$LUCIDD_PID" 2>/dev/null || true
    event lucidd-down "$1"
    LUCIDD_PID=""
}

# The payload: start / stop (signalled) / end lines with what Slurm gave it,
# as the node's GPU indices: SLURM_JOB_GPUS, or for a packed job (no GPU
# gres) the partner's list LUCID_PACKED_GPUS; not CUDA_VISIBLE_DEVICES, which
# device confinement (site profile) numbers 0..n-1 inside the job.
cat >"$LAB/payload.sh" <<'EOF'
#!/bin/bash
dur=$1 code=$2 log=$3 mdir=$4
me="$SLURM_JOB_ID ${SLURM_RESTART_COUNT:-0} $SLURM_JOB_PARTITION $SLURMD_NODENAME ${SLURM_JOB_GPUS:-${LUCID_PACKED_GPUS:-${CUDA_VISIBLE_DEVICES:-none}}} ${LUCID_PACKED_GPUS:-no}"
echo "50 2000 10" >"$mdir/$SLURM_JOB_ID.gpu" 2>/dev/null || true
echo "start $me $(date +%s.%N)" >>"$log"
stopped() { echo "stop $me $(date +%s.%N)" >>"$log"; exit 143; }
trap stopped TERM
sleep "$dur" & wait $! || stopped
echo "end $me $(date +%s.%N)" >>"$log"
exit "$code"
EOF
chmod 755 "$LAB/payload.sh"
chmod 777 "$LAB/gpu"

# sub ROLE EXPECT DUR EXIT [sbatch options...] -> job id; EXPECT: run, fail
# (runs, exits 1), never (must not run), cancel-queue|cancel-profiler|cancel-main.
sub() {
    local role=$1 expect=$2 dur=$3 code=$4 id
    shift 4
    id=$(cd "$LAB/out" && sbatch --parsable -o "$LAB/out/%j.out" "$@" \
        "$LAB/payload.sh" "$dur" "$code" "$LAB/payload.log" "$LAB/gpu") || { err "sbatch $role ($*) refused"; return 1; }
    id=${id%%;*}
    echo "$id $role $expect $dur $code root $(date +%s)" >>"$LAB/jobs.txt"
    echo "$id"
}

SAMPLER_ARGS=()
start_sampler() {
    python3 "$CHECKER" sample "$SOCK" "$LAB/snapshots.jsonl" "$LAB/stop-sampler" 500 &
    SAMPLER_PID=$!
}
stop_sampler() {
    touch "$LAB/stop-sampler"
    wait "$SAMPLER_PID" 2>/dev/null || true
    SAMPLER_PID=""
    rm -f "$LAB/stop-sampler"
}

# Waits until cond (a command) holds; on timeout records `what` and returns 1.
wait_until() { # seconds what command...
    local limit=$1 what=$2
    shift 2
    local deadline=$((SECONDS + limit))
    until "$@"; do
        ((SECONDS < deadline)) || { err "timed out after ${limit}s waiting for $what"; return 1; }
        sleep 0.25
    done
}
in_phase() { # job phase-regex slurm-state-regex
    local p s
    # Slurm first (squeue is quick), lucid only then (a python client): on a
    # loaded machine each poll of both took seconds, and a 4 s profiling
    # window went by unseen.
    s=$(sstate "$1")
    [[ $s =~ ^($3)( |$) ]] || return 1
    [[ -n $2 ]] || return 0 # Slurm's view alone
    p=$(phase "$1")
    [[ $p =~ ^($2)( |$) ]]
}
all_settled() { # no job left but those expected never to run
    local never left
    never=$(awk '$3 == "never" {print $1}' "$LAB/jobs.txt" | sort)
    left=$(squeue -h -t PD,R,CG,CF,S -o %A | sort)
    [[ $left == "$never" ]]
}

# The final records: queue, status, metrics, and the jobcomp log.
final_records() {
    lucid queue --all --json >"$LAB/queue.json" 2>"$LAB/queue.err" || err "lucid queue --all --json: $(cat "$LAB/queue.err")"
    lucid status --json >"$LAB/status.json" 2>"$LAB/status.err" || err "lucid status --json: $(cat "$LAB/status.err")"
    python3 "$CHECKER" metrics "$METRICS" >"$LAB/metrics.txt" 2>"$LAB/metrics.err" || err "GET /metrics: $(cat "$LAB/metrics.err")"
    cp "$LAB/log/jobcomp.log" "$LAB/jobcomp.txt" 2>/dev/null || : >"$LAB/jobcomp.txt"
}

# ---------------------------------------------------------------- operator
operator_workload() {
    # A mixed burst before lucidd starts: GPUs, duration (2 s ends in the
    # profiler, 8-12 s moves to main), exit code, time limit in minutes
    # (lucid's estimate before any model, hence its priority).
    local spec gpus nodes dur code minutes
    for spec in "1 1 2 0 5" "1 1 9 0 10" "2 1 2 0 5" "2 1 10 0 20" "4 1 2 1 5" "4 1 8 0 15" \
        "8 1 2 0 5" "8 1 10 0 30" "1 1 11 1 10" "2 1 8 0 3" "4 1 12 0 25" "16 2 8 0 20" \
        "1 1 8 0 2" "2 1 9 0 8"; do
        read -r gpus nodes dur code minutes <<<"$spec"
        sub mix "$( ((code)) && echo fail || echo run)" "$dur" "$code" -N "$nodes" \
            --gres="gpu:$((gpus / nodes))" --time="$minutes" >/dev/null
    done
    sub gpus16 run 8 0 --gpus=16 --time=20 >/dev/null
    # Array: each task its own job, profiled on its own.
    local array
    array=$(cd "$LAB/out" && sbatch --parsable --array=0-5 --gres=gpu:1 --time=5 -o /dev/null \
        "$LAB/payload.sh" 2 0 "$LAB/payload.log" "$LAB/gpu")
    echo "$array" >"$LAB/array.txt"
    # Dependencies: afterok on a job that succeeds, and on one that fails.
    local a f
    a=$(sub dep-parent run 6 0 --gres=gpu:1 --time=5)
    sub dep-child run 2 0 --gres=gpu:1 --time=5 --dependency="afterok:$a" >/dev/null
    f=$(sub dep-parent-fails fail 1 1 --gres=gpu:1 --time=5)
    sub dep-never never 2 0 --gres=gpu:2 --time=5 --dependency="afterok:$f" >/dev/null
    sub begin run 2 0 --gres=gpu:2 --time=5 --begin=now+20 >/dev/null
    sub pin-n2 run 8 0 --gres=gpu:2 --time=10 -w n2 >/dev/null
    sub exclude-n1 run 8 0 --gres=gpu:8 --time=10 --exclude=n1 >/dev/null
    local name
    name=$(python3 -c 'print("é" * 70, end="")') # 140 bytes: a 127-byte cut splits a character
    sub utf8-name run 2 0 --gres=gpu:1 --time=5 -J "$name" >/dev/null
    printf '%s' "$name" >"$LAB/utf8-name.txt"
    # Cancelled while held (32 GPUs waits behind everything), while profiling,
    # while running on main.
    sub cancel-held cancel-queue 5 0 -N 4 --gres=gpu:8 --time=60 >/dev/null
    sub cancel-profiling cancel-profiler 40 0 --gres=gpu:1 --time=5 >/dev/null
    sub cancel-running cancel-main 40 0 --gres=gpu:2 --time=2 >/dev/null
    # The user's own hold, and a resize while held (both lifted by `lucid release`).
    sub user-hold run 2 0 --gres=gpu:1 --time=5 -H >/dev/null
    sub resize run 6 0 --gres=gpu:1 --time=5 -H >/dev/null
}

cancel_when() { # role phase-regex slurm-regex
    local id
    id=$(awk -v r="$1" '$2 == r {print $1}' "$LAB/jobs.txt")
    if wait_until 90 "job $id ($1) in lucid phase $2 / Slurm $3" in_phase "$id" "$2" "$3"; then
        scancel "$id"
        event cancel "$id" "$1" "$(phase "$id")" "$(sstate "$id")"
    else
        scancel "$id" # so the run can end; the checker sees it was not caught
        event cancel-late "$id" "$1" "$(phase "$id")" "$(sstate "$id")"
    fi
}

# Whether the sampler has recorded lucid showing JOB as waiting for REASON
# (check_operator.py's rules want it seen before the operator acts).
sampled_waiting() { # job reason
    python3 - "$LAB/snapshots.jsonl" "$1" "$2" <<'PY'
import json, sys
path, job, reason = sys.argv[1], int(sys.argv[2]), sys.argv[3]
try:
    lines = open(path).read().splitlines()
except OSError:
    sys.exit(1)
for line in lines:
    try:
        snap = json.loads(line)
    except ValueError:
        continue  # the line being written
    for j in snap.get("lucid") or []:
        if j.get("job") == job and j.get("waits_for") == reason:
            sys.exit(0)
sys.exit(1)
PY
}

operator_actions() {
    local id out
    # A job of user nobody: its owner's release is refused, now and after intake.
    id=$(cd /tmp && runuser -u nobody -- sbatch --parsable --gres=gpu:1 --time=5 -o /dev/null \
        "$LAB/payload.sh" 6 0 "$LAB/payload.log" "$LAB/gpu") || err "sbatch as nobody refused"
    echo "$id nobody-release run 6 0 nobody $(date +%s)" >>"$LAB/jobs.txt"
    out=$(runuser -u nobody -- scontrol release "$id" 2>&1) && err "user nobody released job $id at submission: $out"
    event nobody-release "$id" "$out"
    # After intake: once Slurm no longer shows the plugin's hold at
    # submission (JobHeldUser): lucid's operator hold (JobHeldAdmin), or
    # lucid already released it (a fixed 2 s was too short on a loaded
    # machine).  A release of a job no longer held succeeds doing nothing,
    # so what must never happen is judged from slurmctld's log: a hold on
    # the job lifted by nobody's uid.
    wait_until 30 "lucid to take in job $id (Slurm's reason no longer JobHeldUser)" \
        bash -c "! scontrol show job $id | grep -q 'Reason=JobHeldUser'" || true
    out=$(runuser -u nobody -- scontrol release "$id" 2>&1) || true
    grep -q "release hold on JobId=$id by uid $(id -u nobody)\$" "$LAB/log/slurmctld.log" &&
        err "user nobody released job $id after intake: $out"
    event nobody-release "$id" "$out"

    # Resize after intake: seen by lucid (held, waiting for its user), then
    # grown to 2 GPUs, then released with lucid.
    id=$(awk '$2 == "resize" {print $1}' "$LAB/jobs.txt")
    wait_until 30 "lucid to list the held job $id" bash -c "[[ -n \"\$(python3 '$CHECKER' phase '$SOCK' $id)\" ]]" || true
    wait_until 30 "the sampler to see job $id wait for its user" sampled_waiting "$id" user-hold || true
    scontrol update jobid="$id" gres=gpu:2 || err "scontrol update gres=gpu:2 of held job $id refused"
    event resized "$id"
    sleep 1
    event lucid-release "$id"
    out=$(lucid release "$id" 2>&1) || err "lucid release $id: $(head -1 <<<"$out")"

    # -H, then `lucid release` 5 s later.
    id=$(awk '$2 == "user-hold" {print $1}' "$LAB/jobs.txt")
    sleep 5
    wait_until 30 "the sampler to see job $id wait for its user" sampled_waiting "$id" user-hold || true
    event lucid-release "$id"
    out=$(lucid release "$id" 2>&1) || err "lucid release $id: $(head -1 <<<"$out")"
}

run_operator() {
    operator_workload
    start_lucidd
    start_sampler
    echo "lucidd_operator: $(wc -l <"$LAB/jobs.txt") jobs + a 6-task array submitted; lucidd up"
    operator_actions &
    EXTRA_PIDS+=($!)
    cancel_when cancel-held 'main-queue' 'PENDING' &
    EXTRA_PIDS+=($!)
    # Profiling lasts 4 s: caught from Slurm's view alone (running on the
    # profiling partition), which squeue gives fast enough on a loaded
    # machine; lucid's phase agreeing with it is check_operator.py's job.
    cancel_when cancel-profiling '' 'RUNNING [0-9]+ profiling' &
    EXTRA_PIDS+=($!)
    cancel_when cancel-running 'running' 'RUNNING' &
    EXTRA_PIDS+=($!)
    local pid
    for pid in "${EXTRA_PIDS[@]}"; do wait "$pid" || true; done
    EXTRA_PIDS=()
    wait_until 150 "every runnable job to end" all_settled || err "left: $(squeue -h -o '%A %T %r' | paste -sd' ')"
    event settled
    # The never-satisfiable dependency must still be waiting, never started.
    local never
    never=$(awk '$3 == "never" {print $1}' "$LAB/jobs.txt")
    event never-state "$never" "$(phase "$never")" "$(sstate "$never")"
    scancel "$never"
    sleep 2
    stop_sampler
    lucid queue --job "$(awk '$2 == "utf8-name" {print $1}' "$LAB/jobs.txt")" --json >"$LAB/utf8-explain.json" 2>&1 ||
        err "lucid queue --job (non-ASCII name): $(head -c 300 "$LAB/utf8-explain.json")"
    final_records
}

# ---------------------------------------------------------------- outages
run_outages() {
    local spec gpus dur
    # Profiling jobs that outlive the limit (8 s) and short ones (2 s).
    for spec in "1 8" "2 8" "1 2" "2 2" "1 10" "4 2" "1 9" "2 3"; do
        read -r gpus dur <<<"$spec"
        sub outage run "$dur" 0 --gres="gpu:$gpus" --time=5 >/dev/null
    done
    start_lucidd
    start_sampler
    # 1. SIGKILL while jobs profile; down past the profiling limit and past
    #    MinJobAge (5 s): the short ones end and leave Slurm's table.
    wait_until 30 "a job profiling" bash -c "squeue -h -t R -p profiling -o %A | grep -q ." || true
    kill_lucidd KILL
    sleep $((LIMIT + MIN_JOB_AGE + 8))
    start_lucidd
    # 2. slurmctld down 60 s while jobs end in the profiler.
    for spec in "1 3" "2 3" "1 4"; do
        read -r gpus dur <<<"$spec"
        sub ctld-down run "$dur" 0 --gres="gpu:$gpus" --time=5 >/dev/null
    done
    wait_until 30 "the ctld-down jobs profiling" bash -c \
        "[[ \$(squeue -h -t R -p profiling -o %A | wc -l) -ge 2 ]]" || true
    bash "$SRC/scripts/lab-cluster.sh" stop-ctld "$LAB" >/dev/null
    event ctld-down
    local t0=$SECONDS status_slow=0 answered=0
    while ((SECONDS < t0 + 60)); do
        local s0 s1
        s0=$(date +%s%N)
        "$BUILD/lucid" status --socket "$SOCK" >/dev/null 2>&1 && answered=$((answered + 1))
        s1=$(date +%s%N)
        (((s1 - s0) / 1000000 > 1000)) && status_slow=$((status_slow + 1))
        sleep 2
    done
    ((status_slow == 0)) || err "lucid status took over 1 s $status_slow times while slurmctld was down"
    ((answered > 0)) || err "lucid status never answered while slurmctld was down"
    bash "$SRC/scripts/lab-cluster.sh" start-ctld "$LAB" >/dev/null
    event ctld-up
    # 3. The state file deleted, lucidd restarted on a new one.
    sleep 5
    sub after-state-loss run 9 0 --gres=gpu:1 --time=5 >/dev/null
    sleep 3
    kill_lucidd TERM
    rm -f "$LAB/lucid.db" "$LAB/lucid.db-wal" "$LAB/lucid.db-shm"
    event state-deleted
    start_lucidd
    # 4. A second lucidd on the same state must refuse, naming the holder.
    local out
    # A refusal is immediate; 3 s bounds the harm a second scheduler can do.
    out=$(timeout 3 "$BUILD/lucidd" --state "$LAB/lucid.db" --socket "$LAB/second.sock" \
        --profile-limit $LIMIT ${HEARTBEAT_ARGS[@]+"${HEARTBEAT_ARGS[@]}"} 2>&1) &&
        err "a second lucidd on the same state started (exit 0): $out"
    grep -q "$LUCIDD_PID" <<<"$out" || err "second lucidd did not name the holder's pid $LUCIDD_PID: $(head -c 300 <<<"$out")"
    kill -0 "$LUCIDD_PID" 2>/dev/null || err "the first lucidd died when a second one started"
    [[ -S $SOCK ]] || err "the first lucidd's socket is gone after a second lucidd ran"
    event second-lucidd "$out"
    # 5. Slow clients as user nobody: one byte every 0.9 s on /metrics, a
    #    queue request never read, both for 20 s; the tick counter must advance.
    for spec in "1 6" "2 6" "1 2"; do
        read -r gpus dur <<<"$spec"
        sub slow-clients run "$dur" 0 --gres="gpu:$gpus" --time=5 >/dev/null
    done
    # As nobody (lucidd's socket mode may keep nobody out: then only /metrics)
    # and as root, at once.
    runuser -u nobody -- python3 "$CHECKER" slow-clients "$SOCK" "$METRICS" 20 >"$LAB/slow.txt" 2>&1 &
    local slow=$!
    python3 "$CHECKER" slow-clients "$SOCK" "$METRICS" 20 >"$LAB/slow-root.txt" 2>&1 &
    EXTRA_PIDS+=($!)
    local ticks0 ticks1
    ticks0=$(python3 "$CHECKER" ticks "$SOCK" 2>/dev/null || echo -1)
    sleep 10
    ticks1=$(python3 "$CHECKER" ticks "$SOCK" 2>/dev/null || echo -1)
    wait "$slow" || err "slow clients: $(tail -3 "$LAB/slow.txt")"
    event slow-clients "$ticks0" "$ticks1"
    # 10 s at 250 ms = 40 ticks; a stalled loop managed 1 in 30 s (issue 10).
    if ((ticks0 < 0 || ticks1 < 0)); then
        err "lucid status --json gave no tick counter within 3 s under slow clients (ticks $ticks0 then $ticks1; -1 = no answer or no \"ticks\")"
    elif ((ticks1 - ticks0 < 20)); then
        err "tick counter advanced $((ticks1 - ticks0)) in 10 s under slow clients (tick 250 ms: ~40 expected)"
    fi
    wait_until 150 "every job to end after the outages" all_settled || err "left: $(squeue -h -o '%A %T %r' | paste -sd' ')"
    sleep 2
    stop_sampler
    final_records
}

# ---------------------------------------------------------------- failopen
no_lucid_holds() { # no pending job held with an admin comment of lucid's other than the hand-back's
    local id
    for id in $(squeue -h -t PD -o '%A %Q' | awk '$2 == 0 {print $1}'); do
        scontrol show job "$id" | grep -q '^ *AdminComment=lucid' || continue
        scontrol show job "$id" | grep -q '^ *AdminComment=lucid: handed back' || return 1
    done
}
run_failopen() {
    local id out
    # The watchdog beside lucidd: hand back after 12 s of silence (the
    # plugin's bound is 8 s, shorter, so owners can lift handed-back holds).
    "$BUILD/lucidd" --hand-back-after 12 --heartbeat "$LAB/heartbeat" --poll-ms 250 \
        >>"$LAB/watchdog.log" 2>&1 &
    WATCHDOG_PID=$!
    local spec gpus dur
    for spec in "1 3" "2 9" "8 9" "1 9" "4 2"; do
        read -r gpus dur <<<"$spec"
        sub before-stop run "$dur" 0 --gres="gpu:$gpus" --time=5 >/dev/null
    done
    start_lucidd
    start_sampler
    wait_until 30 "a job profiling" bash -c "squeue -h -t R -p profiling -o %A | grep -q ." || true
    sleep 1
    # Held jobs while lucidd is down: these must be handed back.
    for spec in "8 6" "8 6" "8 6" "8 6" "8 6" "2 3"; do
        read -r gpus dur <<<"$spec"
        sub held-at-stop run "$dur" 0 --gres="gpu:$gpus" --time=5 >/dev/null
    done
    # An owner's -H job (user nobody): handed back as a user hold nobody may lift.
    id=$(cd /tmp && runuser -u nobody -- sbatch --parsable -H --gres=gpu:1 --time=5 -o /dev/null \
        "$LAB/payload.sh" 2 0 "$LAB/payload.log" "$LAB/gpu") || err "sbatch -H as nobody refused"
    echo "$id user-hold-at-stop run 2 0 nobody $(date +%s)" >>"$LAB/jobs.txt"
    sleep 2
    kill_lucidd KILL
    local stopped=$SECONDS
    # Within the plugin's bound: still held.
    sub within-bound run 3 0 --gres=gpu:1 --time=5 >/dev/null
    # A job lucidd had released ahead (--release-ahead) when it stopped: the
    # state lucidd leaves, made by hand with the updates slurm_io_release_ahead
    # sends (AdminComment with lucid-ahead, packed nodes excluded, released,
    # a priority of lucid's), on a job kept pending by --begin. The watchdog
    # must give it Slurm's own priority and lift the exclusion.
    local ahead
    ahead=$(sub ahead-at-stop cancel-queue 3 0 --gres=gpu:1 --time=5 --begin=now+600) || true
    if [[ -n $ahead ]]; then
        scontrol update jobid="$ahead" excnodelist=n1 \
            admincomment="lucid: main-queue: waiting for 1 free GPU on 1 node lucid-ahead" &&
            scontrol release "$ahead" && scontrol update jobid="$ahead" priority=29250343 ||
            err "job $ahead: could not set up as released ahead"
    fi
    wait_until 30 "the plugin's bound (8 s) to pass" bash -c "(( \$(date +%s) - \$(stat -c %Y '$LAB/heartbeat' 2>/dev/null || echo 0) > 9 ))" || true
    # Past it: new jobs pass to Slurm unheld and run.
    id=$(sub after-bound run 3 0 --gres=gpu:1 --time=5)
    event failopen-submit "$id"
    wait_until 30 "job $id (submitted with lucidd silent) to run under plain Slurm" \
        bash -c "squeue -h -t all -j $id -o %T | grep -qE 'RUNNING|COMPLETED'" || true
    # The watchdog hands back the held ones (12 s); the owner lifts their hold.
    wait_until 40 "the watchdog to hand back every held job" no_lucid_holds
    if [[ -n $ahead ]]; then
        wait_until 10 "the watchdog to hand back job $ahead (released ahead)" \
            bash -c "scontrol show job $ahead | grep -q '^ *AdminComment=lucid: handed back'" || true
        local prio excl
        prio=$(squeue -h -j "$ahead" -o %Q)
        excl=$(scontrol show job "$ahead" | sed -n 's/.*ExcNodes=\([^ ]*\).*/\1/p')
        # The lab's multifactor weights sum to well under 100,000.
        ((prio > 0 && prio < 100000)) ||
            err "job $ahead (released ahead, lucidd down): priority $prio, not Slurm's own"
        [[ $excl == "(null)" || -z $excl ]] || err "job $ahead (released ahead): still excludes $excl"
        scancel "$ahead"
        event cancel "$ahead" queue "" "$(sstate "$ahead")"
    fi
    id=$(awk '$2 == "user-hold-at-stop" {print $1}' "$LAB/jobs.txt")
    out=$(runuser -u nobody -- scontrol release "$id" 2>&1) || err "handed-back user hold $id: its owner's release refused: $out"
    event owner-release "$id"
    sleep 3
    event lucidd-restart $((SECONDS - stopped))
    start_lucidd
    sub after-return run 3 0 --gres=gpu:2 --time=5 >/dev/null
    wait_until 150 "every job to end after lucidd returned" all_settled || err "left: $(squeue -h -o '%A %T %r' | paste -sd' ')"
    sleep 2
    stop_sampler
    kill -TERM "$WATCHDOG_PID" 2>/dev/null || true
    wait "$WATCHDOG_PID" 2>/dev/null || true
    WATCHDOG_PID=""
    final_records
}

case $MODE in
    operator) run_operator ;;
    outages) run_outages ;;
    failopen) run_failopen ;;
esac
kill_lucidd TERM
python3 "$CHECKER" check "$LAB" "$MODE" "$LIMIT" || true
if [[ -s $LAB/errors.txt ]]; then
    echo "lucidd_operator ($MODE): $(wc -l <"$LAB/errors.txt") failed expectations:" >&2
    sed 's/^/  /' "$LAB/errors.txt" >&2
    tail -n 15 "$LAB/lucidd.log" >&2 || true
    exit 1
fi
echo "lucidd_operator ($MODE): all checks passed in ${SECONDS}s"

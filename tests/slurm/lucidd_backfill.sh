#!/usr/bin/env bash
# lucidd_backfill.sh — lucidd --backfill easy on the lab cluster: a large
# job's reservation is honoured, also after lucidd is SIGKILLed and restarted
# with options that would refuse it now, and a job under the size minimum
# holds none (issue 13's live goal).  Judged by check_backfill.py from
# Slurm's jobcomp log and `lucid queue --json` snapshots.
#   bash lucidd_backfill.sh SOURCE_DIR BUILD_DIR
# Cluster: 2 main nodes x 8 GPUs (the large job takes all 16 GPUs, so any job
# running past the reservation's time would delay it) + 1 profiling node
# (unused: --gpu-limit 0 sends every job straight to the main queue, so the
# estimates are the Slurm time limits and no profiling run shifts the timing).
# --packing off: the small jobs must pass by backfill, not by sharing GPUs.
# lucidd first runs `--backfill easy --backfill-window 1200
# --backfill-min-gpus 9` (the variant docs/backfill.md measured).
#
# Lucid's priority is estimate x GPUs (lower first); estimates are the time
# limits (-t) while no model is trained.  The workload, in order:
#   B1, B2  6 GPUs, -t 15 (900 s estimate), run 45 s: the busy jobs; 4 GPUs
#           stay free (2 on each node).
#   M       8 GPUs on 1 node, -t 1 (priority 480, the best): cannot start
#           before B1 or B2 ends, and holds no reservation (8 < 9 GPUs).
#   S1, S2  2 GPUs, -t 20 (planned 1440 s), run 3 s: must start at once,
#           together, past M (had M held a reservation on one node, only
#           one of them could have run, on the other node's 2 free GPUs,
#           the second once the first ended).
#   L       16 GPUs (-N 2, 8 per node), -t 1 (priority 960), run 10 s,
#           submitted once S1/S2 ended: gets the reservation (at B1/B2's
#           estimated end, ~900 s away, inside the window of 1200 s) although
#           M is ahead of it.
#   then, once lucid shows L's reservation:
#   G1-G3   2 GPUs, -t 9 (priority 1080: behind L), run 4 s: their planned
#           run (540 s x margin 1.2 = 648 s) ends before the reservation, so
#           they must be backfilled (start before L; G3 once G1/G2 ended);
#   D1, D2  2 GPUs, -t 20 (priority 2400), planned 1440 s: past the
#           reservation, so they must wait for L.  They run 60 s, or end as
#           soon as L runs (the file `release`): had one started in the gap,
#           it would hold L's GPUs 60 s, 15-20 s past B1/B2's end, a delay
#           the timing check sees, not only the start order; started after
#           L, they end at once (the test's tail stays short).
#   then lucidd is SIGKILLed and restarted with `--backfill-window 60
#   --backfill-min-gpus 17`: both would refuse L a reservation now (its
#   start is ~890 s away; 16 < 17 GPUs), but a reservation once given is
#   kept (the state store's reserved_since); after the restart:
#   G4      as G1: still backfilled past the kept reservation;
#   D3      as D1: still waits (without the kept reservation, L would be
#           passed over and D1-D3 would start on the 4 free GPUs).
# Checked (check_backfill.py; LAG = 15 s covers lucid's tick (250 ms), the
# release RPCs, Slurm's start and jobcomp's whole seconds on a loaded machine):
#   M never showed a reservation and its reason said why; S1/S2 ran at the
#   same time, before M; L got a reservation on both nodes and showed it in
#   every snapshot until it started, across the restart (but the restarted
#   lucidd's first publication, before its first tick), at the same time
#   and nodes; L started on those nodes, no later than the reserved time
#   and its P90 seen with the first reservation, and within LAG s of the end
#   of the jobs submitted before the reservation that started before it (a
#   later job still holding L's GPUs then is one that delayed it); G1-G4 started before L, D1-D3 not before; every
#   job completed once; lucid's reasons name the backfill and the
#   reservation; `lucid explain L` shows "reserved for it" before and after
#   the restart; lucidd's log never dropped L's reservation.
set -euo pipefail
SRC=$1 BUILD=$2
LAB=$BUILD/lab-backfill
rm -rf "$LAB"
mkdir -p "$LAB/out"
LUCIDD_PID="" SAMPLER_PID="" SOCK_DIR=""
CHECKER=$SRC/tests/slurm/check_backfill.py
cleanup() {
    local pid
    for pid in "$SAMPLER_PID" "$LUCIDD_PID"; do
        [[ -n $pid ]] && { kill -KILL "$pid" && wait "$pid"; } 2>/dev/null || true
    done
    bash "$SRC/scripts/lab-cluster.sh" down "$LAB" >/dev/null 2>&1 || true
    [[ -n $SOCK_DIR ]] && rm -rf "$SOCK_DIR"
    return 0
}
trap cleanup EXIT

LAG=15
# The restarted lucidd's options: each alone would refuse L a new reservation.
NEW_WINDOW=60 NEW_MIN_GPUS=17
bash "$SRC/scripts/lab-cluster.sh" up "$LAB" --nodes 2 --plugins "$BUILD/plugins" \
    --lucid-conf "heartbeat=$LAB/heartbeat" --lucid-conf "fail_open_after=600" >/dev/null
export SLURM_CONF=$LAB/etc/slurm.conf
SOCK_DIR=$(mktemp -d /tmp/lucid-bf.XXXXXX)
SOCK=$SOCK_DIR/lucidd.sock
: >"$LAB/errors.txt"
: >"$LAB/jobs.txt"
: >"$LAB/events.txt"

err() { # one write per line (see lucidd_operator.sh's event)
    local line="$*"
    printf '%s\n' "${line//$'\n'/ }" >>"$LAB/errors.txt"
    echo "lucidd_backfill: FAIL: $*" >&2
}
event() { echo "$(date +%s.%N) $*" >>"$LAB/events.txt"; }
die() { err "$*"; exit 1; }
lucid() { "$BUILD/lucid" "$@" --socket "$SOCK"; }
# Until lucidd's first tick the plugin must hold new jobs, as under a running lucidd.
echo "pid=$$ time=$(date +%s) intake=0" >"$LAB/heartbeat"

# payload.sh SECONDS LOG [RELEASE]: runs SECONDS, or until file RELEASE exists.
cat >"$LAB/payload.sh" <<'EOF'
#!/bin/bash
echo "start $SLURM_JOB_ID $(date +%s.%N)" >>"$2"
if [[ -n ${3:-} ]]; then
    end=$((SECONDS + $1))
    while ((SECONDS < end)) && [[ ! -e $3 ]]; do sleep 0.2; done
else
    sleep "$1"
fi
echo "end $SLURM_JOB_ID $(date +%s.%N)" >>"$2"
EOF
chmod 755 "$LAB/payload.sh"

sub() { # ROLE SECONDS[:release] sbatch-options... -> records "id role"
    local role=$1 dur=${2%:release} release="" id
    [[ $2 == *:release ]] && release=$LAB/release
    shift 2
    id=$(cd "$LAB/out" && sbatch --parsable -o "$LAB/out/%j.out" -J "$role" "$@" \
        "$LAB/payload.sh" "$dur" "$LAB/payload.log" ${release:+"$release"}) || die "sbatch $role ($*) refused"
    echo "${id%%;*} $role" >>"$LAB/jobs.txt"
    event submit "${id%%;*}" "$role"
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
running() { [[ $(squeue -h -j "$1" -o %T 2>/dev/null) == RUNNING ]]; }
started() { local s; s=$(squeue -h -j "$1" -o %T 2>/dev/null); [[ -n $s && $s != PENDING ]]; }
active() { [[ -n $(squeue -h -t PD,R,CG,CF,S -o %A ${1:+-j "$1"} 2>/dev/null) ]]; }
start_lucidd() { # extra options...
    setsid "$BUILD/lucidd" --state "$LAB/lucid.db" --socket "$SOCK" --heartbeat "$LAB/heartbeat" \
        --tick-ms 250 --gpu-limit 0 --packing off --backfill easy --backfill-margin 1.2 "$@" \
        </dev/null >>"$LAB/lucidd.log" 2>&1 &
    LUCIDD_PID=$!
    wait_until 15 "lucidd to answer" lucid status
}

sub B1 45 -N 1 --gres=gpu:6 -t 15
sub B2 45 -N 1 --gres=gpu:6 -t 15
start_lucidd --backfill-window 1200 --backfill-min-gpus 9 || exit 1
python3 "$CHECKER" sample "$SOCK" "$LAB/snapshots.jsonl" "$LAB/stop-sampler" 250 &
SAMPLER_PID=$!
wait_until 30 "B1 and B2 to run" bash -c "$(declare -f running); running $(id_of B1) && running $(id_of B2)" || exit 1
# The size minimum: M waits without a reservation; S1/S2 pass it.
sub M 3 -N 1 --gres=gpu:8 -t 1
M=$(id_of M)
wait_until 15 "lucid to say job $M holds no reservation" \
    python3 "$CHECKER" reason "$SOCK" "$M" "only jobs of 9 GPUs or more hold one" || true
sub S1 3 -N 1 --gres=gpu:2 -t 20
sub S2 3 -N 1 --gres=gpu:2 -t 20
wait_until 20 "S1 and S2 to end" bash -c "$(declare -f active); ! active $(id_of S1),$(id_of S2)" || true
sub L 10 -N 2 --gres=gpu:8 -t 1
L=$(id_of L)
wait_until 30 "lucid to show job $L's reservation" python3 "$CHECKER" reserved "$SOCK" "$L" &&
    event reserved "$L"
for g in G1 G2 G3; do sub "$g" 4 -N 1 --gres=gpu:2 -t 9; done
sub D1 60:release -N 1 --gres=gpu:2 -t 20
sub D2 60:release -N 1 --gres=gpu:2 -t 20
# What a user sees while L waits behind its reservation.
sleep 3
lucid explain "$L" >"$LAB/explain-L.txt" 2>&1 || err "lucid explain $L: $(head -1 "$LAB/explain-L.txt")"
lucid queue >"$LAB/queue-while-waiting.txt" 2>&1 || true
# The promise outlives the daemon: SIGKILL (no chance to tidy up), then a
# lucidd whose window and size minimum would both refuse L a reservation now.
kill -KILL "$LUCIDD_PID"
wait "$LUCIDD_PID" 2>/dev/null || true
LUCIDD_PID=""
event killed
start_lucidd --backfill-window "$NEW_WINDOW" --backfill-min-gpus "$NEW_MIN_GPUS" || exit 1
event restarted "window=$NEW_WINDOW" "min_gpus=$NEW_MIN_GPUS"
running "$L" && err "job $L (L) already runs after the restart: the workload is too slow for the test (B1/B2 run 45 s)"
wait_until 10 "the restarted lucid to show job $L's reservation" python3 "$CHECKER" reserved "$SOCK" "$L" || true
sub G4 4 -N 1 --gres=gpu:2 -t 9
sub D3 60:release -N 1 --gres=gpu:2 -t 20
sleep 2
lucid explain "$L" >"$LAB/explain-L-restarted.txt" 2>&1 ||
    err "lucid explain $L after the restart: $(head -1 "$LAB/explain-L-restarted.txt")"
# The D jobs end once L runs (or after their 60 s if one held L's GPUs).
wait_until 120 "job $L (L) to start" started "$L" || true
touch "$LAB/release"
event released
wait_until 90 "every job to end" bash -c "$(declare -f active); ! active" || true
sleep 1
touch "$LAB/stop-sampler"
wait "$SAMPLER_PID" 2>/dev/null || true
SAMPLER_PID=""
kill -TERM "$LUCIDD_PID" 2>/dev/null || true
wait "$LUCIDD_PID" 2>/dev/null || true
LUCIDD_PID=""
cp "$LAB/log/jobcomp.log" "$LAB/jobcomp.txt" 2>/dev/null || : >"$LAB/jobcomp.txt"
python3 "$CHECKER" check "$LAB" "$LAG" || true
if [[ -s $LAB/errors.txt ]]; then
    echo "lucidd_backfill: $(wc -l <"$LAB/errors.txt") failed expectations:" >&2
    sed 's/^/  /' "$LAB/errors.txt" >&2
    tail -n 15 "$LAB/lucidd.log" >&2 || true
    exit 1
fi
echo "lucidd_backfill: all checks passed in ${SECONDS}s"

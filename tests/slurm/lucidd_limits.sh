#!/usr/bin/env bash
# lucidd_limits.sh — issue 23, point 1: the site's GPU limits kept, never
# phantom capacity.  On the site profile of the lab (slurmdbd,
# AccountingStorageEnforce=associations,limits,qos) the default QOS
# `normal` gets MaxTRESPerUser=gres/gpu=4; judged from Slurm's records
# (squeue, scontrol, sacct --duplicates) and lucid's queue.
#   bash lucidd_limits.sh SOURCE_DIR BUILD_DIR
# Cluster: n1, n2 x 8 GPUs (main), p1 x 8 (profiling), untyped.  lucidd:
# --gpu-limit 1 (1-GPU jobs are profiled, 2-GPU jobs go to the main queue),
# profiling limit 3 s, packing off (head of line), fair share off in
# lucid's order (so the order below is lucid's own: estimate x GPUs).
# User A is lucidlab1 (account alpha), user B lucidlab2 (account beta).
#   1. A's BIG (8 GPUs) can never start: handed back at once; lucid's
#      reason (queue --json) and the AdminComment name the limit, and Slurm
#      itself then keeps it pending for QOSMaxGRESPerUser.
#   2. A's A1, A2, A3 (2 GPUs each): A1 and A2 run; A3 waits with the limit
#      and A's use named, never released.
#   3. B's B1 (3 GPUs, behind A3 in lucid's order) starts at once: A3 holds
#      no capacity and blocks nobody.
#   4. The profiler: A's PA (1 GPU) is passed over, B's PB (1 GPU, after PA
#      in the profiler's order) is profiled at once.
#   5. A1 and A2 end: A3 and PA start.
#   6. The site's QOS priority in lucid's order (the lab weighs QOS,
#      PriorityWeightQOS=2000; lucidd's --qos-weight then defaults to 2):
#      the limit lifted, a QOS `high` (Priority=100) for A; with both main
#      nodes full, B's LOW (8 GPUs, 5 min: 2,400 in lucid's order) waits
#      ahead of A's HIGH (8 GPUs, 10 min, --qos=high: 4,800 x 10^-2 = 48).
#      When one node frees, HIGH starts and LOW waits (without the QOS
#      factor LOW would go first).
# Then from sacct: A never ran more than 4 GPUs at once under QOS normal,
# A3 started only after A1 or A2 ended, B1 and PB within 10 s of their
# submission, HIGH before LOW; lucid took nothing back (no release Slurm
# refused).
set -euo pipefail
SRC=$1 BUILD=$2
LAB=$BUILD/lab-limits
LAB_SCRIPT=${LAB_SCRIPT:-$SRC/scripts/lab-cluster.sh}
rm -rf "$LAB"
mkdir -p "$LAB/out"
LUCIDD_PID="" SOCK_DIR=""
cleanup() {
    [[ -n $LUCIDD_PID ]] && { kill -KILL "$LUCIDD_PID" && wait "$LUCIDD_PID"; } 2>/dev/null || true
    bash "$LAB_SCRIPT" down "$LAB" >/dev/null 2>&1 || true
    [[ -n $SOCK_DIR ]] && rm -rf "$SOCK_DIR"
    return 0
}
trap cleanup EXIT

bash "$LAB_SCRIPT" up "$LAB" --profile site --nodes 2 --gpus 8 --prof-nodes 1 --gpu-types none \
    --plugins "$BUILD/plugins" --lucid-conf "heartbeat=$LAB/heartbeat" \
    --lucid-conf "fail_open_after=600" >"$LAB/up.log"
export SLURM_CONF=$LAB/etc/slurm.conf
SOCK_DIR=$(mktemp -d /tmp/lucid-limits.XXXXXX)
SOCK=$SOCK_DIR/lucidd.sock
: >"$LAB/jobs.txt"
fail() { echo "lucidd_limits: FAIL: $*" >&2; exit 1; }
lucid() { "$BUILD/lucid" "$@" --socket "$SOCK"; }
echo "pid=$$ time=$(date +%s) intake=0" >"$LAB/heartbeat"

sacctmgr -i modify qos normal set MaxTRESPerUser=gres/gpu=4 >/dev/null || fail "sacctmgr modify qos"
# A node a slurmd found leftovers of an earlier lab's job on (the same job
# ids and node names, "Kill task failed") is drained at start: not this
# test's subject.
for node in $(sinfo -h -N -t drain -o %N 2>/dev/null | sort -u); do
    echo "lucidd_limits: $node drained at start ($(sinfo -h -n "$node" -o %E)); resumed"
    scontrol update nodename="$node" state=resume
done

cat >"$LAB/payload.sh" <<'EOF'
#!/bin/bash
end=$((SECONDS + $1))
while ((SECONDS < end)) && [[ ! -e $2 ]]; do sleep 0.2; done
EOF
chmod 755 "$LAB/payload.sh"
chmod 777 "$LAB" "$LAB/out"

sub() { # USER ROLE sbatch-options...: records "id role user"
    local user=$1 role=$2 id
    shift 2
    id=$(cd "$LAB/out" && runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable \
        -o /dev/null -p main -J "$role" "$@" "$LAB/payload.sh" 170 "$LAB/stop-$role") ||
        fail "sbatch $role ($*) refused"
    echo "${id%%;*} $role $user" >>"$LAB/jobs.txt"
}
id_of() { awk -v r="$1" '$2 == r {print $1}' "$LAB/jobs.txt"; }
source "$SRC/tests/lib/wait.sh"
on() { [[ $(squeue -h -j "$1" -o '%T %P' 2>/dev/null) == "RUNNING $2" ]]; }
gone() { [[ -z $(squeue -h -j "$1" -o %T 2>/dev/null) ]]; }
# lucid's view of a job: "phase<TAB>reason", from queue --json.
lucid_job() {
    lucid queue --all --json 2>/dev/null | python3 -c '
import json, sys
for j in json.load(sys.stdin).get("jobs", []):
    if str(j.get("job")) == sys.argv[1]:
        print(j.get("phase", "") + "\t" + j.get("reason", ""))' "$1"
}
lucid_says() { [[ $(lucid_job "$1") == *"$2"* ]]; }

setsid "$BUILD/lucidd" --state "$LAB/lucid.db" --socket "$SOCK" --heartbeat "$LAB/heartbeat" \
    --tick-ms 250 --profile-limit 3 --gpu-limit 1 --packing off --fairshare-weight 0 \
    --release-timeout 20 </dev/null >>"$LAB/lucidd.log" 2>&1 &
LUCIDD_PID=$!
wait_until 20 "lucidd to answer" lucid status
wait_until 30 "lucidd to read the limits" grep -q "the site's GPU limits apply" "$LAB/lucidd.log"
LIMIT="QOS normal MaxTRESPerUser gres/gpu=4"

# 1. Over the limit by its own count.
sub lucidlab1 BIG --gres=gpu:8 -t 5
BIG=$(id_of BIG)
[[ $(squeue -h -j "$BIG" -o %q) == normal ]] || fail "BIG's QOS is not normal (the lab's default)"
wait_until 15 "BIG to be handed back" lucid_says "$BIG" "handed-back"
[[ $(lucid_job "$BIG") == *"needs 8 GPUs; $LIMIT: can never start"* ]] ||
    fail "BIG's reason does not name the limit: $(lucid_job "$BIG")"
scontrol show job "$BIG" | grep -q "AdminComment=lucid: handed back.*$LIMIT: can never start" ||
    fail "BIG's AdminComment does not name the limit: $(scontrol show job "$BIG" | grep -i admincomment)"
slurm_reason() { [[ $(squeue -h -j "$1" -o '%T %r') == "PENDING $2" ]]; }
wait_until 30 "Slurm to keep BIG for its limit" slurm_reason "$BIG" QOSMaxGRESPerUser
scancel "$BIG"

# 2. At the limit now.
T0=$SECONDS
sub lucidlab1 A1 --gres=gpu:2 -t 5
sub lucidlab1 A2 --gres=gpu:2 -t 5
wait_until 20 "A1 to run" on "$(id_of A1)" main
wait_until 20 "A2 to run" on "$(id_of A2)" main
sub lucidlab1 A3 --gres=gpu:2 -t 5
wait_until 15 "A3 to wait at its limit" lucid_says "$(id_of A3)" "$LIMIT: user lucidlab1 runs 4"

# 3. B's job behind A3 in lucid's order (600 s x 3 GPUs against 300 s x 2).
sub lucidlab2 B1 --gres=gpu:3 -t 10
wait_until 15 "B1 to start while A is at the limit" on "$(id_of B1)" main

# 4. The profiler passes A's PA over and profiles B's PB.
sub lucidlab1 PA --gres=gpu:1 -t 5
sub lucidlab2 PB --gres=gpu:1 -t 5
wait_until 15 "PB to be profiled" on "$(id_of PB)" profiling
lucid_says "$(id_of PA)" "$LIMIT: user lucidlab1 runs 4" ||
    fail "PA does not wait for the limit: $(lucid_job "$(id_of PA)")"
[[ $(squeue -h -j "$(id_of A3)" -o %T) == PENDING ]] || fail "A3 started while A ran 4 GPUs"

# 5. A's running jobs end: its waiting ones start.
touch "$LAB/stop-A1" "$LAB/stop-A2"
wait_until 30 "A3 to run" on "$(id_of A3)" main
started() { [[ $(sacct -X -n -P -j "$1" -o Start --duplicates | head -1) != Unknown ]]; }
wait_until 30 "PA to start" started "$(id_of PA)"
touch "$LAB/stop-A3" "$LAB/stop-B1" "$LAB/stop-PA" "$LAB/stop-PB"
for r in A1 A2 A3 B1 PA PB; do wait_until 60 "$r to end" gone "$(id_of $r)"; done
echo "lucidd_limits: jobs done $((SECONDS - T0)) s after A1's submission"

# 6. QOS priority.
sacctmgr -i modify qos normal set MaxTRESPerUser=gres/gpu=-1 >/dev/null || fail "sacctmgr lift the limit"
sacctmgr -i add qos high Priority=100 >/dev/null || fail "sacctmgr add qos high"
sacctmgr -i modify user where name=lucidlab1 set qos+=high >/dev/null || fail "sacctmgr give lucidlab1 qos high"
# Not before lucidd reads it: an 8-GPU job over the old limit is handed back for good.
wait_until 40 "lucidd to read the lifted limit" grep -q "the site sets no GPU limits" "$LAB/lucidd.log"
sub lucidlab2 F1 --gres=gpu:8 -t 10
sub lucidlab2 F2 --gres=gpu:8 -t 10
wait_until 30 "F1 to run" on "$(id_of F1)" main
wait_until 30 "F2 to run" on "$(id_of F2)" main
sub lucidlab2 LOW --gres=gpu:8 -t 5
sub lucidlab1 HIGH --gres=gpu:8 -t 10 --qos=high
# lucid's factor for a job's QOS: its priority over the site's largest (1 for high).
qos_factor() {
    lucid queue --all --json 2>/dev/null | python3 -c '
import json, sys
for j in json.load(sys.stdin).get("jobs", []):
    if str(j.get("job")) == sys.argv[1]:
        sys.exit(0 if j.get("qos") == "high" and j.get("qos_factor") == 1 else 1)
sys.exit(1)' "$1"
}
wait_until 40 "lucid to read HIGH's QOS priority" qos_factor "$(id_of HIGH)"
touch "$LAB/stop-F1"
wait_until 30 "HIGH to start on the freed node" on "$(id_of HIGH)" main
[[ $(squeue -h -j "$(id_of LOW)" -o %T) == PENDING ]] ||
    fail "LOW left the queue with HIGH: $(squeue -h -j "$(id_of LOW)" -o '%T %r')"
touch "$LAB/stop-F2" "$LAB/stop-HIGH" "$LAB/stop-LOW"
for r in F1 F2 HIGH LOW; do wait_until 60 "$r to end" gone "$(id_of $r)"; done

# slurmdbd takes in the jobs' records asynchronously (a job it has not
# heard the start of yet is named "allocation"): wait for all of them.
read_sacct() {
    sacct -X --duplicates -n -P -j "$(awk '{print $1}' "$LAB/jobs.txt" | paste -sd,)" \
        -o JobID,JobName,User,State,Partition,AllocTRES,Submit,Start,End,QOS >"$LAB/sacct.txt" &&
        awk -F'|' 'NR == FNR {role[$1] = $2; next}
                   $2 == role[$1] && $5 != "" && $4 !~ /^(PENDING|RUNNING|REQUEUED)/ {ok[$1] = 1}
                   END {for (id in role) if (!(id in ok)) exit 1}' \
            <(tr ' ' '|' <"$LAB/jobs.txt") "$LAB/sacct.txt"
}
wait_until 30 "Slurm's accounting of every job" read_sacct
grep -q "taken back" "$LAB/lucidd.log" && fail "lucid released a job Slurm refused: $(grep "taken back" "$LAB/lucidd.log")"
python3 - "$LAB/sacct.txt" <<'EOF' || exit 1
import sys
from datetime import datetime
def t(s):
    return None if s in ("", "Unknown", "None") else datetime.fromisoformat(s).timestamp()
def gpus(tres):
    for item in tres.split(","):
        if item.startswith("gres/gpu="):
            return int(item.split("=")[1])
    return 0
runs = []
for line in open(sys.argv[1]):
    jid, name, user, state, part, tres, sub, start, end, qos = line.rstrip("\n").split("|")
    if tres and t(start) is not None:  # a cancelled pending job has a start, no TRES
        runs.append(dict(name=name, user=user, part=part, gpus=gpus(tres), sub=t(sub),
                         start=t(start), end=t(end) or 1e18, qos=qos))
bad = []
first = lambda n: min((r for r in runs if r["name"] == n), key=lambda r: r["start"], default=None)
for n in ("BIG",):
    if first(n):
        bad.append(f"{n} ran")
a = [r for r in runs if r["user"] == "lucidlab1" and r["qos"] == "normal"]
for r in a:  # A's GPUs at each start of one of A's runs
    at = sum(o["gpus"] for o in a if o["start"] <= r["start"] < o["end"])
    if at > 4:
        bad.append(f"lucidlab1 ran {at} GPUs at once when {r['name']} started")
a3, a1, a2 = first("A3"), first("A1"), first("A2")
if not (a3 and a1 and a2) or a3["start"] < min(a1["end"], a2["end"]):
    bad.append("A3 started before A1 or A2 ended")
for n in ("B1", "PB"):
    r = first(n)
    if not r or r["start"] - r["sub"] > 10:
        bad.append(f"{n} did not start within 10 s of its submission")
high, low = first("HIGH"), first("LOW")
# sacct's whole seconds: LOW may start in HIGH's second once F2 ends (the
# order within it was checked live: LOW pending once HIGH ran).
if not (high and low) or high["start"] > low["start"]:
    bad.append("HIGH (QOS high) did not start before LOW")
pb = first("PB")
if pb and pb["part"] != "profiling":
    bad.append("PB's first run was not in the profiler")
for b in bad:
    print("lucidd_limits: FAIL:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
echo "lucidd_limits: every check passed"

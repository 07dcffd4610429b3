#!/usr/bin/env bash
# lucidd_burst.sh — a burst of submissions under lucidd on the site profile
# of the lab (issue 28's lab test, sized for CI), judged from Slurm's records:
#   - nothing lost: every job's last run (sacct --duplicates) COMPLETED;
#   - nothing run twice: at most one run in the profiler and one on main;
#   - main GPUs busy while jobs wait: no main node stays wholly idle for
#     IDLE_S seconds while a waiting job could start on it (sampled every
#     second from sinfo and squeue);
#   - the tick rate held: lucid status's ticks over the run >= 70 % of nominal.
#   bash lucidd_burst.sh SOURCE_DIR BUILD_DIR
# Cluster: 4 main nodes x 8 GPUs + 1 profiling node (untyped GPUs); lucidd
# --profile-limit 3 --tick-ms 500, packing off, --profiler-bypass on (the
# default).  Burst: 100 single sbatch of 1/2/4/8 GPUs and 2 arrays of 25,
# 2-6 s payloads, drawn from a fixed seed.  bench/burst.sh is the same at a
# site's scale (2,000 jobs on 8 x 8 GPUs) beside plain Slurm.
set -euo pipefail
SRC=$1 BUILD=$2
LAB=$BUILD/lab-burst
rm -rf "$LAB"
mkdir -p "$LAB/out"
LUCIDD_PID="" SOCK_DIR=""
cleanup() {
    [[ -n $LUCIDD_PID ]] && { kill -KILL "$LUCIDD_PID" && wait "$LUCIDD_PID"; } 2>/dev/null || true
    bash "$SRC/scripts/lab-cluster.sh" down "$LAB" >/dev/null 2>&1 || true
    [[ -n $SOCK_DIR ]] && rm -rf "$SOCK_DIR"
    return 0
}
trap cleanup EXIT
IDLE_S=6
TICK_MS=500

bash "$SRC/scripts/lab-cluster.sh" up "$LAB" --profile site --nodes 4 --gpus 8 --prof-nodes 1 \
    --gpu-types none --min-job-age 3600 --plugins "$BUILD/plugins" \
    --lucid-conf "heartbeat=$LAB/heartbeat" --lucid-conf "fail_open_after=600" >"$LAB/up.log"
export SLURM_CONF=$LAB/etc/slurm.conf
SOCK_DIR=$(mktemp -d /tmp/lucid-burst.XXXXXX)
SOCK=$SOCK_DIR/lucidd.sock
fail() { echo "lucidd_burst: FAIL: $*" >&2; exit 1; }
echo "pid=$$ time=$(date +%s) intake=0" >"$LAB/heartbeat"
setsid "$BUILD/lucidd" --state "$LAB/lucid.db" --socket "$SOCK" --heartbeat "$LAB/heartbeat" \
    --tick-ms $TICK_MS --profile-limit 3 --packing off </dev/null >"$LAB/lucidd.log" 2>&1 &
LUCIDD_PID=$!
deadline=$((SECONDS + 20))
until "$BUILD/lucid" status --socket "$SOCK" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "lucidd does not answer"
    sleep 0.2
done
ticks() { "$BUILD/lucid" status --socket "$SOCK" | awk '/^ticks:/ {print $2}'; }

cat >"$LAB/payload.sh" <<'EOF'
#!/bin/bash
echo "start $SLURM_JOB_ID $(date +%s.%N) $SLURM_JOB_PARTITION $SLURMD_NODENAME" >>"$BURST_LOG"
sleep "$1"
EOF
chmod 755 "$LAB/payload.sh"
export BURST_LOG=$LAB/payload.log
: >"$BURST_LOG"
awk 'BEGIN { srand(7); g[0] = 1; g[1] = 2; g[2] = 4; g[3] = 8;
    for (i = 0; i < 100; i++) print "single", g[int(rand() * 4)], 2 + int(rand() * 5);
    for (i = 0; i < 2; i++) print "array", g[int(rand() * 4)], 2 + int(rand() * 5) }' >"$LAB/plan.txt"
t0=$SECONDS
ticks0=$(ticks)
while read -r kind gpus secs; do
    array=()
    [[ $kind == array ]] && array=(--array=0-24)
    sbatch --parsable -o /dev/null -p main --gres=gpu:"$gpus" ${array[@]+"${array[@]}"} --export=ALL \
        "$LAB/payload.sh" "$secs" >>"$LAB/ids.txt" || fail "sbatch refused a job"
done <"$LAB/plan.txt"

# Until every job ended (at most 10 minutes): one sample a second of the main
# nodes' used GPUs and the smallest waiting request.
deadline=$((SECONDS + 600))
while :; do
    used=$(sinfo -h -p main -N -O 'NodeList:10,GresUsed:40' 2>/dev/null |
        sed 's/gpu:\([0-9]*\).*/\1/' | awk '{print $1 "=" $2}' | sort -u | paste -sd' ' || true)
    smallest=$(squeue -h -t PD -r -o '%b' 2>/dev/null | grep -o 'gpu:[0-9]*' | cut -d: -f2 | sort -n | head -1 || true)
    echo "$SECONDS ${smallest:-none} $used" >>"$LAB/samples.txt"
    [[ -z $(squeue -h -r -o %A 2>/dev/null | head -1) ]] && break
    ((SECONDS < deadline)) || fail "the burst did not end within 10 minutes"
    sleep 1
done
elapsed=$((SECONDS - t0))
ticks1=$(ticks)
# slurmdbd records a job's end a moment after slurmctld: read sacct until
# every job's last record has ended (at most 60 s).
deadline=$((SECONDS + 60))
while :; do
    sacct -X --duplicates -n -P -o JobIDRaw,State,Partition -S now-1days >"$LAB/sacct.txt" ||
        fail "sacct failed"
    open=$(awk -F'|' '{last[$1] = $2} END {for (j in last) if (last[j] !~ /^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY)/) n++; print n + 0}' "$LAB/sacct.txt")
    ((open == 0)) && break
    ((SECONDS < deadline)) || break
    sleep 1
done

python3 - "$LAB" "$IDLE_S" "$elapsed" "$ticks0" "$ticks1" "$TICK_MS" <<'EOF'
import sys
lab, idle_s, elapsed, t0, t1, tick_ms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
errors = []
runs = {}
for line in open(f"{lab}/sacct.txt"):
    p = line.strip().split("|")
    if len(p) == 3:
        runs.setdefault(p[0], []).append((p[1].split()[0], p[2]))
if len(runs) != 150:
    errors.append(f"sacct lists {len(runs)} jobs, want 150")
for jid, r in runs.items():
    if r[-1][0] != "COMPLETED":
        errors.append(f"job {jid} ended {r[-1][0]} ({r})")
    main = sum(1 for s, part in r if part == "main")
    prof = sum(1 for s, part in r if part == "profiling")
    if main > 1 or prof > 1:
        errors.append(f"job {jid} ran {prof} times in the profiler and {main} on main ({r})")
starts = {}
for line in open(f"{lab}/payload.log"):
    _, jid, t, part, node = line.split()
    starts.setdefault(jid, []).append(part)
for jid, parts in starts.items():
    if parts.count("main") > 1:
        errors.append(f"job {jid}'s payload ran {parts.count('main')} times on main")
# A main node wholly idle for idle_s seconds while a waiting job fits on it.
idle_since = {}
for line in open(f"{lab}/samples.txt"):
    p = line.split()
    t, smallest = int(p[0]), p[1]
    for kv in p[2:]:
        node, used = kv.split("=")
        if smallest != "none" and int(used) == 0 and int(smallest) <= 8:
            idle_since.setdefault(node, t)
            if t - idle_since[node] >= idle_s:
                errors.append(f"{node} idle for {t - idle_since[node]} s at t={t} while a "
                              f"{smallest}-GPU job waited")
                idle_since[node] = t + 10**6  # once per spell
        else:
            idle_since.pop(node, None)
rate = (t1 - t0) / elapsed if elapsed > 0 else 0
if rate < 0.7 * 1000 / tick_ms:
    errors.append(f"{rate:.2f} ticks a second over the burst, nominal {1000 / tick_ms:.0f}")
for e in errors[:20]:
    print("lucidd_burst: FAIL:", e, file=sys.stderr)
print(f"lucidd_burst: {len(runs)} jobs in {elapsed} s, {rate:.2f} ticks/s, "
      f"{sum(1 for r in runs.values() if any(part == 'profiling' for s, part in r))} profiled")
sys.exit(1 if errors else 0)
EOF

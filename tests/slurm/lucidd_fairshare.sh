#!/usr/bin/env bash
# lucidd_fairshare.sh — issue 23, "the site's priority kept": a light user
# behind a heavy user's backlog, under lucidd and under plain Slurm with the
# same fair-share configuration, the two labs side by side (same machine,
# same time, same load).  Judged from Slurm's records: the payloads' own
# start/end lines, sshare, sacct.
#   bash lucidd_fairshare.sh SOURCE_DIR BUILD_DIR
# Each lab: scripts/lab-cluster.sh's site profile (priority/multifactor,
# PriorityWeightFairshare 10000, PriorityCalcPeriod 1 minute, 7-day
# half-life, slurmdbd), 2 main nodes x 4 GPUs + 1 profiling node x 4 GPUs,
# untyped GPUs (bench/lab_run.sh starts it).  lucidd runs with its
# defaults (fair share on because Slurm weighs it), --profile-limit 10,
# --tick-ms 500; the other lab has no lucid plugins: plain Slurm.
#   1. User lucidlab1 (account alpha) submits 48 one-GPU jobs: 20 s each,
#      except the 17th to the 24th, 5 s (a backlog where jobs differ, as
#      they do at a site; six rounds on 8 GPUs).
#   2. Wait until sshare shows alpha's usage in the fair-share factors
#      (lucidlab1's FairShare below lucidlab2's: Slurm's minute-long
#      PriorityCalcPeriod) in both labs, then for a moment when all 8 main
#      GPUs of both labs run payloads and the soonest ends at least 4 s
#      later.
#   3. User lucidlab2 (account beta) submits 3 one-GPU jobs of 20 s to both
#      labs at that moment: the same workload in both.
# Checked, per lab: every job ran its payload to the end exactly once and
# sacct says COMPLETED; at the light user's submission sshare ranked beta
# above alpha.  Across the labs (issue 23's "Done when"): the light user's
# first start (submission to its first payload start, the profiler's run
# counts) under lucidd is no later than under plain Slurm plus two ticks
# (1 s); the light user's average JCT is no more than plain Slurm's plus a
# quarter of a round (5 s: a profiled job that missed the turnover it
# outranked everyone for waited a whole round, +12 s, before
# --profiler-yield); the average JCT of all 51 jobs under lucidd is no
# worse than plain Slurm's.  With every job of the backlog alike and
# longer than the profile limit (the test before 2026-12-07: 40 jobs of
# 20 s) lucid has nothing to gain and the two labs tie within their timing
# noise (fifteen runs from -3.0 to +3.3 %, the last one CI's failure at
# 88d4bc4), so a strict "no worse" was a coin toss there; here the short
# jobs end in lucid's profiler while plain Slurm runs them in turn on main
# (-6 to -8 % in the runs of docs/live.md "The site's priority").  About
# 2.5 minutes.
set -euo pipefail
SRC=$(cd "$1" && pwd)
BUILD=$(cd "$2" && pwd)
[[ $(id -u) == 0 ]] || { echo "lucidd_fairshare: needs root (the lab's users)"; exit 1; }
OUT=$(mktemp -d /tmp/lucid-fairshare-test.XXXXXX)
chmod 755 "$OUT" # the lab users read the labs under it
HEAVY=48 SECS=20 LIGHT=3 SHORT=5 SHORT_FROM=16 SHORT_N=8
source "$SRC/bench/lab_run.sh"

cleanup() {
    local m
    for m in lucid slurm; do
        [[ -f $OUT/$m/lucidd.pid ]] && kill "$(cat "$OUT/$m/lucidd.pid")" 2>/dev/null || true
        bash "$SRC/scripts/lab-cluster.sh" down "$OUT/$m" >/dev/null 2>&1 || true
    done
}
trap cleanup EXIT

# The labs come up one after the other (two MariaDBs bootstrapping at once
# on a loaded 2-core machine miss lab-cluster.sh's 30-s start bound); the
# workloads then run side by side, each in its own subshell.
up() { # lucid|slurm
    local lab=$OUT/$1
    lab_run_up "$lab" "$1" 2 4 --tick-ms "${TICK_MS:-500}" --profile-limit 10
    if [[ -n $LAB_RUN_LUCIDD ]]; then echo "$LAB_RUN_LUCIDD" >"$lab/lucidd.pid"; fi
    LAB_RUN_LUCIDD=""
}

run() { # lucid|slurm
    local mode=$1 lab=$OUT/$1
    export SLURM_CONF=$lab/etc/slurm.conf
    lab_run_payload "$lab"
    local i d
    for ((i = 0; i < HEAVY; i++)); do
        d=$SECS
        ((i >= SHORT_FROM && i < SHORT_FROM + SHORT_N)) && d=$SHORT
        lab_run_submit "$lab" lucidlab1 1 "$d"
        echo "$(tail -n 1 "$lab/jobs.txt" | cut -d' ' -f1) $d" >>"$lab/durations.txt"
    done
    # Slurm's fair-share factors take the heavy user's usage at its next
    # PriorityCalcPeriod (a minute): wait for sshare to say so.
    local deadline=$((SECONDS + 180)) fs
    while :; do
        fs=$(sshare -a -n -P -o User,FairShare 2>/dev/null | awk -F'|' '
            $1 == "lucidlab1" {a = $2} $1 == "lucidlab2" {b = $2}
            END {if (a != "" && b != "" && a + 0 < b + 0) print a, b}')
        [[ -n $fs ]] && break
        ((SECONDS < deadline)) || { echo "$mode: sshare never ranked lucidlab2 above lucidlab1" >&2; exit 1; }
        sleep 1
    done
    echo "$fs" >"$lab/fairshare.txt"
    # The light user's jobs go to both labs at the same moment (below): the
    # same workload in both, so that their JCTs compare.
    deadline=$((SECONDS + 240))
    until [[ -s $lab/light-submitted ]]; do
        ((SECONDS < deadline)) || { echo "$mode: the light user's jobs were never submitted" >&2; exit 1; }
        sleep 0.2
    done
    deadline=$((SECONDS + 400))
    until [[ -z $(squeue -h -r -o %A 2>/dev/null | head -1) ]]; do
        ((SECONDS < deadline)) || { echo "$mode: jobs left after 400 s" >&2; squeue -r >&2; exit 1; }
        sleep 1
    done
    # slurmdbd records a job's end a moment after squeue drops it: wait
    # until sacct shows no job still pending or running.
    deadline=$((SECONDS + 60))
    while :; do
        sacct -n -P -X -a -o JobID,State -S now-1days >"$lab/sacct.txt" # not just since midnight
        grep -qE '\|(PENDING|RUNNING|REQUEUED|COMPLETING)' "$lab/sacct.txt" || break
        ((SECONDS < deadline)) || { echo "$mode: sacct still shows jobs not ended after 60 s" >&2; break; }
        sleep 1
    done
}

# Whether every main GPU of both labs runs a payload and the soonest of
# those payloads ends at least 4 s later (from their own start lines): then
# under plain Slurm the light user waits those seconds for a GPU at least.
both_full() {
    python3 - "$OUT/lucid" "$OUT/slurm" <<'PYTHON'
import sys, time
for lab in sys.argv[1:3]:
    started, ended = {}, set()
    secs = dict(line.split() for line in open(f"{lab}/durations.txt"))
    for line in open(f"{lab}/payload.log"):
        kind, jid, t, part = line.split()
        if kind == "start" and part == "main":
            started[jid] = float(t)
        elif kind == "end":
            ended.add(jid)
    running = [t + float(secs[j]) for j, t in started.items() if j not in ended]
    soonest = min(running) - time.time() if running else 0
    if len(running) != 8 or soonest < 4:
        sys.exit(1)
PYTHON
}

light() { # lucid|slurm: the light user's jobs, and sshare at that moment
    local lab=$OUT/$1
    export SLURM_CONF=$lab/etc/slurm.conf FS_LOG=$lab/payload.log
    sshare -a -n -P -o Account,User,RawUsage,FairShare >"$lab/sshare-at-light.txt" 2>&1
    lab_run_submit "$lab" lucidlab2 "$LIGHT" "$SECS"
    tail -n "$LIGHT" "$lab/jobs.txt" | awk -v d="$SECS" '{print $1, d}' >>"$lab/durations.txt"
    date +%s.%N >"$lab/light-submitted"
}

up lucid
up slurm
run lucid >"$OUT/lucid.log" 2>&1 &
pl=$!
run slurm >"$OUT/slurm.log" 2>&1 &
ps=$!
deadline=$((SECONDS + 300))
until [[ -s $OUT/lucid/fairshare.txt && -s $OUT/slurm/fairshare.txt ]] && both_full; do
    if ((SECONDS >= deadline)) || ! kill -0 $pl 2>/dev/null || ! kill -0 $ps 2>/dev/null; then
        echo "lucidd_fairshare: never both labs ranked lucidlab2 first with every main GPU busy"
        break
    fi
    sleep 0.2
done
if ((SECONDS < deadline)); then
    light lucid &
    l1=$!
    light slurm &
    l2=$!
    wait $l1 $l2 || true
fi
rc=0
wait $pl || rc=1
wait $ps || rc=1
if ((rc)); then
    echo "lucidd_fairshare: a run failed:"
    tail -n 5 "$OUT/lucid.log" "$OUT/slurm.log"
    exit 1
fi

python3 - "$OUT" "$HEAVY" "$LIGHT" "$SECS" <<'EOF'
import statistics, sys
out, heavy, light_n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
bad, res = [], {}
for mode in ("lucid", "slurm"):
    lab = f"{out}/{mode}"
    jobs = {}
    for line in open(f"{lab}/jobs.txt"):
        jid, user, t = line.split()
        jobs[jid] = (user, float(t))
    if len(jobs) != heavy + light_n:
        bad.append(f"{mode}: {len(jobs)} jobs submitted, not {heavy + light_n}")
    first, ends = {}, {}
    for line in open(f"{lab}/payload.log"):
        kind, jid, t, _ = line.split()
        if kind == "start":
            first.setdefault(jid, float(t))
        else:
            ends.setdefault(jid, []).append(float(t))
    state = dict(l.strip().split("|")[:2] for l in open(f"{lab}/sacct.txt") if "|" in l)
    for j in jobs:
        if len(ends.get(j, [])) != 1:
            bad.append(f"{mode}: job {j} ran its payload to the end {len(ends.get(j, []))} times")
        if state.get(j) != "COMPLETED":
            bad.append(f"{mode}: job {j} is {state.get(j)} in sacct, not COMPLETED")
    if bad:
        continue
    light = [j for j, (u, _) in jobs.items() if u == "lucidlab2"]
    light_first = min(first[j] for j in light) - min(jobs[j][1] for j in light)
    jct = statistics.mean(ends[j][0] - jobs[j][1] for j in jobs)
    light_jct = statistics.mean(ends[j][0] - jobs[j][1] for j in light)
    secs = dict(l.split() for l in open(f"{lab}/durations.txt"))
    short = [j for j in jobs if float(secs[j]) < float(sys.argv[4])]
    short_jct = statistics.mean(ends[j][0] - jobs[j][1] for j in short)
    fs = open(f"{lab}/fairshare.txt").read().split()
    res[mode] = (light_first, jct, light_jct)
    print(f"{mode:5s}: light user's first start {light_first:5.1f} s, its avg JCT "
          f"{light_jct:5.1f} s; short jobs' avg JCT {short_jct:5.1f} s; avg JCT {jct:6.1f} s "
          f"(sshare FairShare before the light user's submission: lucidlab1 {fs[0]}, "
          f"lucidlab2 {fs[1]})")
if not bad:
    (lf, lj, ll), (sf, sj, sl) = res["lucid"], res["slurm"]
    if lf > sf + 1.0:
        bad.append(f"the light user's first start under lucidd, {lf:.1f} s, is later than plain "
                   f"Slurm's {sf:.1f} s plus two ticks")
    if ll > sl + 5.0:
        bad.append(f"the light user's avg JCT under lucidd, {ll:.1f} s, is over plain Slurm's "
                   f"{sl:.1f} s plus a quarter of a 20-s round")
    if lj > sj:
        bad.append(f"avg JCT under lucidd, {lj:.1f} s, is worse than plain Slurm's {sj:.1f} s "
                   f"(+{100 * (lj / sj - 1):.1f} %)")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
EOF
cleanup
rm -rf "$OUT" # kept only when a check failed

#!/usr/bin/env bash
# fairshare.sh — a light user behind a heavy user's backlog on the site lab,
# under lucidd and under plain Slurm with the same fair-share configuration
# (issue 23, "the site's priority kept").
#
#   bench/fairshare.sh BUILD_DIR [HEAVY_JOBS [SECONDS [DELAY]]]   (as root)
#
# The lab: scripts/lab-cluster.sh's site profile (priority/multifactor,
# PriorityWeightFairshare 10000, PriorityCalcPeriod 1 minute, half-life 7
# days; slurmdbd), 2 main nodes x 4 GPUs + 1 profiling node x 4 GPUs,
# untyped GPUs.  User lucidlab1 (account alpha) submits HEAVY_JOBS (default
# 40) one-GPU jobs of SECONDS (default 30) each; DELAY seconds later
# (default 75: past one PriorityCalcPeriod, so alpha's usage is in the
# fair-share factors) user lucidlab2 (account beta) submits 3 one-GPU jobs
# of SECONDS.  Every job asks --time=5.  Run 1: lucidd with its defaults
# (fair share on because Slurm weighs it; --profile-limit 10, --tick-ms
# 500).  Run 2: the same, the plugins not loaded (plain Slurm).  Printed
# per run, from the payloads' own lines and the submission times:
#   light first   seconds from the light user's submission to the first
#                 start of any of its jobs (the profiler's run counts)
#   light mean    mean over its 3 jobs of submission to first start
#   light done    mean over its 3 jobs of submission to the end of its run
#   avg JCT       mean over all jobs of submission to the end of the run
#                 that completed
# Results go to OUT (default /tmp/lucid-fairshare): one folder per run.
set -euo pipefail
BUILD=$(cd "$1" && pwd)
HEAVY=${2:-40} SECS=${3:-30} DELAY=${4:-75}
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/lucid-fairshare}
mkdir -p "$OUT"

source "$SRC/bench/lab_run.sh"

run() { # NAME lucid|slurm
    local name=$1 mode=$2 lab=$OUT/$1
    lab_run_up "$lab" "$mode" 2 4 --tick-ms 500 --profile-limit 10
    local sock=$LAB_RUN_SOCK
    lab_run_payload "$lab"
    local t0
    t0=$(date +%s)
    lab_run_submit "$lab" lucidlab1 "$HEAVY" "$SECS"
    sleep $((t0 + DELAY - $(date +%s)))
    lab_run_submit "$lab" lucidlab2 3 "$SECS"
    [[ $mode == lucid ]] && "$BUILD/lucid" queue --socket "$sock" --json >"$lab/queue-at-light.json" 2>/dev/null || true
    sshare -a -P -o Account,User,RawUsage,FairShare >"$lab/sshare-at-light.txt" 2>&1 || true
    local deadline=$((SECONDS + 900))
    until [[ -z $(squeue -h -r -o %A 2>/dev/null | head -1) ]]; do
        ((SECONDS < deadline)) || { echo "fairshare: $name did not end within 15 minutes" >&2; break; }
        sleep 2
    done
    lab_run_down "$lab"
    python3 - "$lab" "$name" <<'EOF'
import statistics, sys
lab, name = sys.argv[1], sys.argv[2]
jobs = {}
for line in open(f"{lab}/jobs.txt"):
    jid, user, t = line.split()
    jobs[jid] = (user, float(t))
first, end = {}, {}
for line in open(f"{lab}/payload.log"):
    kind, jid, t, _ = line.split()
    if kind == "start":
        first.setdefault(jid, float(t))
    else:
        end[jid] = float(t)
light = [j for j, (u, _) in jobs.items() if u == "lucidlab2"]
waits = [first[j] - jobs[j][1] for j in light if j in first]
light_first = min(first[j] for j in light if j in first) - min(jobs[j][1] for j in light)
done = [end[j] - jobs[j][1] for j in light if j in end]
jct = [end[j] - jobs[j][1] for j in jobs if j in end]
print(f"{name:6s} light first {light_first:6.1f} s  light mean {statistics.mean(waits):6.1f} s  "
      f"light done {statistics.mean(done):6.1f} s  avg JCT {statistics.mean(jct):6.1f} s  "
      f"({len(jct)}/{len(jobs)} ended)")
EOF
}

run lucid lucid
run slurm slurm

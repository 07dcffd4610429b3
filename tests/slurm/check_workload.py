#!/usr/bin/env python3
"""check_workload.py LAB_DIR PROFILE_LIMIT — the issue's conditions, checked
from the payloads' own reports (report.txt) and lucid's records (queue.json,
explain.json) after lucidd_workload.sh:
  - every job ran to completion exactly once (one `end` line), none failed;
    the one exception is the requeue race (docs/live.md): a profiler run
    whose script ended within 0.5 s before lucid's requeue reached it
    (`end` then `stop` of the same run) is requeued by Slurm all the same and
    runs again on main; such runs are counted and printed, not errors;
  - a job longer than the limit ends on main, unless its profiling run spans
    a slurmctld restart: lucid does not requeue a job slurmctld recovered for
    60 s after it starts (its "running" may be stale: docs/live.md), so such
    a job may finish in the profiler (counted and printed);
  - jobs shorter than the profiling limit finished in the profiler;
  - no GPU ever carried more than one unpacked job, and overlaps are exactly
    lucid's packed pairs (the packed job sees its partner's GPUs);
  - packed pairs follow Lucid's rules (same GPU count <= 8, sharing scores
    sum <= 2, newcomer priority <= 2 x partner's);
  - while packing was off, no job started on main ahead of a waiting job
    with a better (lower) lucid priority."""
import json
import sys
from collections import defaultdict

lab, limit = sys.argv[1], float(sys.argv[2])
errors = []

jobs = {}
for line in open(f"{lab}/jobs.txt"):
    jid, gpus, dur, minutes, util = line.split()
    jobs[int(jid)] = dict(gpus=int(gpus), dur=int(dur), util=int(util))

runs = defaultdict(list)  # job -> [(kind, node, partition, gpus, packed, t)]
for line in open(f"{lab}/report.txt"):
    kind, jid, node, part, cvd, packed, t = line.split()
    runs[int(jid)].append((kind, node, part, cvd, packed, float(t)))

queue = {j["job"]: j for j in json.load(open(f"{lab}/queue.json"))["jobs"]}
try:
    restarts = [float(x) for x in open(f"{lab}/ctld_restarts.txt").read().split()]
except OSError:
    restarts = []
recovered = []
explain = {}
for line in open(f"{lab}/explain.json"):
    if line.strip():
        e = json.loads(line)
        explain[e["job"]["job"]] = e

# 1. exactly once, final state
raced = []
for jid, spec in jobs.items():
    rs = sorted(runs[jid], key=lambda r: r[5])
    race = [a for a, b in zip(rs, rs[1:]) if a[0] == "end" and b[0] == "stop" and
            a[2] == "profiling" and b[5] - a[5] < 0.5]
    if race:
        raced.append(jid)
    ends = [r for r in rs if r[0] == "end" and r not in race]
    if len(ends) != 1:
        errors.append(f"job {jid}: {len(ends)} completed runs (want 1): {runs[jid]}")
    phase = queue.get(jid, {}).get("phase")
    if phase not in ("done", "done-in-profiler"):
        errors.append(f"job {jid}: lucid phase {phase} ({queue.get(jid, {}).get('reason')})")
    # 2. short jobs finish in the profiler
    if spec["dur"] < limit - 1 and spec["gpus"] <= 8:
        if phase != "done-in-profiler" or (ends and ends[0][2] != "profiling"):
            errors.append(f"job {jid}: {spec['dur']} s job did not finish in the profiler ({phase})")
    if spec["dur"] > limit + 1 and ends and ends[0][2] != "main":
        prof = [r for r in rs if r[2] == "profiling" and r[0] == "start"]
        # Profiled across a slurmctld restart: lucid leaves a job the new
        # slurmctld recovered to run out its grace.  Slurm may have started it
        # before the restart while its payload's first line came after it
        # (step launch took 0.45 s in an ASan run), so a start up to 2 s after
        # a restart counts as across it.
        if prof and any(prof[0][5] - 2.0 < t <= ends[0][5] for t in restarts):
            recovered.append(jid)
        else:
            errors.append(f"job {jid}: {spec['dur']} s job ended on {ends[0][2]}")
    main_starts = [r for r in runs[jid] if r[0] == "start" and r[2] == "main"]
    if len(main_starts) > 1:
        errors.append(f"job {jid}: started {len(main_starts)} times on main")
    # lucid's own count of starts on main agrees with the payloads'
    if jid in queue and queue[jid]["phase"] == "done" and queue[jid]["runs"] != len(main_starts):
        errors.append(f"job {jid}: lucid counted {queue[jid]['runs']} starts on main, "
                      f"the payload {len(main_starts)}")

# 3. GPU occupancy from the payloads' own reports: intervals per (node, gpu)
def expand(cvd):
    return [] if cvd == "none" else [int(x) for x in cvd.split(",")]

intervals = defaultdict(list)  # (node, gpu) -> [(t0, t1, job, packed)]
for jid, rs in runs.items():
    open_run = None
    for r in sorted(rs, key=lambda r: r[5]):
        if r[0] == "start":
            open_run = r
        elif open_run:
            for g in expand(open_run[3]):
                intervals[(open_run[1], g)].append((open_run[5], r[5], jid, open_run[4] != "no"))
            open_run = None
    if open_run:
        errors.append(f"job {jid}: a run on {open_run[1]} never reported its end")

partner = {j: q["packed_with"] for j, q in queue.items()}
pairs_seen = set()
for (node, gpu), ivs in intervals.items():
    ivs.sort()
    for i, a in enumerate(ivs):
        for b in ivs[i + 1:]:
            if b[0] >= a[1] - 0.05:  # 50 ms of slack for the end/start reports
                continue
            packed = [x for x in (a, b) if x[3]]
            if len(packed) != 1:
                errors.append(f"{node} GPU {gpu}: jobs {a[2]} and {b[2]} overlap unpacked")
                continue
            newcomer, host = (a, b) if a[3] else (b, a)
            pairs_seen.add((newcomer[2], host[2]))

# 4. Lucid's packing rules for every pair seen on the GPUs
def score(jid):
    return 0 if jobs[jid]["util"] < 30 else 1 if jobs[jid]["util"] < 60 else 2

for new, host in pairs_seen:
    pn, ph = queue[new], queue[host]
    if jobs[new]["gpus"] != jobs[host]["gpus"] or jobs[new]["gpus"] > 8:
        errors.append(f"pair {new}+{host}: GPU counts {jobs[new]['gpus']} and {jobs[host]['gpus']}")
    if score(new) + score(host) > 2:
        errors.append(f"pair {new}+{host}: sharing scores {score(new)}+{score(host)} > 2")
    if pn["priority"] > 2 * ph["priority"] + 1e-6:
        errors.append(f"pair {new}+{host}: priority {pn['priority']} > 2 x {ph['priority']}")

# 5. strict priority order on main while packing was off
entered, started = {}, {}
for jid, e in explain.items():
    for p in e["phases"]:
        if p["phase"] == "main-queue":
            entered[jid] = p["at"]  # the latest entry
    for d in e["decisions"]:
        if d["action"] in ("start", "pack"):
            started[jid] = (d["at"], "packing=off" in d["target"], d["action"] == "pack")
for b, (tb, off, packed) in started.items():
    if not off or packed:
        continue
    for a, (ta, _, _) in started.items():
        if a == b or a not in entered:
            continue
        if queue[a]["priority"] < queue[b]["priority"] and entered[a] < tb < ta:
            errors.append(f"job {b} (priority {queue[b]['priority']:.0f}) started at {tb} "
                          f"while job {a} (priority {queue[a]['priority']:.0f}) waited until {ta}")

in_profiler = sum(1 for q in queue.values() if q["phase"] == "done-in-profiler")
print(f"check_workload: {len(jobs)} jobs, {in_profiler} finished in the profiler, "
      f"{len(pairs_seen)} packed pairs, {len(started)} main starts, "
      f"{len(raced)} requeue races {raced}, "
      f"{len(recovered)} profiled across a slurmctld restart {recovered}")
for e in errors[:40]:
    print("check_workload: " + e, file=sys.stderr)
sys.exit(1 if errors else 0)

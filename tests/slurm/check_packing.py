#!/usr/bin/env python3
"""Judges tests/slurm/lucidd_packing.sh (issue 24) from the payloads' own
reports (report.txt: which GPU device files each run could open, what
CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS and LUCID_PACKED_GPUS said), Slurm's
accounting (sacct.txt: sacct --duplicates -X JobID|Partition|State|AllocTRES),
lucid's queue (queue.json) and both trace imports of the run.
Usage: check_packing.py LAB"""
import csv
import json
import sys

lab = sys.argv[1]
errors = []


def err(msg):
    errors.append(msg)


def expand(text):
    """'0-2,5' -> [0, 1, 2, 5]; '' -> []."""
    out = []
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


jobs = {}  # id -> (role, gpus)
with open(lab + "/jobs.txt") as f:
    for line in f:
        jid, role, gpus = line.split()
        jobs[jid] = (role, int(gpus))
role_id = {role: jid for jid, (role, _) in jobs.items()}

runs = {}  # (id, partition) -> fields of its run line
with open(lab + "/report.txt") as f:
    for line in f:
        words = line.split()
        if words[0] != "run":
            continue
        run = {"node": words[3]}
        for word in words[4:]:
            key, _, value = word.partition("=")
            run[key] = value
        key = (words[1], words[2])
        if key in runs:
            err("job %s ran twice on %s" % key)
        runs[key] = run

queue = {str(j["job"]): j for j in json.load(open(lab + "/queue.json"))["jobs"]}

# Every job: a profiling run and a main run; an unpacked run opens exactly
# the GPUs Slurm gave it, seen as 0..n-1 inside its device cgroup.
for jid, (role, gpus) in sorted(jobs.items()):
    for part in ("profiling", "main"):
        run = runs.get((jid, part))
        if run is None:
            err("%s (job %s): no %s run reported" % (role, jid, part))
            continue
        own = list(range(gpus))
        if run["cvd"] != ",".join(map(str, own)):
            err("%s %s run: CUDA_VISIBLE_DEVICES=%s, want %s" % (role, part, run["cvd"], own))
        if run["packed"]:
            continue
        given = expand(run["jobgpus"])
        if len(given) != gpus:
            err("%s %s run: Slurm gave GPUs %s, asked %d" % (role, part, given, gpus))
        if expand(run["open"]) != given:
            err("%s %s run on %s: opened %s, given %s" % (role, part, run["node"], run["open"], given))

# The pairs: N<size> packed onto P<size>, sharing exactly its GPUs.
for size in (4, 2, 1):
    newcomer, partner = role_id["N%d" % size], role_id["P%d" % size]
    q = queue.get(newcomer, {})
    if str(q.get("packed_with")) != partner:
        err("N%d (job %s) packed with %s, want P%d (job %s); lucid: %s" %
            (size, newcomer, q.get("packed_with"), size, partner, q.get("reason")))
        continue
    mine, theirs = runs.get((newcomer, "main")), runs.get((partner, "main"))
    if not mine or not theirs:
        continue
    shared = expand(theirs["jobgpus"])
    if mine["node"] != theirs["node"]:
        err("N%d ran on %s, its partner on %s" % (size, mine["node"], theirs["node"]))
    if mine["jobgpus"]:
        err("N%d packed run was given GPUs %s by Slurm" % (size, mine["jobgpus"]))
    if expand(mine["packed"]) != shared or expand(mine["open"]) != shared:
        err("N%d packed run: LUCID_PACKED_GPUS=%s, opened %s; its partner holds %s" %
            (size, mine["packed"], mine["open"], shared))
    print("check_packing: N%d (job %s) packed with P%d on %s GPUs %s: opened %s, sees %s" %
          (size, newcomer, size, mine["node"], theirs["jobgpus"], mine["open"], mine["cvd"]))

# R: refused packing (its memory with any partner's exceeds one GPU), ran on
# GPUs of its own that no running job held.
r = role_id["R"]
if queue.get(r, {}).get("packed_with"):
    err("R (job %s) was packed with %s" % (r, queue[r]["packed_with"]))
mine = runs.get((r, "main"))
if mine and not mine["packed"]:
    held = set()
    for jid, (role, _) in jobs.items():
        other = runs.get((jid, "main"))
        if role.startswith("P") and other and other["node"] == mine["node"]:
            held |= set(expand(other["jobgpus"]))
    if held & set(expand(mine["jobgpus"])):
        err("R ran on GPUs %s of %s, held by a partner" % (mine["jobgpus"], mine["node"]))

# sacct: each run's GPUs; a packed run holds gres/lucidshare=N instead of
# gres/gpu, billed as N GPUs (TRESBillingWeights CPU=1, GRES/gpu=8,
# GRES/lucidshare=8).
seen = set()
with open(lab + "/sacct.txt") as f:
    for line in f:
        jid, part, state, alloc = line.rstrip("\n").split("|")
        if jid not in jobs or not alloc:
            continue
        role, gpus = jobs[jid]
        tres = dict(item.split("=", 1) for item in alloc.split(","))
        packed = role.startswith("N") and part == "main"
        key = "gres/lucidshare" if packed else "gres/gpu"
        other = "gres/gpu" if packed else "gres/lucidshare"
        if tres.get(key) != str(gpus) or other in tres:
            err("sacct %s %s record (job %s): AllocTRES %s, want %s=%d and no %s" %
                (role, part, jid, alloc, key, gpus, other))
        if int(tres.get("billing", -1)) != int(tres.get("cpu", 0)) + 8 * gpus:
            err("sacct %s %s record: billing %s for %s CPUs and %d GPUs" %
                (role, part, tres.get("billing"), tres.get("cpu"), gpus))
        if role == "N1" and part == "main" and not state.startswith("CANCELLED"):
            err("sacct N1 main record (job %s): %s, want CANCELLED (its owner's scancel)" %
                (jid, state))
        if role != "N1" and part == "main" and state != "COMPLETED":
            err("sacct %s main record (job %s): %s, want COMPLETED" % (role, jid, state))
        seen.add((jid, part))
for jid, (role, _) in jobs.items():
    for part in ("profiling", "main"):
        if (jid, part) not in seen:
            err("sacct has no %s record of %s (job %s)" % (part, role, jid))

# Both imports give each job its GPUs (a packed job's: the shared ones).
for name in ("import-lucidd", "import-sacct"):
    with open("%s/%s/trace.csv" % (lab, name)) as f:
        got = {row["job_id"]: int(row["gpu_num"]) for row in csv.DictReader(f)}
    for jid, (role, gpus) in jobs.items():
        if got.get(jid) != gpus:
            err("%s: %s (job %s) has %s GPUs, want %d" % (name, role, jid, got.get(jid), gpus))

if errors:
    for e in errors:
        print("check_packing: " + e)
    sys.exit(1)
print("check_packing: %d jobs, %d runs: every run opened exactly its GPUs; 3 pairs (4, 2, 1 GPUs) "
      "shared their partners' GPUs; sacct counts them as gres/lucidshare" % (len(jobs), len(runs)))

#!/usr/bin/env python3
"""Compares `lucid trace import --format sacct` of lab.sacct with what the lab
cluster ran: GPUs as submitted (lab/submitted.txt: the sbatch requests),
start/end from the jobcomp/filetxt log (lab/jobcomp.txt, Slurm's own record,
independent of scontrol_to_sacct.py), submit offsets from the jobcomp log.
Jobs expected: those that started, ended, and asked for GPUs.
Usage: check_lab.py LAB_DIR TRACE.csv; exit 0 when every job matches."""
import csv
import datetime
import re
import sys

lab, trace = sys.argv[1], sys.argv[2]


def when(s):
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S")


asked = {}
for line in open(lab + "/submitted.txt"):
    parts = line.split()
    asked[parts[0]] = int(parts[3])
array_of = {}  # raw job id -> "A_T"
for line in open(lab + "/scontrol.txt"):
    kv = dict(re.findall(r"(\S+?)=(\S*)", line))
    if kv.get("ArrayTaskId"):
        array_of[kv["JobId"]] = (kv["ArrayJobId"], int(kv["ArrayTaskId"]))
expected = {}
for line in open(lab + "/jobcomp.txt"):
    kv = dict(re.findall(r"(\S+?)=(\S*)", line))
    raw = kv["JobId"]
    if kv["NodeList"] in ("", "(null)"):
        continue  # never started
    if raw in array_of:
        base, task = array_of[raw]
        jid, gpus = int(base) * 1000000 + task, asked[base]
    else:
        jid, gpus = int(raw), asked[raw]
    if gpus == 0:
        continue
    start, end, submit = when(kv["StartTime"]), when(kv["EndTime"]), when(kv["SubmitTime"])
    expected[jid] = (gpus, int((end - start).total_seconds()), submit)
rows = list(csv.DictReader(open(trace)))
origin = min(datetime.datetime.strptime(r["submit_datetime"], "%Y-%m-%d %H:%M:%S") for r in rows)
got = {int(r["job_id"]): (int(r["gpu_num"]), int(r["duration"]),
                          origin + datetime.timedelta(seconds=int(r["submit_time"])))
       for r in rows}
if got != expected:
    for k in sorted(set(got) | set(expected)):
        if got.get(k) != expected.get(k):
            print("job %d: converted %s, lab ran %s" % (k, got.get(k), expected.get(k)))
    sys.exit(1)
print("%d jobs match the lab's record" % len(got))

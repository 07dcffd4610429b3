#!/usr/bin/env python3
"""Writes the lab's `scontrol show job -o` records (lab/scontrol.txt) in the
schema of the documented command

  TZ=UTC sacct --parsable2 --allocations \
    -o JobID,User,Account,Partition,AllocTRES,ReqTRES,Submit,Start,End,Elapsed,State,NNodes

The lab cluster has no slurmdbd, so real `sacct` there reads only the
jobcomp/filetxt log (`sacct --completion`, lab/completion.txt), which has no
TRES at all.  scontrol's records of the same jobs carry the GPUs
(TresPerNode=gres:gpu:N per node, TresPerJob=gres:gpu:N per job) and the
times; this script writes them as sacct would for an accounting database:
array tasks as JOB_TASK, AllocTRES with gres/gpu (empty for a job that never
started), Start "None" for a job cancelled while pending, End "Unknown" and
State RUNNING for a job still running, "CANCELLED by UID" as sacct prints it.

Usage: scontrol_to_sacct.py lab/scontrol.txt > lab.sacct"""
import re
import sys

FIELDS = "JobID,User,Account,Partition,AllocTRES,ReqTRES,Submit,Start,End,Elapsed,State,NNodes"


def hms(seconds):
    d, rest = divmod(seconds, 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    return ("%d-" % d if d else "") + "%02d:%02d:%02d" % (h, m, s)


def to_seconds(t):
    d = 0
    if "-" in t:
        d, t = t.split("-")
    h, m, s = (int(x) for x in t.split(":"))
    return int(d) * 86400 + h * 3600 + m * 60 + s


def main():
    print(FIELDS.replace(",", "|"))
    for line in open(sys.argv[1]):
        kv = dict(re.findall(r"(\S+?)=(\S*)", line))
        if "JobId" not in kv:
            continue
        job = kv["JobId"]
        if kv.get("ArrayJobId") and kv.get("ArrayTaskId"):
            job = "%s_%s" % (kv["ArrayJobId"], kv["ArrayTaskId"])
        nodes = int(kv["NumNodes"])
        gpus = 0
        m = re.match(r"gres:gpu(?::[^:]+)?:(\d+)", kv.get("TresPerNode", ""))
        if m:
            gpus = int(m.group(1)) * nodes
        m = re.match(r"gres:gpu(?::[^:]+)?:(\d+)", kv.get("TresPerJob", ""))
        if m:
            gpus = int(m.group(1))
        tres = re.sub(r",mem=[^,]*", "", kv["TRES"])
        if gpus:
            tres += ",gres/gpu=%d" % gpus
        ran = kv.get("NodeList", "") not in ("", "(null)")
        state = kv["JobState"]
        start, end = kv["StartTime"], kv["EndTime"]
        elapsed = hms(to_seconds(kv["RunTime"]))
        if state == "CANCELLED":
            state = "CANCELLED by 0"
        if not ran:
            start = "None"
        if kv["JobState"] == "RUNNING":
            end = "Unknown"
        user = kv["UserId"].split("(")[0]
        print("|".join([job, user, kv["Account"], kv["Partition"], tres if ran else "", tres,
                        kv["SubmitTime"], start, end, elapsed, state,
                        str(nodes) if ran else "0"]))


main()

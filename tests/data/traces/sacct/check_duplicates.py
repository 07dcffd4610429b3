#!/usr/bin/env python3
"""Checks the join of a requeued job's records: `lucid trace import --format
sacct` of `sacct --duplicates` output against the records themselves, read
here independently of lucid.  The job was moved the way lucidd moves a
profiled job (requeue-hold on the profiling partition, partition main,
release), so Slurm keeps two records for it.
Expected for JOB: submit_datetime = the earliest Submit, first_start -
submit_time = the first Start - that Submit (the wait), duration = the sum
of End - Start, earlier_runs = the first record's run, state = the last
record's, VC main.
Usage: check_duplicates.py DUPLICATES.sacct LAST.sacct TRACE.csv JOB
(LAST.sacct: plain sacct of the same job, without --duplicates)."""
import csv
import datetime
import sys

dup_path, last_path, trace_path, job = sys.argv[1:5]


def when(s):
    return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S")


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f, delimiter="|"))


def fail(msg):
    print("check_duplicates: " + msg)
    sys.exit(1)


records = sorted((r for r in rows(dup_path) if r["JobID"] == job), key=lambda r: r["Submit"])
if len(records) != 2:
    fail("job %s: %d records in sacct --duplicates, expected 2" % (job, len(records)))
prof, main = records
if (prof["Partition"], main["Partition"]) != ("profiling", "main"):
    fail("job %s: partitions %s, %s" % (job, prof["Partition"], main["Partition"]))
last = [r for r in rows(last_path) if r["JobID"] == job]
# Plain sacct: only the main record, submitted at the requeue (the user's
# wait would start there).
if len(last) != 1 or last[0]["Submit"] != main["Submit"] or main["Submit"] <= prof["Submit"]:
    fail("job %s: plain sacct shows %s" % (job, last))
runs = [int((when(r["End"]) - when(r["Start"])).total_seconds()) for r in records]
wait = int((when(prof["Start"]) - when(prof["Submit"])).total_seconds())
with open(trace_path) as f:
    got = [r for r in csv.DictReader(f) if r["job_id"] == job]
if len(got) != 1:
    fail("job %s: %d rows in the trace" % (job, len(got)))
row = got[0]
have = {
    "submit_datetime": row["submit_datetime"],
    "wait": int(row["first_start"]) - int(row["submit_time"]),
    "duration": int(row["duration"]),
    "earlier_runs": int(row["earlier_runs"]),
    "state": row["state"],
    "vc": row["vc"],
}
want = {
    "submit_datetime": prof["Submit"].replace("T", " "),
    "wait": wait,
    "duration": sum(runs),
    "earlier_runs": runs[0],
    "state": main["State"].split(" ")[0],
    "vc": "main",
}
for k, v in want.items():
    if have[k] != v:
        fail("job %s: %s is %s, expected %s (records %s)" % (job, k, have[k], v, records))
print("check_duplicates: job %s: submitted %s, waited %d s, runs %s = %d s"
      % (job, prof["Submit"], wait, runs, sum(runs)))

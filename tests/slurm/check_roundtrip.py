#!/usr/bin/env python3
"""Judges tests/slurm/lucidd_roundtrip.sh: the same lucid-managed run
imported from lucidd's state database (from-lucidd/trace.csv) and from
`sacct --duplicates` (from-sacct/trace.csv), against each other and against
Slurm's raw records, read here independently of lucid: each sacct record
(dup.sacct), plain sacct (last.sacct), the payloads' own start/stop/end
lines (report.txt) and the wall clock around each sbatch (submitted.txt).
Usage: check_roundtrip.py LAB LONG SHORT WIDE"""
import csv
import datetime
import sys

lab, long_job, short_job, wide_job = sys.argv[1:5]
JOBS = (long_job, short_job, wide_job)
# Tolerance between the two imports and between them and the payloads, in
# seconds.  The two sides time the move differently: lucidd ends the
# profiling run at its `moving` phase (the tick that decides and sends the
# requeue), Slurm's profiling record ends when slurmctld carries it out; both
# are whole seconds and ticks are 250 ms, so they differ by about 1 s.
TOL = 2
# A payload's run lies inside Slurm's record of it: it starts after Start
# (prolog, cgroup, batch script: up to 1.2 s on the loaded 2-core lab host)
# and stops before End (epilog); Start and End are whole seconds (up to 1 s
# each way); lucidd's `moving` second precedes the requeue's SIGTERM.  So
# per run the imports may count up to LAG s more than the payload and up to
# LESS s less, and a payload starts 0 to LAG s after the imports' start.
LAG, LESS = 3, 2
errors = []


def err(msg):
    errors.append(msg)


def epoch(s):
    """sacct's or the trace's UTC time as epoch seconds."""
    s = s.replace("T", " ")
    return int(datetime.datetime.strptime(s, "%Y-%m-%d %H:%M:%S")
               .replace(tzinfo=datetime.timezone.utc).timestamp())


def rows(path, **kw):
    with open(path) as f:
        return list(csv.DictReader(f, **kw))


def trace(name):
    got = {}
    for r in rows("%s/%s/trace.csv" % (lab, name)):
        got[r["job_id"]] = {
            "submit": r["submit_datetime"],
            "submit_s": epoch(r["submit_datetime"]),
            "wait": int(r["first_start"]) - int(r["submit_time"]),
            "duration": int(r["duration"]),
            "earlier_runs": int(r["earlier_runs"]),
            "state": r["state"],
            "vc": r["vc"],
        }
    return got


side = {"lucidd": trace("from-lucidd"), "sacct": trace("from-sacct")}
for name, got in side.items():
    if sorted(got) != sorted(JOBS):
        err("%s import: jobs %s, expected %s" % (name, sorted(got), sorted(JOBS)))
if errors:
    print("\n".join("check_roundtrip: " + e for e in errors), file=sys.stderr)
    sys.exit(1)

records = {j: sorted((r for r in rows(lab + "/dup.sacct", delimiter="|") if r["JobID"] == j),
                     key=lambda r: r["Submit"]) for j in JOBS}
plain = {j: [r for r in rows(lab + "/last.sacct", delimiter="|") if r["JobID"] == j] for j in JOBS}
submitted = {}
for line in open(lab + "/submitted.txt"):
    _, _, job, before, after = line.split()
    submitted[job] = (float(before), float(after))
runs = {j: [] for j in JOBS}  # [partition, start, stop-or-end, how it ended]
for line in open(lab + "/report.txt"):
    what, job, part, at = line.split()
    if job not in runs:
        continue
    if what == "start":
        runs[job].append([part, float(at), None, None])
    elif runs[job] and runs[job][-1][2] is None:
        runs[job][-1][2:] = [float(at), what]

want_parts = {long_job: ["profiling", "main"], short_job: ["profiling"],
              wide_job: ["profiling", "main"]}
for j in JOBS:
    lu, sa, recs = side["lucidd"][j], side["sacct"][j], records[j]
    tag = "job %s" % j
    # Slurm's own records: the runs lucidd caused.
    if [r["Partition"] for r in recs] != want_parts[j]:
        err("%s: sacct --duplicates records on %s, expected %s"
            % (tag, [r["Partition"] for r in recs], want_parts[j]))
        continue
    if [r[0] for r in runs[j]] != want_parts[j] or any(r[2] is None for r in runs[j]):
        err("%s: payload runs %s, expected one finished run on each of %s"
            % (tag, runs[j], want_parts[j]))
        continue
    first_submit = epoch(recs[0]["Submit"])
    before, after = submitted[j]
    # Submit: identical on both sides, the first record's, inside sbatch.
    if lu["submit"] != sa["submit"]:
        err("%s: submit %s from lucidd, %s from sacct" % (tag, lu["submit"], sa["submit"]))
    if sa["submit_s"] != first_submit:
        err("%s: submit %s, first sacct record's Submit %s" % (tag, sa["submit"], recs[0]["Submit"]))
    if not int(before) <= first_submit <= after:
        err("%s: first Submit %s outside sbatch's call (%.3f .. %.3f)"
            % (tag, recs[0]["Submit"], before, after))
    # Wait, duration, earlier runs: the two sides within TOL.
    for k in ("wait", "duration", "earlier_runs"):
        if abs(lu[k] - sa[k]) > TOL:
            err("%s: %s %d s from lucidd, %d s from sacct (tolerance %d s)" % (tag, k, lu[k], sa[k], TOL))
    # ... and Slurm's raw records: the first record's Start, the payloads' runs.
    if sa["wait"] != epoch(recs[0]["Start"]) - first_submit:
        err("%s: sacct import waits %d s, first record %s -> %s"
            % (tag, sa["wait"], recs[0]["Submit"], recs[0]["Start"]))
    payload_wait = runs[j][0][1] - first_submit
    payload_runs = [stop - start for _, start, stop, _ in runs[j]]

    def inside(imported, payload):  # the payload's runs within the imported seconds
        return -LESS * len(payload) <= imported - sum(payload) <= LAG * len(payload)

    for name, got in side.items():
        g = got[j]
        if not 0 <= payload_wait - g["wait"] <= LAG:
            err("%s: %s import waits %d s, the payload started %.1f s after Submit"
                % (tag, name, g["wait"], payload_wait))
        if not inside(g["duration"], payload_runs):
            err("%s: %s import's duration %d s, the payload ran %s s"
                % (tag, name, g["duration"], ["%.1f" % r for r in payload_runs]))
        if not inside(g["earlier_runs"], payload_runs[:-1]):
            err("%s: %s import's earlier_runs %d s, the payload's runs before the last %s s"
                % (tag, name, g["earlier_runs"], ["%.1f" % r for r in payload_runs[:-1]]))
    want_state = "done-in-profiler" if j == short_job else "done"
    if lu["state"] != want_state or sa["state"] != "COMPLETED":
        err("%s: states %s (lucidd), %s (sacct), expected %s, COMPLETED"
            % (tag, lu["state"], sa["state"], want_state))
    if sa["vc"] != want_parts[j][-1]:
        err("%s: sacct import's VC %s, expected %s" % (tag, sa["vc"], want_parts[j][-1]))
    # Why the join is needed: plain sacct has the main record only, whose
    # Submit is lucidd's requeue, after the user's real submission.
    if len(recs) == 2:
        p = plain[j]
        if len(p) != 1 or p[0]["Partition"] != "main" or p[0]["Submit"] != recs[1]["Submit"]:
            err("%s: plain sacct shows %s, expected only the main record %s" % (tag, p, recs[1]))
        elif not epoch(p[0]["Submit"]) > after:
            err("%s: plain sacct's Submit %s is not after the real submission (%.3f)"
                % (tag, p[0]["Submit"], after))

# WIDE waited behind LONG: in the profiler (two of its 8 GPUs held) and on
# main (all 8 in use by LONG's main run); its wait between runs is in
# neither its wait nor its duration.
if not errors:
    lr, wr = records[long_job], records[wide_job]
    if epoch(wr[1]["Start"]) < epoch(lr[1]["End"]):
        err("job %s started on main at %s, before job %s's main run ended (%s): it did not wait"
            % (wide_job, wr[1]["Start"], long_job, lr[1]["End"]))
    if epoch(wr[0]["Start"]) <= epoch(wr[0]["Submit"]):
        err("job %s did not wait for the profiler (Submit %s, Start %s)"
            % (wide_job, wr[0]["Submit"], wr[0]["Start"]))
for e in errors:
    print("check_roundtrip: " + e, file=sys.stderr)
if errors:
    sys.exit(1)
for j in JOBS:
    lu, sa = side["lucidd"][j], side["sacct"][j]
    print("check_roundtrip: job %s: submit %s; wait %d/%d s, duration %d/%d s, earlier_runs %d/%d s "
          "(lucidd/sacct)" % (j, sa["submit"], lu["wait"], sa["wait"], lu["duration"], sa["duration"],
                              lu["earlier_runs"], sa["earlier_runs"]))

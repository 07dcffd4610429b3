#!/usr/bin/env python3
"""Where start-time predictions miss: joins a run's eta-<policy>.csv (the
predictions made at queueing) with jobs-<policy>.csv and prints, for the jobs
that waited more than 60 s, coverage (P10 <= start <= P90), the shares that
started before P10 (early) and after P90 (late), the median relative error
and the median of predicted / actual wait, over all jobs and by packed or
not, GPU count, wait, what ended when the job started (a job of its own
user or of another that was running at the prediction, none), week of
submission (from the first job's; online models change over the weeks)
and VC (the 8 with most such jobs).

  eta_misses.py OUTDIR POLICY

docs/backfill.md quotes it for Lucid on Venus."""
import csv
import statistics
import sys

out, policy = sys.argv[1], sys.argv[2]
jobs = {r["job_id"]: r for r in csv.DictReader(open(f"{out}/jobs-{policy}.csv"))}
ended_at = {}  # (vc, end time) -> main-cluster jobs that ended then
for j in jobs.values():
    if j["finished_in_profiler"] != "1" and j["end_time"]:
        ended_at.setdefault((j["vc"], int(j["end_time"])), []).append(j)


def freed_by(r, at, start):
    """Whose end the job started at: a job running at the prediction that
    ended at the start (or a second before), of the job's user or not."""
    me = jobs[r["job_id"]]
    ended = [j for t in (start, start - 1) for j in ended_at.get((r["vc"], t), [])
             if int(j["start_time"]) <= at]
    if not ended:
        return "none"
    return "own user" if any(j["user"] == me["user"] for j in ended) else "other user"


rows = []
predictions = list(csv.DictReader(open(f"{out}/eta-{policy}.csv")))
first = min((int(r["submit_time"]) for r in predictions), default=0)
for r in predictions:
    if r.get("when", "queued") != "queued":
        continue
    at, start = int(r["predicted_at"]), int(r["start_time"])
    wait = start - at
    if wait <= 60:
        continue
    p10, p50, p90 = int(r["eta_p10"]), int(r["eta_p50"]), int(r["eta_p90"])
    rows.append({"wait": wait, "inside": p10 <= start <= p90, "early": start < p10,
                 "late": start > p90, "packed": jobs[r["job_id"]]["packed_with"] != "",
                 "gpus": int(r["gpu_num"]), "vc": r["vc"], "freed": freed_by(r, at, start),
                 "week": (int(r["submit_time"]) - first) // (7 * 86400),
                 "error": abs(p50 - at - wait) / wait, "ratio": (p50 - at) / wait})


def line(name, rs):
    if not rs:
        return
    n = len(rs)
    share = lambda k: sum(r[k] for r in rs) / n
    print(f"{name:16s} n={n:6d} coverage={share('inside'):.3f} early={share('early'):.3f} "
          f"late={share('late'):.3f} median_error={statistics.median(r['error'] for r in rs):.3f} "
          f"median_pred/actual={statistics.median(r['ratio'] for r in rs):.3f}")


line("all", rows)
line("packed", [r for r in rows if r["packed"]])
line("not packed", [r for r in rows if not r["packed"]])
for lo, hi in [(1, 1), (2, 4), (5, 8), (9, 1 << 30)]:
    line(f"gpus {lo}-{hi if hi < 1 << 30 else ''}", [r for r in rows if lo <= r["gpus"] <= hi])
for lo, hi in [(60, 300), (300, 1800), (1800, 7200), (7200, 1 << 62)]:
    line(f"wait {lo}-{hi if hi < 1 << 62 else ''}", [r for r in rows if lo < r["wait"] <= hi])
for who in ("own user", "other user", "none"):
    line(f"freed: {who}", [r for r in rows if r["freed"] == who])
for week in sorted({r["week"] for r in rows}):
    line(f"week {week}", [r for r in rows if r["week"] == week])
vcs = sorted({r["vc"] for r in rows}, key=lambda v: -sum(r["vc"] == v for r in rows))
for vc in vcs[:8]:
    line(f"vc {vc}", [r for r in rows if r["vc"] == vc])

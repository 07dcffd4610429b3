#!/usr/bin/env python3
"""bench/replay_error.py TRACE JOBS [ENDS] — a simulated schedule against the history it replays.

TRACE is an imported trace.csv (its first_start: when the job first started
in the history), JOBS a simulator's jobs-POLICY.csv for it.  Prints the
share of jobs whose simulated start is within 2 / 10 / 60 s of the real
one, the error's median, p90 and max, and the average JCT simulated
against the history's (issue 26's fidelity measures).  The history's JCT
is first_start + duration - submit_time, exact for a job of one run; a job
of several (a lucid site's profiling run, then its main run) also waited
between them, so ENDS (job_id,end_time in the trace's seconds) gives the
real ends where the source has them (lucidd's state: bench/lab_history.sh
MODE=lucid).  Then, per user and GPU count, the mean signed error of the
starts (simulated minus real: where the replay runs ahead or behind)."""
import csv
import statistics
import sys

real = {r["job_id"]: r for r in csv.DictReader(open(sys.argv[1]))}
sim = {r["job_id"]: r for r in csv.DictReader(open(sys.argv[2]))}
ends = {}
if len(sys.argv) > 3:
    ends = {r["job_id"]: int(r["end_time"]) for r in csv.DictReader(open(sys.argv[3]))}
err, jct_real, jct_sim = [], [], []
signed = {}
for jid, r in real.items():
    s = sim.get(jid)
    if not s or not s.get("start_time") or not r.get("first_start"):
        continue
    first = int(r["first_start"])
    err.append(abs(int(s["start_time"]) - first))
    signed.setdefault((r.get("user", ""), int(r["gpu_num"])), []).append(int(s["start_time"]) - first)
    end = ends.get(jid, first + int(r["duration"]))
    jct_real.append(end - int(r["submit_time"]))
    jct_sim.append(int(s["end_time"]) - int(s["submit_time"]))
if not err:
    sys.exit("replay_error: no job in both files")
n = len(err)
q = sorted(err)
within = [100.0 * sum(1 for e in err if e <= w) / n for w in (2, 10, 60)]
a, b = statistics.mean(jct_sim), statistics.mean(jct_real)
print(f"replay of {n} jobs: starts within 2 / 10 / 60 s: {within[0]:.0f} / {within[1]:.0f} / "
      f"{within[2]:.0f} %; error median {statistics.median(q):.0f} s, p90 {q[int(0.9 * (n - 1))]} s, "
      f"max {q[-1]} s; avg JCT simulated {a:.1f} s against {b:.1f} s ({100 * (a / b - 1):+.1f} %)")
for (user, gpus), e in sorted(signed.items()):
    print(f"  {user or '-'} {gpus} GPU: {len(e)} jobs, start simulated - real: mean {statistics.mean(e):+.0f} s, "
          f"min {min(e):+d}, max {max(e):+d}")

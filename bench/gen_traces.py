#!/usr/bin/env python3
"""Synthetic inputs for bench/import.sh, seeded (same arguments, same bytes).

  gen_traces.py philly JOBS OUT   cluster_job_log in the published schema,
                                  pretty-printed like the original (indent 4),
                                  1-3 attempts of 1-4 hosts x 1-8 GPUs
  gen_traces.py philly-full JOBS OUT
                                  the same schema at the real log's size: 117,325
                                  jobs made ~6.6 GB by retries (1-119 attempts,
                                  mean 60) of 1-4 hosts, as the full trace has
  gen_traces.py sacct ROWS OUT    the documented sacct command's output: 1 in 4
                                  jobs followed by .batch/.extern step rows
                                  (as without --allocations), arrays, typed GRES"""
import json
import random
import sys

kind, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = random.Random(12)
BASE = 1502064000  # 2017-08-07


def stamp(t, sep=" "):
    import time
    return time.strftime("%Y-%m-%d" + sep + "%H:%M:%S", time.gmtime(t))


if kind in ("philly", "philly-full"):
    full = kind == "philly-full"
    with open(out, "w") as f:
        f.write("[\n")
        for i in range(n):
            t = BASE + i * 100 + rng.randrange(100)
            attempts, start = [], t + rng.randrange(600)
            tries = rng.randrange(1, 120) if full else rng.choice([1, 1, 1, 2, 3])
            for _ in range(tries):
                end = start + (rng.randrange(1, 100000 // tries + 2) if full else rng.randrange(1, 100000))
                hosts = rng.choice([1, 1, 2, 4]) if full else rng.choice([1, 1, 1, 2, 4])
                gpus = rng.choice([1, 2, 4, 8]) if hosts == 1 else 8
                attempts.append({"start_time": stamp(start), "end_time": stamp(end),
                                 "detail": [{"ip": "m%d" % rng.randrange(550),
                                             "gpus": ["gpu%d" % g for g in range(gpus)]}
                                            for _ in range(hosts)]})
                start = end + rng.randrange(1000)
            job = {"status": rng.choice(["Pass", "Pass", "Killed", "Failed"]),
                   "vc": "vc%02d" % rng.randrange(14),
                   "jobid": "application_1506638472019_%d" % i, "attempts": attempts,
                   "submitted_time": stamp(t), "user": "%06x" % rng.randrange(1 << 24)}
            text = json.dumps(job, indent=4)
            f.write("    " + text.replace("\n", "\n    ") + (",\n" if i + 1 < n else "\n"))
        f.write("]\n")
elif kind == "sacct":
    with open(out, "w") as f:
        f.write("JobID|User|Account|Partition|AllocTRES|ReqTRES|Submit|Start|End|Elapsed|"
                "State|NNodes\n")
        rows, job = 0, 1000
        while rows < n:
            job += 1
            t = BASE + job * 3
            start = t + rng.randrange(3600)
            end = start + rng.randrange(1, 86400)
            gpus = rng.choice([0, 1, 1, 2, 4, 8, 16])
            tres = "billing=8,cpu=8,%snode=%d" % (
                "gres/gpu:a100=%d,gres/gpu=%d," % (gpus, gpus) if gpus else "", max(1, gpus // 8))
            jid = str(job) if rng.random() < 0.9 else "%d_%d" % (job, rng.randrange(100))
            e = end - start
            f.write("%s|u%03d|acct%02d|p%d|%s|%s|%s|%s|%s|%02d:%02d:%02d|%s|%d\n" % (
                jid, rng.randrange(500), rng.randrange(30), rng.randrange(8), tres, tres,
                stamp(t, "T"), stamp(start, "T"), stamp(end, "T"), e // 3600, e // 60 % 60,
                e % 60, rng.choice(["COMPLETED", "FAILED", "CANCELLED by 1", "TIMEOUT"]),
                max(1, gpus // 8)))
            rows += 1
            if rows < n and rng.random() < 0.25:
                for step in ("batch", "extern"):
                    f.write("%s.%s|||p0|%s||%s|%s|%s|00:00:01|COMPLETED|1\n" % (
                        jid, step, tres, stamp(start, "T"), stamp(start, "T"), stamp(end, "T")))
                    rows += 1
else:
    sys.exit("usage: gen_traces.py philly|philly-full|sacct N OUT")

#!/usr/bin/env python3
"""Adds users' time limits to a trace.csv that has none, seeded (same input,
same bytes): the input for bench/backfill.sh's comparison of backfill on
learned estimates against backfill on users' limits, where no time-limited
GPU trace is at hand.

  time_limits.py TRACE.csv OUT.csv

The model is the two documented traits of real requests: users over-ask by a
factor spread between 1 and 5 (Mu'alem & Feitelson, IEEE TPDS 2001: the
"f-model"), and pick round values, a few of them covering most jobs
(Tsafrir, Etsion & Feitelson, JSSPP 2005).  So limit = the smallest round
value (5 min .. 7 days) >= duration x U(1, 5); a job longer than 7 days gets
its duration rounded up to a whole day."""
import csv
import random
import sys

ROUND = [300, 600, 900, 1800, 3600, 7200, 4 * 3600, 8 * 3600, 12 * 3600, 86400, 2 * 86400,
         3 * 86400, 7 * 86400]

src, out = sys.argv[1], sys.argv[2]
rng = random.Random(13)
with open(src, newline="") as f, open(out, "w", newline="") as g:
    r = csv.reader(f)
    w = csv.writer(g, lineterminator="\n")
    header = next(r)
    if "time_limit" in header:
        sys.exit(f"{src}: already has a time_limit column")
    dur = header.index("duration")
    w.writerow(header + ["time_limit"])
    for row in r:
        asked = int(row[dur]) * rng.uniform(1, 5)
        limit = next((v for v in ROUND if v >= asked), None)
        if limit is None:
            limit = -(-int(row[dur]) // 86400) * 86400
        w.writerow(row + [limit])

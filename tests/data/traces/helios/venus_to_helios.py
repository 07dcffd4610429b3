#!/usr/bin/env python3
"""Writes Lucid's bundled Venus trace (data/venus-sept/trace.csv) in
HeliosData's cluster_log.csv schema, the way the public HeliosData release
stores it: calendar submit times, no workload columns.

Usage: venus_to_helios.py TRACE.csv OUT.csv [ROWS]

The bundled trace's submit_time counts seconds from 2020-04-01 00:02:31 (the
first Venus job of the full HeliosData log, spec section 3); its
submit_datetime column is the same instant, checked here row by row.
HeliosData's start_time, end_time and queue are not in the bundled trace:
they are left empty (lucid trace import --format helios reads `duration`)."""
import csv
import datetime
import sys

ORIGIN = datetime.datetime(2020, 4, 1, 0, 2, 31)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    limit = int(sys.argv[3]) if len(sys.argv) > 3 else None
    with open(src, newline="") as f, open(dst, "w", newline="") as g:
        out = csv.writer(g, lineterminator="\n")
        out.writerow(["job_id", "user", "vc", "jobname", "gpu_num", "cpu_num", "node_num",
                      "state", "submit_time", "start_time", "end_time", "duration", "queue"])
        for k, row in enumerate(csv.DictReader(f)):
            if limit is not None and k >= limit:
                break
            when = ORIGIN + datetime.timedelta(seconds=int(row["submit_time"]))
            stamp = when.strftime("%Y-%m-%d %H:%M:%S")
            if row.get("submit_datetime") and row["submit_datetime"] != stamp:
                sys.exit("%s: job %s: submit_datetime %s != %s" %
                         (src, row["job_id"], row["submit_datetime"], stamp))
            gpus = int(row["gpu_num"])
            out.writerow([row["job_id"], row["user"], row["vc"], row["jobname"], gpus,
                          row["cpu_num"], (gpus + 7) // 8, row["state"], stamp, "", "",
                          row["duration"], ""])


main()

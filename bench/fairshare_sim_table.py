#!/usr/bin/env python3
"""bench/fairshare_sim_table.py OUT [NAME=LABEL ...] — docs/fairshare.md's table from bench/fairshare_sim.sh's runs.

Reads OUT/results/<trace>-w{0,2}/summary.csv (the traces named NAME=LABEL,
else fairshare_sim.sh's four) and prints one row per trace
and policy: avg JCT, avg queue, Jain's index across users, the largest
finish-time fairness and the share of jobs above 1, with fairshare_weight
0 and 2 side by side."""
import csv
import sys

out = sys.argv[1]
POLICIES = ["fifo", "sjf", "srtf", "qssf", "tiresias", "lucid"]
TRACES = [("venus", "Venus (reference semantics)"), ("venus-fixed", "Venus (fixed semantics)"),
          ("itp", "ITP, 10 clusters (no users)"), ("synth", "trace synth 10k (Venus users)")]
if len(sys.argv) > 2:
    TRACES = [tuple(a.split("=", 1)) for a in sys.argv[2:]]


def all_rows(name):
    with open(f"{out}/results/{name}/summary.csv", newline="") as f:
        return {r["policy"]: r for r in csv.DictReader(f) if r["vc"] == "all"}


def cell(v, fmt):
    return "-" if v in ("", None) else fmt.format(float(v))


def pair(a, b, key, fmt):
    return f"{cell(a[key], fmt)} / {cell(b[key], fmt)}"


print("| trace | policy | avg JCT (s) | avg queue (s) | Jain (users) | max rho | jobs rho > 1 |")
print("|---|---|---|---|---|---|---|")
for name, label in TRACES:
    off, on = all_rows(f"{name}-w0"), all_rows(f"{name}-w2")
    for p in POLICIES:
        a, b = off[p], on[p]
        print(f"| {label} | {p} | {pair(a, b, 'avg_jct', '{:,.0f}')} | "
              f"{pair(a, b, 'avg_queue', '{:,.0f}')} | {pair(a, b, 'jain_users', '{:.3f}')} | "
              f"{pair(a, b, 'ftf_max', '{:,.1f}')} | {pair(a, b, 'ftf_over1', '{:.1%}')} |")

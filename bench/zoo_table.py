#!/usr/bin/env python3
"""bench/zoo_table.py OUT COMMIT — docs/zoo.md from bench/zoo.sh's runs.

Reads OUT/results/{venus,itp,synth-100000,synth-1000000}/summary.csv and prints the
table: one row per trace (ITP: the whole trace and each cluster) and
policy, and for each trace whether Lucid's avg JCT is at most the better
of QSSF's and Tiresias' (the non-oracle baselines)."""
import csv
import sys

out, commit = sys.argv[1], sys.argv[2]
POLICIES = ["fifo", "sjf", "srtf", "qssf", "tiresias", "lucid"]
TRACES = [("venus", "Venus Sept. 2020 (fixed semantics)"), ("itp", "ITP, 10 clusters"),
          ("synth-100000", "trace synth 100k jobs, 1,000 nodes"),
          ("synth-1000000", "trace synth 1M jobs, 10,000 nodes")]


def rows(name):
    with open(f"{out}/results/{name}/summary.csv", newline="") as f:
        return list(csv.DictReader(f))


def cell(v, fmt):
    return "-" if v in ("", None) else fmt.format(float(v))


def line(label, r):
    return ("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
        label, r["policy"], cell(r["avg_jct"], "{:,.0f}"), cell(r["avg_delay"], "{:,.0f}"),
        cell(r["avg_queue"], "{:,.0f}"), cell(r["profiler_gpu_s"], "{:,.0f}"),
        cell(r["gap"], "{:.1%}"), cell(r["bsld_mean"], "{:.2f}"), cell(r["jain_users"], "{:.3f}"),
        cell(r["jain_vcs"], "{:.3f}"), r.get("inputs", "") or ""))


def verdict(by_policy):
    lucid = float(by_policy["lucid"]["avg_jct"])
    best = min(float(by_policy[p]["avg_jct"]) for p in ("qssf", "tiresias"))
    who = min(("qssf", "tiresias"), key=lambda p: float(by_policy[p]["avg_jct"]))
    sign = "ahead of" if lucid <= best else "behind"
    return f"Lucid {lucid:,.0f} s: {sign} {who} ({best:,.0f} s) by {abs(best - lucid):,.0f} s ({abs(best - lucid) / best:.1%})"


print("# The zoo: every policy on every trace the repository can make or hold\n")
print(f"Command: `bench/zoo.sh {out}` (simulator at {commit}). Metrics from each run's")
print("summary.csv (docs/semantics.md: delay = JCT - duration; queue = submission to the start")
print("of the run that completes, discarded work included; profiler GPU-s = Lucid's profiling")
print("runs). SJF and SRTF know true durations: bounds, not goals. QSSF and Lucid use the")
print("trace's estimates (Venus: the authors' files; synth: its noisy estimates; ITP: Lucid's")
print("online duration model, which QSSF reuses). `inputs` flags what is not the trace's own.\n")
print("| trace | policy | avg JCT | avg delay | avg queue | profiler GPU-s | gap to floor | bounded slowdown | Jain (users) | Jain (VCs) | inputs |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
verdicts = []
for name, label in TRACES:
    summary = rows(name)
    alls = {r["policy"]: r for r in summary if r["vc"] == "all"}
    for p in POLICIES:
        if p in alls:
            print(line(f"**{label}**", alls[p]))
    verdicts.append((label, verdict(alls)))
    if name == "itp":
        vcs = sorted({r["vc"] for r in summary if r["vc"] != "all"})
        for vc in vcs:
            by = {r["policy"]: r for r in summary if r["vc"] == vc}
            for p in POLICIES:
                if p in by:
                    print(line(f"ITP {vc}", by[p]))
            verdicts.append((f"ITP {vc}", verdict(by)))
print("\nLucid against the better of QSSF and Tiresias (avg JCT):\n")
for label, v in verdicts:
    print(f"- {label}: {v}")

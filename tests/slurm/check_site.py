#!/usr/bin/env python3
"""check_site.py — the sampler and the judge of lucidd_site.sh (issue 22).

  check_site.py sample SOCK OUT STOP   check_operator.py's sampler, every 500 ms
  check_site.py check LAB LAG          the assertions below; exit 1 on any failure

Read from Slurm's own records: LAB/payload.log (each run's start line, written
by the payload inside its cgroup: node, CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS),
LAB/sacct.txt (`sacct -X --duplicates`: every run of every job, its state,
nodes and AllocTRES), and lucid's queue snapshots.  Roles: lucidd_site.sh.

  ended      every job's last run COMPLETED (R: after a NODE_FAIL run);
  resources  C4's main run not on n1 (n1 had 2 free CPUs while the CPU job
             ran there); X ran on a node alone, with all 4 GPUs; M1 and M2
             (12000 MB each of 16000) never on one node at the same time;
  types      v100 jobs only on n3/n4, a100 jobs only on n1/n2/p1;
  counts     the GPUs Slurm allocated to each job's last run (AllocTRES
             gres/gpu) equal the GPUs lucid counted (snapshots), and X got 4;
  passed     G0, CPU and HET never held by lucid (phase handed-back);
  maint      A4's main run not on n1 (reserved before its 10-minute limit ends);
  drained    D1 was not profiled (it ran once, on main);
  failure    R ran twice, the second time not on the killed node; lucid's
             record keeps the cut run as sacct --duplicates does (its first
             main start, its seconds within 3 s, the last run's start);
  releasing  no job showed `releasing` in lucid's queue for more than LAG s.
"""
import datetime
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_operator import cmd_sample, expand_nodes  # noqa: E402

A100 = {"n1", "n2", "p1"}
V100 = {"n3", "n4"}
TYPED = {"V2": V100, "V4N2": V100, "M1": V100, "M2": V100, "R": V100,
         "A2": A100, "GA2": A100, "C4": A100, "A4": A100}


class Check:
    def __init__(self, lab, lag):
        self.lab, self.lag, self.failures = lab, float(lag), []
        self.role_of, self.id_of = {}, {}
        with open(os.path.join(lab, "jobs.txt")) as f:
            for line in f:
                jid, role = line.split()
                self.role_of[int(jid)] = role
                self.id_of[role] = int(jid)
        self.starts = {}  # id -> [(t, node, cuda, gpus)]
        self.ends = {}
        with open(os.path.join(lab, "payload.log")) as f:
            for line in f:
                p = line.split()
                if p[0] == "start":
                    kv = dict(x.split("=", 1) for x in p[3:])
                    self.starts.setdefault(int(p[1]), []).append(
                        (float(p[2]), kv.get("node", ""), kv.get("cuda", ""), kv.get("gpus", "")))
                elif p[0] == "end":
                    self.ends.setdefault(int(p[1]), []).append(float(p[2]))
        self.runs = {}  # id -> [dict] in sacct order (oldest first)
        with open(os.path.join(lab, "sacct.txt")) as f:
            for line in f:
                p = line.rstrip("\n").split("|")
                if len(p) < 8:
                    continue
                m = re.match(r"(\d+)", p[0])
                jid = int(m.group(1))
                if "+" in p[0] and not p[0].endswith("+0"):
                    jid = -jid  # a hetjob's second component
                g = re.search(r"gres/gpu=(\d+)", p[4])
                self.runs.setdefault(jid, []).append(
                    {"state": p[2].split()[0], "nodes": expand_nodes(p[3]),
                     "gpus": int(g.group(1)) if g else 0, "start": p[5], "end": p[6],
                     "part": p[7]})
        self.snaps = []
        path = os.path.join(lab, "snapshots.jsonl")
        if os.path.exists(path):
            with open(path) as f:
                self.snaps = [json.loads(l) for l in f if l.strip()]
        self.killed = ""
        if os.path.exists(os.path.join(lab, "killed-node")):
            with open(os.path.join(lab, "killed-node")) as f:
                self.killed = f.read().strip()

    def err(self, area, msg):
        self.failures.append(f"{area}: {msg}")

    def main_nodes(self, role):
        """Nodes of each run of the job, from the payload lines."""
        return [s[1] for s in self.starts.get(self.id_of.get(role, -1), [])]

    def last_run(self, role):
        r = self.runs.get(self.id_of[role])
        return r[-1] if r else None

    def check_ended(self):
        for role, jid in self.id_of.items():
            last = self.last_run(role)
            if not last:
                self.err("ended", f"{role} ({jid}) has no accounting record")
            elif last["state"] != "COMPLETED":
                self.err("ended", f"{role} ({jid}) ended {last['state']}")
            if role != "HOG" and not self.starts.get(jid):
                self.err("ended", f"{role} ({jid}) never started its payload")

    def check_resources(self):
        hog = self.starts.get(self.id_of["HOG"], [])
        c4 = self.starts.get(self.id_of["C4"], [])
        if hog and c4 and c4[-1][1] == "n1":
            self.err("resources", f"C4 ran its last run on n1, which had 2 free CPUs ({c4})")
        x = self.starts.get(self.id_of["X"], [])
        if x:
            t, node, cuda, _ = x[-1]
            # X's run: to its payload's end line (a job may start there the
            # moment X ends), else its first 5.5 s.
            x_ends = self.ends.get(self.id_of["X"], [])
            x_end = x_ends[len(x) - 1] if len(x_ends) >= len(x) else t + 5.5
            if len(cuda.split(",")) != 4:
                self.err("resources", f"X (--exclusive) saw CUDA_VISIBLE_DEVICES={cuda!r}, want 4 GPUs")
            for jid, starts in self.starts.items():
                if jid == self.id_of["X"]:
                    continue
                for i, (t0, n0, _, _) in enumerate(starts):
                    ends = self.ends.get(jid, [])
                    t1 = ends[i] if i < len(ends) else float("inf")
                    if n0 == node and t0 < x_end and t1 > t:
                        self.err("resources", f"job {jid} ran on {node} with X (--exclusive)")
        m1 = self.starts.get(self.id_of["M1"], [])
        m2 = self.starts.get(self.id_of["M2"], [])
        e1 = self.ends.get(self.id_of["M1"], [])
        if m1 and m2 and e1 and m1[-1][1] == m2[-1][1] and m2[-1][0] < e1[-1] and m1[-1][0] < m2[-1][0]:
            self.err("resources", f"M1 and M2 (12000 MB each) ran on {m1[-1][1]} together")

    def check_types(self):
        for role, allowed in TYPED.items():
            for t, node, _, _ in self.starts.get(self.id_of.get(role, -1), []):
                if node not in allowed:
                    self.err("types", f"{role} ran on {node}, not a node of its type {sorted(allowed)}")

    def lucid_gpus(self, jid):
        for s in reversed(self.snaps):
            for j in s.get("lucid") or []:
                if j["job"] == jid:
                    return j["gpus"]
        return None

    def check_counts(self):
        for role, jid in self.id_of.items():
            if role in ("HOG", "G0", "CPU", "HET"):
                continue
            last = self.last_run(role)
            counted = self.lucid_gpus(jid)
            if last is None or counted is None:
                self.err("counts", f"{role} ({jid}): no record to compare (sacct {last}, lucid {counted})")
            elif last["gpus"] != counted:
                self.err("counts", f"{role} ({jid}): Slurm allocated {last['gpus']} GPUs, lucid counted {counted}")
        last = self.last_run("X") if "X" in self.id_of else None
        if last and last["gpus"] != 4:
            self.err("counts", f"X: Slurm allocated {last['gpus']} GPUs, want 4 (a whole node)")

    def check_passed(self):
        for role in ("G0", "CPU", "HET"):
            jid = self.id_of[role]
            phases = {j["phase"] for s in self.snaps for j in (s.get("lucid") or []) if j["job"] == jid}
            if phases - {"handed-back", "failed", "done"}:
                self.err("passed", f"{role} ({jid}) was in lucid's phases {sorted(phases)}")

    def check_maint(self):
        nodes = self.main_nodes("A4")
        if nodes and nodes[-1] == "n1":
            self.err("maint", "A4 ran on n1, reserved for maintenance before its time limit ends")

    def check_drained(self):
        runs = self.starts.get(self.id_of["D1"], [])
        if len(runs) != 1 or runs[0][1] == "p1":
            self.err("drained", f"D1 (submitted while p1 was drained) ran {runs}; want once, on main")

    def check_failure(self):
        runs = self.starts.get(self.id_of["R"], [])
        if len(runs) < 2:
            self.err("failure", f"R ran {len(runs)} time(s); want a second run after its node failed")
        elif runs[-1][1] == self.killed:
            self.err("failure", f"R ran again on {self.killed}, whose slurmd was killed")
        # lucid's history of R agrees with Slurm's accounting: its first
        # main start is the cut run's Start, and the seconds of that run are
        # its End - Start (lucid ends it at Slurm's end time when Slurm gives
        # one, else at the tick that saw the requeue: within 3 s).
        path = os.path.join(self.lab, "R.json")
        main = [r for r in self.runs.get(self.id_of["R"], []) if r["part"] == "main"]
        if not os.path.exists(path) or len(main) < 2:
            self.err("failure", f"R: {len(main)} main record(s) in sacct, lucid's record "
                     f"{'present' if os.path.exists(path) else 'missing'}; want 2 and present")
            return
        with open(path) as f:
            jobs = json.load(f).get("jobs", [])
        rec = next((j for j in jobs if j.get("job") == self.id_of["R"]), None)
        if rec is None:
            self.err("failure", "lucid queue --all --json -j R does not list R")
            return

        def stamp(text):
            return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S").timestamp()
        first, cut = main[0], stamp(main[0]["end"]) - stamp(main[0]["start"])
        if rec.get("main_first_start") != int(stamp(first["start"])):
            self.err("failure", f"R: lucid's main_first_start {rec.get('main_first_start')}, "
                     f"sacct's first main Start {first['start']} ({int(stamp(first['start']))})")
        if abs((rec.get("main_earlier_s") or 0) - cut) > 3:
            self.err("failure", f"R: lucid's main_earlier_s {rec.get('main_earlier_s')}, "
                     f"sacct's cut run {cut:.0f} s ({first['start']} to {first['end']})")
        if rec.get("main_start") != int(stamp(main[-1]["start"])):
            self.err("failure", f"R: lucid's main_start {rec.get('main_start')}, sacct's last "
                     f"main Start {main[-1]['start']}")

    def check_releasing(self):
        since = {}
        worst = {}
        for s in self.snaps:
            now = s["t0"]
            seen = set()
            for j in s.get("lucid") or []:
                if j["phase"] == "releasing":
                    seen.add(j["job"])
                    since.setdefault(j["job"], now)
                    worst[j["job"]] = max(worst.get(j["job"], 0), now - since[j["job"]])
            for jid in list(since):
                if jid not in seen:
                    del since[jid]
        for jid, w in worst.items():
            if w > self.lag:
                self.err("releasing", f"job {jid} ({self.role_of.get(jid, '?')}) was releasing for {w:.0f} s")

    def run(self):
        with open(os.path.join(self.lab, "phases")) as f:
            phases = set(f.read().split())
        checks = [self.check_ended, self.check_types, self.check_counts, self.check_releasing]
        for phase, check in (("1", self.check_resources), ("2", self.check_passed),
                             ("3", self.check_maint), ("4", self.check_drained),
                             ("5", self.check_failure)):
            if phase in phases:
                checks.append(check)
        for check in checks:
            check()
        with open(os.path.join(self.lab, "errors.txt"), "a") as f:
            for line in self.failures:
                f.write(line + "\n")
                print("lucidd_site: FAIL:", line, file=sys.stderr)
        return 1 if self.failures else 0


def main(argv):
    if len(argv) == 5 and argv[1] == "sample":
        cmd_sample(argv[2], argv[3], argv[4], 500)
        return 0
    if len(argv) == 4 and argv[1] == "check":
        return Check(argv[2], argv[3]).run()
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""check_backfill.py — the helper and the judge of lucidd_backfill.sh.

  check_backfill.py reserved SOCK JOB   exit 0 when lucid shows JOB's reservation
  check_backfill.py sample SOCK OUT STOP MS
        check_operator.py's sampler: every MS ms until file STOP exists, one
        JSON line with `lucid queue --all --json` (reserved_at,
        reserved_nodes, start_p10/p50/p90, reason...) and squeue's states
  check_backfill.py check LAB LAG
        the assertions below, from Slurm's jobcomp log (LAB/jobcomp.txt), the
        snapshots and `lucid explain`; each failure is a line in
        LAB/errors.txt.  LAG: seconds allowed between the moment a job may
        start and Slurm's recorded StartTime.

Assertions (roles as in lucidd_backfill.sh):
  ran        every job ran exactly once and COMPLETED;
  reserved   L held a reservation (reserved_at > 0) on both main nodes while
             it waited, from before any G/D job started;
  honoured   L's StartTime <= the first reserved_at + LAG, <= the P90 shown
             with that reservation + LAG, and <= the last end of the jobs
             that started before the reservation + LAG (no later job held
             its GPUs: none delayed it);
  backfill   G1-G3 started before L; D1-D2 did not start before L; a G's
             lucid reason said "backfilled" and a D's "would delay the
             reservation of job L" in some snapshot;
  explain    `lucid explain L` while it waited said "reserved for it from".
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_operator import ask, cmd_sample, expand_nodes, parse_time, read_jobcomp  # noqa: E402


def cmd_reserved(sock_path, job):
    for j in ask(sock_path, {"cmd": "queue", "all": True})["jobs"]:
        if j["job"] == int(job) and (j.get("reserved_at") or 0) > 0:
            return 0
    return 1


class Check:
    def __init__(self, lab, lag):
        self.lab, self.lag = lab, float(lag)
        self.errors = []
        self.role = {}
        for line in open(os.path.join(lab, "jobs.txt")):
            jid, role = line.split()[:2]
            self.role[role] = int(jid)
        self.recs = read_jobcomp(os.path.join(lab, "jobcomp.txt"))
        self.snaps = []
        path = os.path.join(lab, "snapshots.jsonl")
        if os.path.exists(path):
            for line in open(path):
                try:
                    self.snaps.append(json.loads(line))
                except ValueError:
                    pass  # the sampler killed mid-line

    def err(self, area, msg):
        self.errors.append(f"[{area}] {msg}")

    def start(self, role):
        r = self.recs.get(self.role.get(role, -1), [])
        return parse_time(r[0]["StartTime"]) if r else None

    def end(self, role):
        r = self.recs.get(self.role.get(role, -1), [])
        return parse_time(r[0]["EndTime"]) if r else None

    def check_ran(self):
        for role, jid in sorted(self.role.items()):
            r = self.recs.get(jid, [])
            states = [x.get("JobState") for x in r]
            if states != ["COMPLETED"]:
                self.err("ran", f"job {jid} ({role}): jobcomp states {states}, want one COMPLETED")

    def lucid_of(self, snap, jid):
        for j in snap.get("lucid") or []:
            if j.get("job") == jid:
                return j
        return None

    def check_reservation(self):
        L = self.role["L"]
        first = None
        for s in self.snaps:
            j = self.lucid_of(s, L)
            pending = any(r["id"] == L and r["state"] == "PENDING" for r in s.get("slurm") or [])
            if j and (j.get("reserved_at") or 0) > 0 and pending:
                first = (s, j)
                break
        if first is None:
            self.err("reserved", f"no snapshot shows job {L} (L) pending with a reservation")
            return
        snap, j = first
        nodes = sorted(expand_nodes(j.get("reserved_nodes", "")))
        if nodes != ["n1", "n2"]:
            self.err("reserved", f"job {L} reserved on {j.get('reserved_nodes')!r}, want n1,n2 (16 GPUs)")
        # The moment the script saw the reservation (check_backfill.py
        # reserved); the jobs submitted before it are the ones L waits for.
        t_res, submitted = None, {}
        for line in open(os.path.join(self.lab, "events.txt")):
            f = line.split()
            if len(f) >= 4 and f[1] == "submit":
                submitted[f[3]] = float(f[0])
            elif len(f) >= 3 and f[1] == "reserved" and t_res is None:
                t_res = float(f[0])
        if t_res is None:
            self.err("reserved", "events.txt has no reservation event")
            return
        lstart = self.start("L")
        if lstart is None:
            return
        at, p90 = j["reserved_at"], j.get("start_p90") or 0
        if lstart > at + self.lag:
            self.err("honoured", f"L started at {lstart:.0f}, {lstart - at:.0f}s after its reservation ({at})")
        if not p90:
            self.err("honoured", f"job {L} had no P90 start estimate with its reservation")
        elif lstart > p90 + self.lag:
            self.err("honoured", f"L started at {lstart:.0f}, {lstart - p90:.0f}s after its P90 ({p90})")
        # L must start within LAG of the last job submitted before its
        # reservation ending: a later job holding its GPUs longer delayed it.
        before = [r for r in self.role if r != "L" and submitted.get(r, t_res) < t_res]
        if not before:
            self.err("honoured", "no job was running before L's reservation (the workload did not block L)")
            return
        ends = [self.end(r) for r in before]
        if None in ends:
            self.err("honoured", f"no end recorded for one of {sorted(before)}")
            return
        last = max(ends)
        if lstart > last + self.lag:
            self.err("honoured", f"L started {lstart - last:.0f}s after the last job it waited for "
                     f"({', '.join(sorted(before))}) ended: delayed by a later job")
        t_res = snap["t0"]
        self.summary = (f"L reserved at +{at - t_res:.0f}s on {j.get('reserved_nodes')}, P90 "
                        f"+{p90 - t_res:.0f}s; started +{lstart - t_res:.0f}s, "
                        f"{lstart - last:.0f}s after {', '.join(sorted(before))} ended")

    def check_backfill(self):
        lstart, L = self.start("L"), self.role["L"]
        if lstart is None:
            self.err("backfill", f"job {L} (L) never started")
            return
        for role in ("G1", "G2", "G3"):
            st = self.start(role)
            if st is None or st >= lstart:
                self.err("backfill", f"{role} (fits before the reservation) started at {st}, not before L ({lstart:.0f})")
        for role in ("D1", "D2"):
            st = self.start(role)
            if st is not None and st < lstart:
                self.err("backfill", f"{role} (would delay L) started at {st:.0f}, before L ({lstart:.0f})")
        reasons = {role: set() for role in ("G1", "G2", "G3", "D1", "D2")}
        for s in self.snaps:
            for role in reasons:
                j = self.lucid_of(s, self.role[role])
                if j and j.get("reason"):
                    reasons[role].add(j["reason"])
        if not any("backfilled" in r for role in ("G1", "G2", "G3") for r in reasons[role]):
            self.err("backfill", f"no G job's lucid reason said backfilled: {sorted(reasons['G1'])[:3]}")
        want = f"would delay the reservation of job {L}"
        if not any(want in r for role in ("D1", "D2") for r in reasons[role]):
            self.err("backfill", f"no D job's lucid reason said {want!r}: {sorted(reasons['D1'])[:3]}")

    def check_explain(self):
        text = open(os.path.join(self.lab, "explain-L.txt"), errors="replace").read()
        if "reserved for it from" not in text:
            self.err("explain", f"lucid explain L lacks 'reserved for it from': {text[:300]!r}")

    def run(self):
        self.summary = ""
        for f in (self.check_ran, self.check_reservation, self.check_backfill, self.check_explain):
            try:
                f()
            except Exception as e:  # a broken record is a failure, not a crash
                self.err(f.__name__, f"{type(e).__name__}: {e}")
        with open(os.path.join(self.lab, "errors.txt"), "a") as out:
            for e in self.errors:
                out.write(e + "\n")
        if self.summary:
            print(f"check_backfill: {self.summary}")
        return 1 if self.errors else 0


def main(argv):
    cmd, args = (argv[1], argv[2:]) if len(argv) > 1 else ("", [])
    if cmd == "reserved" and len(args) == 2:
        return cmd_reserved(*args)
    if cmd == "sample" and len(args) == 4:
        return cmd_sample(*args)
    if cmd == "check" and len(args) == 2:
        return Check(*args).run()
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

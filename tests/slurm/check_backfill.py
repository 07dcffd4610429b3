#!/usr/bin/env python3
"""check_backfill.py — the helper and the judge of lucidd_backfill.sh.

  check_backfill.py reserved SOCK JOB   exit 0 when lucid shows JOB's reservation
  check_backfill.py reason SOCK JOB TEXT  exit 0 when JOB's lucid reason contains TEXT
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
             submitted before the reservation that started before L, + LAG
             (no later job held its GPUs: none delayed it);
  min-gpus   M (8 GPUs, under the minimum of 9) never showed a reservation
             and its reason said "only jobs of 9 GPUs or more hold one";
             S1/S2 (submitted after it) ran at the same time, before it
             (with a reservation for M, one would have waited), a reason saying
             "ahead of job M, which holds no reservation";
  kept       lucidd was SIGKILLed and restarted while L waited, with options
             that refuse a new reservation to L (its reserved start was more
             than the new window away, its GPUs fewer than the new minimum);
             every snapshot that lists L waiting (lucid's main-queue, Slurm's
             PENDING), from its first reservation on, shows one (excused: the restarted lucidd's publication of
             its stored jobs before its first tick, ticks <= 1), after the
             restart at the first reserved_at (+- LAG) on the same nodes;
             L ran on exactly those nodes, no later than that + LAG; the
             log never says L's reservation was dropped;
  backfill   G1-G4 started before L; D1-D3 did not start before L; a G's
             lucid reason said "backfilled" and a D's "would delay the
             reservation of job L" in some snapshot;
  explain    `lucid explain L` while it waited, before and after the
             restart, said "reserved for it since HH:MM; from ~HH:MM on
             NODES", with the same "since" both times (the reservation
             given before the restart is the one kept).
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_operator import ask, cmd_sample, expand_nodes, parse_time, read_jobcomp  # noqa: E402


def cmd_reserved(sock_path, job):
    for j in ask(sock_path, {"cmd": "queue", "all": True})["jobs"]:
        if j["job"] == int(job) and (j.get("reserved_at") or 0) > 0:
            return 0
    return 1


def cmd_reason(sock_path, job, text):
    for j in ask(sock_path, {"cmd": "queue", "all": True})["jobs"]:
        if j["job"] == int(job) and text in (j.get("reason") or ""):
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
        self.events, self.submitted = [], {}
        for line in open(os.path.join(lab, "events.txt")):
            f = line.split()
            if len(f) >= 2:
                self.events.append((float(f[0]), f[1], f[2:]))
            if len(f) >= 4 and f[1] == "submit":
                self.submitted[f[3]] = float(f[0])
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

    def event(self, what):
        """(time, arguments) of the first event WHAT, or (None, [])."""
        for t, name, args in self.events:
            if name == what:
                return t, args
        return None, []

    def pending(self, snap, jid):
        return any(r["id"] == jid and r["state"] == "PENDING" for r in snap.get("slurm") or [])

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
        t_res, submitted = self.event("reserved")[0], self.submitted
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
        # Of those, only the ones that started before L: M, ahead of L in
        # priority but under the size minimum, may start after it.
        before = [r for r in self.role if r != "L" and submitted.get(r, t_res) < t_res
                  and (self.start(r) is None or self.start(r) < lstart)]
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
        for role in ("G1", "G2", "G3", "G4"):
            st = self.start(role)
            if st is None or st >= lstart:
                self.err("backfill", f"{role} (fits before the reservation) started at {st}, not before L ({lstart:.0f})")
        for role in ("D1", "D2", "D3"):
            st = self.start(role)
            if st is not None and st < lstart:
                self.err("backfill", f"{role} (would delay L) started at {st:.0f}, before L ({lstart:.0f})")
        reasons = {role: set() for role in ("G1", "G2", "G3", "G4", "D1", "D2", "D3")}
        for s in self.snaps:
            for role in reasons:
                j = self.lucid_of(s, self.role[role])
                if j and j.get("reason"):
                    reasons[role].add(j["reason"])
        if not any("backfilled" in r for role in ("G1", "G2", "G3") for r in reasons[role]):
            self.err("backfill", f"no G job's lucid reason said backfilled: {sorted(reasons['G1'])[:3]}")
        if not any("backfilled" in r for r in reasons["G4"]):
            self.err("backfill", f"G4's lucid reason after the restart never said backfilled: "
                     f"{sorted(reasons['G4'])[:3]}")
        want = f"would delay the reservation of job {L}"
        if not any(want in r for role in ("D1", "D2") for r in reasons[role]):
            self.err("backfill", f"no D job's lucid reason said {want!r}: {sorted(reasons['D1'])[:3]}")
        if not any(want in r for r in reasons["D3"]):
            self.err("backfill", f"D3's lucid reason after the restart never said {want!r}: "
                     f"{sorted(reasons['D3'])[:3]}")

    def check_explain(self):
        since = {}
        for name in ("explain-L.txt", "explain-L-restarted.txt"):
            text = open(os.path.join(self.lab, name), errors="replace").read()
            m = re.search(r"reserved for it since (\d\d:\d\d); from ~\d\d:\d\d on \S", text)
            if not m:
                self.err("explain", f"{name}: lucid explain L lacks 'reserved for it since HH:MM; "
                         f"from ~HH:MM on NODES': {text[:300]!r}")
            else:
                since[name] = m.group(1)
        if len(set(since.values())) > 1:
            self.err("explain", f"L's reservation was given again at the restart: since {since}")

    def check_min_gpus(self):
        M = self.role["M"]
        shown = [s for s in self.snaps if (self.lucid_of(s, M) or {}).get("reserved_at")]
        if shown:
            j = self.lucid_of(shown[0], M)
            self.err("min-gpus", f"job {M} (M, 8 GPUs < minimum 9) showed a reservation at "
                     f"t={shown[0]['t0']:.1f}: reserved_at {j.get('reserved_at')} on "
                     f"{j.get('reserved_nodes')!r}")
        why = "no reservation: only jobs of 9 GPUs or more hold one"
        if not any(why in ((self.lucid_of(s, M) or {}).get("reason") or "") for s in self.snaps):
            self.err("min-gpus", f"job {M}'s (M) lucid reason never said {why!r}")
        mstart = self.start("M")
        for role in ("S1", "S2"):
            st = self.start(role)
            if st is None or mstart is None or st >= mstart:
                self.err("min-gpus", f"{role} (2 GPUs, submitted after M) started at {st}, not before "
                         f"M ({mstart}): M held GPUs back without a reservation")
        # Both at once, on the 2 free GPUs of each node: a reservation for M
        # on one node would have left room for one of them only.
        s1, e1, s2, e2 = self.start("S1"), self.end("S1"), self.start("S2"), self.end("S2")
        if None in (s1, e1, s2, e2) or not (s1 < e2 and s2 < e1):
            self.err("min-gpus", f"S1 ({s1}-{e1}) and S2 ({s2}-{e2}) did not run at the same time: "
                     "GPUs were kept for M")
        past = f"ahead of job {M}, which holds no reservation"
        if not any(past in ((self.lucid_of(s, self.role[r]) or {}).get("reason") or "")
                   for s in self.snaps for r in ("S1", "S2")):
            self.err("min-gpus", f"no S job's lucid reason said {past!r}")

    def check_kept(self):
        L = self.role["L"]
        t_kill, _ = self.event("killed")
        t_up, args = self.event("restarted")
        if t_kill is None or t_up is None:
            self.err("kept", "events.txt has no killed/restarted events")
            return
        opts = dict(a.split("=", 1) for a in args if "=" in a)
        window, min_gpus = int(opts.get("window", 0)), int(opts.get("min_gpus", 0))
        lstart = self.start("L")
        if lstart is None or lstart <= t_up:
            self.err("kept", f"L started at {lstart}, not after lucidd was restarted ({t_up:.0f}): "
                     "the restart came too late to test anything")
            return
        # Every snapshot that lists L pending, from its first reservation on,
        # shows it.  A restarted lucidd publishes its stored jobs before its
        # first tick, without the tick's results (reserved_at among them):
        # excused while its tick counter is <= 1.
        seen, before, after, missing = False, None, None, []
        for s in self.snaps:
            j = self.lucid_of(s, L)
            # Waiting for lucid and for Slurm (once lucid starts it, its
            # reservation is used up while Slurm still says PENDING).
            if not j or j.get("phase") != "main-queue" or not self.pending(s, L):
                continue
            restarted = s["t0"] > t_kill
            if (j.get("reserved_at") or 0) > 0:
                seen = True
                if restarted and after is None:
                    after = j
                if not restarted and before is None:
                    before = j
            elif seen and not (restarted and (s.get("ticks") or 0) <= 1):
                missing.append(s["t0"] - t_kill)
        if missing:
            self.err("kept", f"job {L} (L) pending without its reservation in {len(missing)} snapshots "
                     f"(t={', '.join(f'{t:+.1f}' for t in missing[:5])} s from the SIGKILL)")
        if before is None or after is None:
            self.err("kept", f"no snapshot shows job {L} (L) reserved {'before' if before is None else 'after'} "
                     "the restart")
            return
        # The restarted lucidd's options, each alone, would refuse L a new one.
        ahead = before["reserved_at"] - t_up
        if not (0 < window < ahead and min_gpus > 16):
            self.err("kept", f"the restart (window {window} s, minimum {min_gpus} GPUs) would not refuse "
                     f"L (16 GPUs, reserved {ahead:.0f}s after the restart) a reservation: the test "
                     "proves nothing")
        if abs(after["reserved_at"] - before["reserved_at"]) > self.lag:
            self.err("kept", f"L's reservation moved across the restart: {before['reserved_at']} -> "
                     f"{after['reserved_at']}")
        nodes = sorted(expand_nodes(after.get("reserved_nodes", "")))
        if nodes != sorted(expand_nodes(before.get("reserved_nodes", ""))):
            self.err("kept", f"L's reserved nodes changed across the restart: "
                     f"{before.get('reserved_nodes')!r} -> {after.get('reserved_nodes')!r}")
        r = self.recs.get(L, [])
        ran_on = sorted(expand_nodes(r[0].get("NodeList", ""))) if r else []
        if ran_on != nodes:
            self.err("kept", f"L ran on {ran_on}, not on its reserved nodes {nodes}")
        if lstart > after["reserved_at"] + self.lag:
            self.err("kept", f"L started {lstart - after['reserved_at']:.0f}s after the reservation the "
                     "restarted lucidd showed")
        dropped = f"job {L}: backfill reservation dropped"
        log = os.path.join(self.lab, "lucidd.log")
        if os.path.exists(log) and any(dropped in line for line in open(log, errors="replace")):
            self.err("kept", f"lucidd.log says {dropped!r}")
        self.summary += (f"; kept across the SIGKILL (reserved +{after['reserved_at'] - t_up:.0f}s "
                         f"after the restart, window {window} s, minimum {min_gpus} GPUs)")

    def run(self):
        self.summary = ""
        for f in (self.check_ran, self.check_reservation, self.check_min_gpus, self.check_kept,
                  self.check_backfill, self.check_explain):
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
    if cmd == "reason" and len(args) == 3:
        return cmd_reason(*args)
    if cmd == "sample" and len(args) == 4:
        return cmd_sample(*args)
    if cmd == "check" and len(args) == 2:
        return Check(*args).run()
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

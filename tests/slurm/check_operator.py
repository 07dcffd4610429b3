#!/usr/bin/env python3
"""check_operator.py — the helper and the judge of lucidd_operator.sh.

  check_operator.py phase SOCK JOB         lucid's "phase waits_for" of one job
  check_operator.py ticks SOCK             lucid status's tick counter
  check_operator.py metrics PORT           GET /metrics on 127.0.0.1:PORT
  check_operator.py sample SOCK OUT STOP MS
        every MS ms until file STOP exists: one JSON line per snapshot with
        `lucid queue --all --json`, `lucid status --json`'s ticks and
        `squeue -t all` (job id, state, priority, reason, partition, nodes)
  check_operator.py slow-clients SOCK PORT SECONDS
        a byte every 0.9 s on /metrics and on the socket, and a queue request
        whose answer is never read, all held SECONDS
  check_operator.py check LAB MODE LIMIT
        the assertions (below) from Slurm's jobcomp log, the payloads' own
        start/end lines, the snapshots and lucid's final records; each failed
        one is a line appended to LAB/errors.txt.

Assertions (issue 10, "Done when"):
  once      every job starts on main at most once and in the profiler at most
            once (payload lines and jobcomp records agree);
  gpus      no GPU carries two unpacked jobs at the same moment;
  run       every job that can run does run to its end (payload `end`, final
            jobcomp state COMPLETED, FAILED for the jobs that exit 1); jobs
            never satisfiable never start; cancelled jobs end CANCELLED where
            they were caught (queue / profiler / main);
  phases    lucid's phase agrees with Slurm's state in every snapshot, a
            disagreement excused when it lasts one snapshot only (~2 ticks);
            every job Slurm lists in a lucid partition is listed by lucid;
  order     no job started on main while a job of better lucid priority waited
            in lucid's main queue and fit in the GPUs free at that moment;
  history   lucid's per-job outcome / ended_in, `lucid status` "ended" and
            /metrics lucid_jobs_ended_total equal what jobcomp recorded;
  rules     -H waits for `lucid release`; a resize after intake is honoured;
            -w / --exclude honoured; --begin and dependencies honoured (and
            waiting jobs take no capacity); array tasks each profiled; the
            non-ASCII name is listed as valid UTF-8 cut on a character;
  outages   ticks keep advancing while lucidd is up; outcomes after an
            outage are Slurm's or `unknown`, never a guessed failure;
  failopen  jobs submitted with lucidd silent run under plain Slurm; held
            jobs are handed back and run; nothing handed back runs twice.
"""
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections import defaultdict


def read_all(s):
    """Everything the peer sends until it closes; closes the socket."""
    data = b""
    while True:
        chunk = s.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    s.close()
    return data


def ask(sock_path, request, timeout=3.0):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    s.connect(sock_path)
    s.sendall((json.dumps(request) + "\n").encode())
    data = read_all(s)
    return json.loads(data.decode("utf-8"))


def cmd_phase(sock_path, job):
    for j in ask(sock_path, {"cmd": "queue", "all": True})["jobs"]:
        if j["job"] == int(job):
            print(j.get("phase", ""), j.get("waits_for", ""))
            return 0
    return 1


def cmd_ticks(sock_path):
    st = ask(sock_path, {"cmd": "status"})
    if "ticks" not in st:
        return 1
    print(st["ticks"])
    return 0


def http_get(port, path="/metrics", timeout=5.0):
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=timeout)
    s.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
    data = read_all(s)
    head, _, body = data.partition(b"\r\n\r\n")
    return head.decode(errors="replace"), body.decode(errors="replace")


def cmd_metrics(port):
    head, body = http_get(port)
    if " 200 " not in head.split("\r\n")[0]:
        print(head, file=sys.stderr)
        return 1
    sys.stdout.write(body)
    return 0


LUCID_KEYS = ("job", "phase", "waits_for", "partition", "gpus", "nodes", "priority",
              "order_priority", "fairshare", "outcome",
              "ended_in", "node_list", "reason", "runs", "name", "start_p10", "start_p50",
              "start_p90", "start_none", "reserved_at", "reserved_nodes")


def cmd_sample(sock_path, out, stop, period_ms):
    period = int(period_ms) / 1000.0
    with open(out, "a") as f:
        while not os.path.exists(stop):
            t0 = time.time()
            snap = {"t0": t0}
            try:
                jobs = ask(sock_path, {"cmd": "queue", "all": True}, timeout=2.0)["jobs"]
                snap["lucid"] = [{k: j.get(k) for k in LUCID_KEYS} for j in jobs]
            except Exception as e:  # lucidd down or slow: recorded as such
                snap["lucid"] = None
                snap["lucid_error"] = str(e)[:200]
            snap["t1"] = time.time()
            try:
                st = ask(sock_path, {"cmd": "status"}, timeout=2.0)
                snap["ticks"] = st.get("ticks")
                snap["slow_ticks"] = st.get("slow_ticks")
            except Exception:
                snap["ticks"] = None
            try:
                out_s = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%A|%T|%Q|%r|%P|%N"],
                                       capture_output=True, text=True, timeout=5).stdout
                snap["slurm"] = [dict(zip(("id", "state", "prio", "reason", "part", "nodes"),
                                          l.split("|"))) for l in out_s.splitlines() if l]
                for r in snap["slurm"]:
                    r["id"] = int(r["id"])
            except Exception as e:
                snap["slurm"] = None
                snap["slurm_error"] = str(e)[:200]
            snap["t2"] = time.time()
            f.write(json.dumps(snap) + "\n")
            f.flush()
            time.sleep(max(0.0, period - (time.time() - t0)))
    return 0


def cmd_slow_clients(sock_path, port, seconds):
    seconds = float(seconds)
    notes = []

    def dribble(what, connect, payload):
        """One byte every 0.9 s for `seconds`, never a whole request."""
        try:
            s = connect()
            end = time.time() + seconds
            for b in payload:
                if time.time() > end:
                    break
                s.send(bytes([b]))
                time.sleep(0.9)
            s.close()
        except OSError as e:
            notes.append(f"{what}: {e}")

    def unix():
        s = socket.socket(socket.AF_UNIX)
        s.connect(sock_path)
        return s

    def dribble_http():
        dribble("metrics dribble", lambda: socket.create_connection(("127.0.0.1", int(port)), timeout=5),
                b"GET /metrics HTTP/1.0\r\n")

    def dribble_unix():
        dribble("socket dribble", unix, b'{"cmd":"status"}')

    def never_read():
        try:
            s = socket.socket(socket.AF_UNIX)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(sock_path)
            s.sendall(b'{"cmd":"queue","all":true}\n')
            time.sleep(seconds)
            s.close()
        except OSError as e:
            notes.append(f"unread queue: {e}")

    threads = [threading.Thread(target=f) for f in (dribble_http, dribble_unix, never_read)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for n in notes:
        print("slow-clients: " + n)
    return 0


# ------------------------------------------------------------------ check

JOBCOMP_KEYS = ("JobId", "JobState", "Partition", "StartTime", "EndTime", "NodeList", "NodeCnt",
                "ArrayJobId", "ArrayTaskId")
OUTCOME = {"COMPLETED": "completed", "FAILED": "failed", "CANCELLED": "cancelled",
           "TIMEOUT": "timeout", "NODE_FAIL": "node-fail", "OUT_OF_MEMORY": "out-of-memory",
           "DEADLINE": "timeout", "BOOT_FAIL": "node-fail", "PREEMPTED": "cancelled"}
FINAL_PHASES = ("done", "done-in-profiler", "failed", "ended-unknown")
SLURM_FINAL = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
               "PREEMPTED", "BOOT_FAIL", "DEADLINE")


def parse_time(s):
    if s in ("Unknown", "unknown", "None", ""):
        return None
    return time.mktime(time.strptime(s, "%Y-%m-%dT%H:%M:%S"))


def read_jobcomp(path):
    recs = defaultdict(list)
    for line in open(path, encoding="utf-8", errors="replace"):
        r = {}
        for k in JOBCOMP_KEYS:
            m = re.search(r"(?:^| )" + k + r"=(\S*)", line)
            if m:
                r[k] = m.group(1)
        if "JobId" in r:
            r["ran"] = r.get("NodeList", "(null)") not in ("(null)", "", "None")
            recs[int(r["JobId"])].append(r)
    return recs


def expand_nodes(s):
    """Slurm hostlist "n[1-2],p1" -> ["n1", "n2", "p1"]."""
    out = []
    if not s or s in ("(null)", "None"):
        return out
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?", s):
        m = re.match(r"([^\[]+)\[([^\]]*)\]", part)
        if not m:
            out.append(part)
            continue
        for rng in m.group(2).split(","):
            a, _, b = rng.partition("-")
            for i in range(int(a), int(b or a) + 1):
                out.append(f"{m.group(1)}{i}")
    return out


def expand_ids(s):
    if s in ("none", ""):
        return []
    out = []
    for rng in s.split(","):
        a, _, b = rng.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def order_value(j):
    """What lucid orders a waiting job by: its order value where it shows
    one (fair share on), else its priority."""
    v = j.get("order_priority")
    return v if v else j.get("priority")


class Check:
    def __init__(self, lab, mode, limit):
        self.lab, self.mode, self.limit = lab, mode, float(limit)
        self.errors = []
        self.jobs = {}  # id -> dict(role, expect, dur, code, user, submit)
        for line in open(f"{lab}/jobs.txt"):
            f = line.split()
            if len(f) >= 7:
                self.jobs[int(f[0])] = dict(role=f[1], expect=f[2], dur=float(f[3]), code=int(f[4]),
                                            user=f[5], submit=float(f[6]))
        self.jobcomp = read_jobcomp(f"{lab}/jobcomp.txt")
        if os.path.exists(f"{lab}/array.txt"):
            master = int(open(f"{lab}/array.txt").read().strip())
            tasks = {jid for jid, rs in self.jobcomp.items()
                     if any(r.get("ArrayJobId") == str(master) for r in rs)}
            for jid in tasks:
                self.jobs[jid] = dict(role="array", expect="run", dur=2, code=0, user="root",
                                      submit=0)
            if len(tasks) != 6:
                self.err("rules", f"array {master}: jobcomp shows {len(tasks)} tasks, want 6")
        self.runs = defaultdict(list)  # job -> [(kind, restarts, part, node, cvd, packed, t)]
        for line in open(f"{lab}/payload.log"):
            f = line.split()
            if len(f) == 8:
                self.runs[int(f[1])].append((f[0], int(f[2]), f[3], f[4], f[5], f[6], float(f[7])))
        self.snaps = []
        if os.path.exists(f"{lab}/snapshots.jsonl"):
            for line in open(f"{lab}/snapshots.jsonl"):
                try:
                    self.snaps.append(json.loads(line))
                except ValueError:
                    pass
        self.events = []
        for line in open(f"{lab}/events.txt"):
            f = line.split()
            if len(f) >= 2 and re.match(r"^[0-9.]+$", f[0]):
                self.events.append((float(f[0]), f[1], f[2:]))
        self.queue = self.load_json("queue.json", "jobs")
        self.status = self.load_json("status.json", None)
        self.releases = self.read_releases(f"{lab}/log/slurmctld.log")

    @staticmethod
    def read_releases(path):
        """Slurm's own record of each hold lifted by root (lucidd), in
        slurmctld's millisecond times: job -> [t, ...] in log order."""
        out = defaultdict(list)
        pat = re.compile(r"^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?\] .*"
                         r"release hold on JobId=(\d+) by uid 0$")
        try:
            lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
        except OSError:
            return out
        for line in lines:
            m = pat.match(line)
            if m:
                t = time.mktime(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S"))
                out[int(m.group(3))].append(t + float(m.group(2) or 0))
        return out

    def released_by(self, jid, after, until):
        """Whether lucidd lifted jid's hold in [after, until] (Slurm's log)."""
        return any(after <= t <= until for t in self.releases.get(jid, ()))

    def load_json(self, name, key):
        try:
            data = json.load(open(f"{self.lab}/{name}", encoding="utf-8"))
        except (OSError, ValueError) as e:
            self.err("history", f"{name} unreadable: {e}")
            return {} if key else None
        if key:
            return {j["job"]: j for j in data.get(key, [])}
        return data

    def err(self, area, msg):
        self.errors.append(f"[{area}] {msg}")

    def starts(self, jid, part=None):
        return [r for r in self.runs[jid] if r[0] == "start" and (part is None or r[2] == part)]

    def lucid_down(self):
        """[(t_down, t_up)] from the events."""
        out, down = [], None
        for t, what, _ in self.events:
            if what == "lucidd-down":
                down = t
            elif what == "lucidd-up" and down is not None:
                out.append((down, t))
                down = None
        if down is not None:
            out.append((down, float("inf")))
        return out

    # -- once
    def check_once(self):
        for jid in sorted(set(self.runs) | set(self.jobcomp)):
            for part in ("main", "profiling"):
                n = len(self.starts(jid, part))
                if n > 1:
                    self.err("once", f"job {jid} ({self.role(jid)}) started {n} times on {part}: "
                             f"{[(r[0], r[1], r[3], round(r[6], 1)) for r in self.runs[jid]]}")
                m = sum(1 for r in self.jobcomp.get(jid, []) if r["ran"] and r["Partition"] == part)
                if m > 1:
                    self.err("once", f"job {jid} ({self.role(jid)}): jobcomp records {m} runs on {part}")

    def role(self, jid):
        return self.jobs.get(jid, {}).get("role", "?")

    # -- gpus
    def check_gpus(self):
        intervals = defaultdict(list)
        for jid, rs in self.runs.items():
            open_run = None
            for r in sorted(rs, key=lambda r: r[6]):
                if r[0] == "start":
                    open_run = r
                elif open_run:
                    for g in expand_ids(open_run[4]):
                        intervals[(open_run[3], g)].append((open_run[6], r[6], jid, open_run[5] != "no"))
                    open_run = None
        self.intervals = intervals
        for (node, gpu), ivs in intervals.items():
            ivs.sort()
            for i, a in enumerate(ivs):
                for b in ivs[i + 1:]:
                    if b[0] >= a[1] - 0.05:
                        continue
                    if a[3] == b[3] or not (a[3] or b[3]):
                        if not a[3] and not b[3]:
                            self.err("gpus", f"{node} GPU {gpu}: jobs {a[2]} and {b[2]} overlap unpacked "
                                     f"({a[0]:.1f}-{a[1]:.1f} and {b[0]:.1f}-{b[1]:.1f})")

    # -- run
    def final(self, jid):
        rs = [r for r in self.jobcomp.get(jid, []) if r["JobState"] in SLURM_FINAL]
        return rs[-1] if rs else None

    def check_run(self):
        caught = {}
        for t, what, args in self.events:
            if what in ("cancel", "cancel-late"):
                caught[int(args[0])] = what
        for jid, spec in sorted(self.jobs.items()):
            fin = self.final(jid)
            ends = [r for r in self.runs[jid] if r[0] == "end"]
            exp = spec["expect"]
            tag = f"job {jid} ({spec['role']})"
            if exp in ("run", "fail"):
                want = "COMPLETED" if exp == "run" else "FAILED"
                if len(ends) != 1:
                    self.err("run", f"{tag}: {len(ends)} payload ends (want 1): {self.runs[jid]}")
                if not fin or fin["JobState"] != want:
                    self.err("run", f"{tag}: Slurm's record {fin['JobState'] if fin else 'none'}, want {want}")
            elif exp == "never":
                if self.starts(jid):
                    self.err("run", f"{tag}: a never-satisfiable job started: {self.runs[jid]}")
            elif exp.startswith("cancel-"):
                where = exp.split("-", 1)[1]
                if caught.get(jid) != "cancel":
                    self.err("run", f"{tag}: never seen in the phase to cancel it ({where})")
                if ends:
                    self.err("run", f"{tag}: cancelled job ran to its end")
                if not fin or fin["JobState"] != "CANCELLED":
                    self.err("run", f"{tag}: Slurm's record {fin['JobState'] if fin else 'none'}, want CANCELLED")
                elif caught.get(jid) == "cancel":
                    got = self.where(fin)
                    if got != where:
                        self.err("run", f"{tag}: cancelled in {got}, meant in {where}")

    def where(self, rec):
        if not rec["ran"]:
            return "queue"
        return "profiler" if rec["Partition"] == "profiling" else "main"

    # -- phases
    ALLOWED = {
        "profile-queue": lambda s: s["state"] == "PENDING" and s["prio"] == "0",
        "main-queue": lambda s: s["state"] == "PENDING" and s["prio"] == "0",
        "releasing": lambda s: s["state"] == "PENDING" and s["prio"] != "0",
        "profiling": lambda s: s["state"] in ("RUNNING", "CONFIGURING") and s["part"] == "profiling",
        "running": lambda s: s["state"] in ("RUNNING", "CONFIGURING") and s["part"] == "main",
        "moving": lambda s: s["state"] not in SLURM_FINAL,
        "done-in-profiler": lambda s: s["state"] in SLURM_FINAL or s["state"] == "COMPLETING",
        "done": lambda s: s["state"] in SLURM_FINAL or s["state"] == "COMPLETING",
        "failed": lambda s: s["state"] in SLURM_FINAL or s["state"] == "COMPLETING",
        "ended-unknown": lambda s: s["state"] in SLURM_FINAL or s["state"] == "COMPLETING",
        # given back to Slurm untouched (a request no node set could hold): Slurm's own state
        "handed-back": lambda s: True,
    }

    def check_phases(self):
        streak = {}  # job -> consecutive disagreeing snapshots (in one lucid phase)
        streak_phase = {}  # job -> lucid's phase in the last disagreeing snapshot
        streak_ticks = {}  # job -> lucid's published ticks at the streak's first snapshot
        lasting = {}  # job -> this streak already counted
        reported = defaultdict(int)
        missing = {}
        self.waits_seen = defaultdict(set)
        self.phases_seen = defaultdict(set)
        bad_total = 0
        usable = 0
        # Right after slurmctld comes back, lucid learns Slurm's state at its
        # first tick that reaches it (a heavier one: reconciling what ended
        # meanwhile); disagreements in the 2 s after "ctld-up" are that lag.
        ctld_up = [t for t, what, _ in self.events if what == "ctld-up"]
        for snap in self.snaps:
            if snap.get("lucid") is None or snap.get("slurm") is None:
                streak.clear()
                streak_phase.clear()
                continue
            if any(0 <= snap["t0"] - t < 2.0 for t in ctld_up):
                streak.clear()
                streak_phase.clear()
                continue
            usable += 1
            lucid = {j["job"]: j for j in snap["lucid"]}
            for j in snap["lucid"]:
                self.phases_seen[j["job"]].add(j["phase"])
                if j.get("waits_for"):
                    self.waits_seen[j["job"]].add(j["waits_for"])
            for s in snap["slurm"]:
                jid = s["id"]
                if s["part"] not in ("main", "profiling", "main,profiling"):
                    continue
                j = lucid.get(jid)
                if j is None:
                    # Missing from lucid's list in three snapshots in a row
                    # (1.5 s) with four lucid ticks published since the first
                    # of them: the same rule as a lasting disagreement below.
                    # A tick slowed by a loaded machine (a fresh lucidd's
                    # first ticks on a machine running other labs) delays the
                    # listing without losing the job.  A lucidd restarted in
                    # between counts its ticks from its own start.
                    if s["state"] not in SLURM_FINAL:
                        k = snap.get("ticks")
                        if jid not in missing:
                            missing[jid] = [0, k]
                        missing[jid][0] += 1
                        k0 = missing[jid][1]
                        if isinstance(k0, int) and isinstance(k, int):
                            seen_ticks = k - k0 if k >= k0 else k
                        else:
                            seen_ticks = 99
                        if missing[jid][0] >= 3 and seen_ticks >= 4 and len(missing[jid]) == 2:
                            missing[jid].append(True)  # reported once per streak
                            self.err("phases", f"job {jid} ({self.role(jid)}): Slurm lists it {s['state']} "
                                     f"but lucid does not list it ({missing[jid][0]} snapshots, "
                                     f"{'?' if seen_ticks == 99 else seen_ticks} lucid ticks since the first, "
                                     f"t={snap['t0']:.1f})")
                    continue
                missing.pop(jid, None)
                ok = self.ALLOWED.get(j["phase"], lambda s: False)(s)
                if ok:
                    streak[jid] = 0
                    streak_phase.pop(jid, None)
                    lasting.pop(jid, None)
                    continue
                # A release in flight: lucid's tick is pinning and releasing
                # the job (Slurm already shows it) but has not published the
                # new phase yet.  That is the release lag itself: it neither
                # counts nor clears a streak.
                if (j["phase"] in ("profile-queue", "main-queue") and s["state"] == "PENDING"
                        and s["prio"] != "0"):
                    continue
                # A lasting disagreement is one lucid phase disagreeing in three
                # snapshots in a row (1.5 s): on the site profile a tick that
                # releases several jobs makes each release's RPCs through
                # slurmdbd's enforcement (~0.1 s each), so Slurm may show a
                # job running two snapshots before lucid's next publication.  A job that moves on between them
                # (released -> Slurm starts it -> lucid shows running -> the
                # owner cancels at once) is behind by one tick at each
                # step, never stuck: its count starts again.
                #
                # And lucid must have had the chance to see it: four of its
                # ticks published since the first disagreeing snapshot (the
                # counter is read after the queue; a tick running when Slurm
                # changed may have read Slurm before).  A tick slowed by a
                # loaded machine delays lucid's view without making it wrong;
                # the tick rate itself is the [ticks] check's, and lucidd
                # logs each tick over a second with where its time went.
                last_phase = streak_phase.get(jid)
                streak_phase[jid] = j["phase"]
                if last_phase == j["phase"]:
                    streak[jid] = streak.get(jid, 0) + 1
                else:
                    streak[jid] = 1
                    streak_ticks[jid] = snap.get("ticks")
                k0, k = streak_ticks.get(jid), snap.get("ticks")
                seen_ticks = k - k0 if isinstance(k0, int) and isinstance(k, int) and k >= k0 else 99
                if streak[jid] >= 3 and seen_ticks >= 4 and not lasting.get(jid):
                    lasting[jid] = True
                    bad_total += 1
                    reported[jid] += 1
                    if reported[jid] <= 2:
                        self.err("phases", f"job {jid} ({self.role(jid)}) at t={snap['t0']:.1f}: lucid "
                                 f"{j['phase']}{' (' + j['waits_for'] + ')' if j.get('waits_for') else ''}"
                                 f" while Slurm says {s['state']} priority {s['prio']} {s['reason']} "
                                 f"on {s['part']} ({streak[jid]} snapshots running, "
                                 f"{'?' if seen_ticks == 99 else seen_ticks} lucid ticks since the first)")
        if usable == 0:
            self.err("phases", "no snapshot had both lucid's and Slurm's view")
        if bad_total:
            self.err("phases", f"{bad_total} lasting disagreements in {len(reported)} jobs over {usable} "
                     f"snapshots (at most 2 shown per job)")
        self.usable_snaps = usable
        self.phase_disagreements = bad_total

    # -- order
    def check_order(self):
        prio = {jid: q.get("priority") for jid, q in self.queue.items()}
        main_start = {}
        for jid in self.runs:
            st = self.starts(jid, "main")
            if st:
                main_start[jid] = st[0]
        nodes_main = [f"n{i}" for i in range(1, 5)]
        pinned = {jid: spec["role"] for jid, spec in self.jobs.items()}
        # last snapshot (lucid) where each job was in main-queue, per snapshot
        usable = [s for s in self.snaps if s.get("lucid") is not None]
        violations = 0
        for b, r in sorted(main_start.items(), key=lambda kv: kv[1][6]):
            if r[5] != "no" or prio.get(b) is None:
                continue  # packed starts are tried in any order
            tb = r[6]
            before = [s for s in usable if s["t1"] < tb - 0.1 and
                      any(j["job"] == b and j["phase"] == "main-queue" for j in s["lucid"])]
            if not before:
                continue
            snap = before[-1]
            td = snap["t1"]
            free = {n: 8 for n in nodes_main}
            for (node, gpu), ivs in self.intervals.items():
                if node not in free:
                    continue
                for t0, t1, jid, packed in ivs:
                    if not packed and t0 - 1.0 <= td <= t1 + 1.5 and jid != b:
                        free[node] -= 1
            for j in snap["lucid"]:
                if j["phase"] == "releasing" and j["job"] != b:
                    for n in expand_nodes(j.get("node_list") or ""):
                        if n in free:
                            free[n] -= (j["gpus"] or 0) // max(1, j.get("nodes") or 1)
            # The order values lucid decided by then (its priority with the
            # site's fair share, "order_priority"; a restarted lucidd on a
            # new state file can end with other values than it ran with).
            at = {j["job"]: order_value(j) for j in snap["lucid"]}
            pb = at.get(b) if at.get(b) is not None else prio[b]
            for j in snap["lucid"]:
                a = j["job"]
                pa = order_value(j) if order_value(j) is not None else prio.get(a)
                if a == b or j["phase"] != "main-queue" or j.get("waits_for") or pa is None:
                    continue
                if not pa < pb:
                    continue
                if a in main_start and main_start[a][6] < tb:
                    continue
                # Released by lucid no later than b (the same tick releases
                # in queue order, a first): which payload Slurm then starts
                # a few milliseconds first is Slurm's, not lucid's, order.
                rel_b = [t for t in self.releases.get(b, ()) if t <= tb]
                if rel_b and self.released_by(a, snap["t0"] - 2.0, rel_b[-1]):
                    continue
                gpus, nn = j["gpus"] or 0, max(1, j.get("nodes") or 1)
                cand = dict(free)
                if pinned.get(a) == "pin-n2":
                    cand = {"n2": free["n2"]}
                elif pinned.get(a) == "exclude-n1":
                    cand.pop("n1")
                if gpus <= 8 and nn == 1:
                    fits = any(v >= gpus for v in cand.values())
                else:
                    per = max(1, -(-gpus // max(nn, -(-gpus // 8))))
                    fits = sum(1 for v in cand.values() if v >= per) >= max(nn, -(-gpus // 8))
                if fits:
                    violations += 1
                    if violations <= 5:
                        self.err("order", f"job {b} ({self.role(b)}, priority {pb:.0f}) started on main at "
                                 f"{tb:.1f} while job {a} ({self.role(a)}, priority {pa:.0f}, {gpus} GPUs) "
                                 f"waited in lucid's main queue and fit (free GPUs {free} at {td:.1f})")

    # -- the site's fair share (issue 23)
    def check_fairshare(self):
        """On the site profile (PriorityWeightFairshare 10000) lucidd's
        default weighs fair share: the waiting jobs carry sshare's factor
        (0..1; -1 only for an association sshare did not list), read in the
        background within a few ticks of the start."""
        try:
            profile = open(f"{self.lab}/etc/profile").read().strip()
        except OSError:
            profile = "simple"
        seen, bad = 0, 0
        for snap in self.snaps:
            for j in snap.get("lucid") or []:
                if j.get("phase") not in ("profile-queue", "main-queue"):
                    continue
                f = j.get("fairshare")
                if f is None:
                    continue
                if 0 <= f <= 1:
                    seen += 1
                elif f != -1:
                    bad += 1
                    if bad <= 3:
                        self.err("fairshare", f"job {j['job']}: fair-share factor {f} outside 0..1")
        if profile == "site" and seen == 0:
            self.err("fairshare", "no waiting job ever carried a fair-share factor "
                                  "(site profile: Slurm weighs fair share, lucidd's default follows)")

    # -- start-time estimates (issue 13)
    def check_start_estimates(self):
        """Every waiting job lucid may schedule shows a start interval
        (P10 <= P50 <= P90, P90 not past by more than the 60 s an unchanged
        queue keeps its estimates), and every
        other waiting job says why it has none, in `lucid queue`'s data; a
        job is allowed one snapshot without either (it joined the queue
        between the tick and the sample)."""
        missing = {}
        bad = 0
        for snap in self.snaps:
            if snap.get("lucid") is None:
                continue
            seen = set()
            for j in snap["lucid"]:
                if j.get("phase") not in ("profile-queue", "main-queue") or "start_p50" not in j:
                    continue
                jid, p10, p50, p90 = j["job"], j.get("start_p10") or 0, j.get("start_p50") or 0, \
                    j.get("start_p90") or 0
                if p50 > 0:
                    if not (0 < p10 <= p50 <= p90) or p90 < snap["t0"] - 65:
                        bad += 1
                        if bad <= 5:
                            self.err("eta", f"job {jid} ({self.role(jid)}): interval {p10}/{p50}/{p90} "
                                     f"at {snap['t0']:.1f} is not an interval ahead of now")
                    continue
                if j.get("start_none"):
                    continue
                seen.add(jid)
                if missing.get(jid):
                    bad += 1
                    if bad <= 5:
                        self.err("eta", f"job {jid} ({self.role(jid)}) waited in {j['phase']} without a "
                                 f"start estimate or a reason for none in two snapshots (at {snap['t0']:.1f})")
            missing = {jid: True for jid in seen}

    # -- history
    def check_history(self):
        expected = defaultdict(int)
        downs = self.lucid_down()
        for jid in self.jobs:
            fin = self.final(jid)
            if not fin:
                continue
            where, outcome = self.where(fin), OUTCOME.get(fin["JobState"], "unknown")
            expected[f"{where}/{outcome}"] += 1
            q = self.queue.get(jid)
            tag = f"job {jid} ({self.role(jid)})"
            lost = self.event_time_any("state-deleted")
            if q is None and lost is not None and (parse_time(fin.get("EndTime", "")) or 0) < lost:
                continue  # its history went with the deleted state file
            if q is None:
                self.err("history", f"{tag}: not in lucid queue --all (Slurm: {fin['JobState']} in {where})")
                continue
            got = (q.get("ended_in"), q.get("outcome"))
            if got == (where, outcome):
                continue
            end = parse_time(fin.get("EndTime", "")) or 0
            during_outage = any(d - 1 <= end <= u + 6 for d, u in downs)
            if self.mode == "outages" and during_outage and got[1] == "unknown":
                continue  # no accounting database in the lab: unknown is honest
            self.err("history", f"{tag}: lucid says ended_in={got[0]} outcome={got[1]} "
                     f"(phase {q.get('phase')}), Slurm recorded {fin['JobState']} in {where}")
        ended = (self.status or {}).get("ended")
        if ended is None:
            self.err("history", "lucid status --json has no \"ended\" counters")
        else:
            ended = {k: v for k, v in ended.items() if v}
            if ended != dict(expected) and self.mode != "outages":
                self.err("history", f"lucid status ended {dict(sorted(ended.items()))} != jobcomp "
                         f"{dict(sorted(expected.items()))}")
        metrics = {}
        try:
            for line in open(f"{self.lab}/metrics.txt"):
                m = re.match(r'lucid_jobs_ended_total\{(.*)\} (\S+)', line)
                if m:
                    labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
                    v = int(float(m.group(2)))
                    if v:
                        metrics[f"{labels.get('where')}/{labels.get('outcome')}"] = v
        except OSError:
            pass
        if not metrics:
            self.err("history", "/metrics has no lucid_jobs_ended_total{where,outcome}")
        elif metrics != dict(expected) and self.mode != "outages":
            self.err("history", f"/metrics lucid_jobs_ended_total {dict(sorted(metrics.items()))} != jobcomp "
                     f"{dict(sorted(expected.items()))}")
        if ended is not None and metrics and ended != metrics:
            self.err("history", f"lucid status ended {ended} != /metrics {metrics}")

    # -- rules (operator)
    def by_role(self, role):
        return [jid for jid, s in self.jobs.items() if s["role"] == role]

    def event_time_any(self, what):
        for t, w, _ in self.events:
            if w == what:
                return t
        return None

    def event_time(self, what, jid):
        for t, w, args in self.events:
            if w == what and args and args[0] == str(jid):
                return t
        return None

    def check_rules(self):
        for jid in self.by_role("user-hold") + self.by_role("resize"):
            rel = self.event_time("lucid-release", jid)
            st = self.starts(jid)
            if st and (rel is None or st[0][6] < rel):
                self.err("rules", f"job {jid} ({self.role(jid)}, sbatch -H) started at {st[0][6]:.1f} "
                         f"before `lucid release` ({rel})")
            if "user-hold" not in self.waits_seen.get(jid, set()):
                self.err("rules", f"job {jid} ({self.role(jid)}): lucid never showed waits_for=user-hold "
                         f"(seen {sorted(self.waits_seen.get(jid, set()))})")
        for jid in self.by_role("resize"):
            for r in self.starts(jid):
                if len(expand_ids(r[4])) != 2:
                    self.err("rules", f"job {jid} (resized to 2 GPUs while held) ran with GPUs {r[4]} on {r[2]}")
            if self.queue.get(jid, {}).get("gpus") != 2:
                self.err("rules", f"job {jid} (resized to 2 GPUs): lucid says {self.queue.get(jid, {}).get('gpus')} GPUs")
        for jid in self.by_role("pin-n2"):
            for r in self.starts(jid, "main"):
                if r[3] != "n2":
                    self.err("rules", f"job {jid} (-w n2) ran on {r[3]}")
        for jid in self.by_role("exclude-n1"):
            for r in self.starts(jid):
                if r[3] == "n1":
                    self.err("rules", f"job {jid} (--exclude=n1) ran on n1")
        for jid in self.by_role("begin"):
            st = self.starts(jid)
            if st and st[0][6] < self.jobs[jid]["submit"] + 19:
                self.err("rules", f"job {jid} (--begin=now+20) started {st[0][6] - self.jobs[jid]['submit']:.1f} s "
                         f"after submission")
            if "begin" not in self.waits_seen.get(jid, set()):
                self.err("rules", f"job {jid} (--begin): lucid never showed waits_for=begin")
        parents = self.by_role("dep-parent")
        for jid in self.by_role("dep-child"):
            st = self.starts(jid)
            pend = [r[6] for p in parents for r in self.runs[p] if r[0] == "end"]
            if st and pend and st[0][6] < max(pend):
                self.err("rules", f"job {jid} (afterok) started before its parent ended")
        for jid in self.by_role("dep-never"):
            if "dependency" not in self.waits_seen.get(jid, set()):
                self.err("rules", f"job {jid} (afterok on a failed job): lucid never showed waits_for=dependency "
                         f"(seen {sorted(self.waits_seen.get(jid, set()))})")
            took = self.phases_seen.get(jid, set()) & {"profiling", "releasing", "running", "moving"}
            if took:
                self.err("rules", f"job {jid} (never satisfiable) was given capacity: phases {sorted(took)}")
        for jid in self.by_role("array"):
            if len(self.starts(jid, "profiling")) != 1:
                self.err("rules", f"array task {jid}: {len(self.starts(jid, 'profiling'))} profiling runs (want its own, 1)")
        for jid in self.by_role("utf8-name"):
            want = open(f"{self.lab}/utf8-name.txt", encoding="utf-8").read()
            q = self.queue.get(jid)
            if q is None:
                self.err("rules", f"job {jid} (non-ASCII name): not listed by lucid")
                continue
            name = q.get("name") or ""
            try:
                raw = name.encode("utf-8")
            except UnicodeEncodeError:
                self.err("rules", f"job {jid}: name is not valid UTF-8: {name!r}")
                continue
            if not want.startswith(name) or len(raw) < 100 or len(raw) > 127:
                self.err("rules", f"job {jid}: name {len(raw)} bytes, not a character-boundary prefix of "
                         f"the submitted {len(want.encode())}-byte name")
            try:
                e = json.load(open(f"{self.lab}/utf8-explain.json", encoding="utf-8"))
                if not e.get("ok", True) or e.get("job", {}).get("job") != jid:
                    self.err("rules", f"job {jid}: lucid queue --job answered {str(e)[:200]}")
            except (OSError, ValueError) as ex:
                self.err("rules", f"job {jid}: lucid queue --job unreadable: {ex}")
        for jid, q in self.queue.items():
            if q.get("phase") in ("done", "failed") and jid in self.jobs:
                n = len(self.starts(jid, "main"))
                if q.get("runs") is not None and q["runs"] != n:
                    self.err("history", f"job {jid} ({self.role(jid)}): lucid counted {q['runs']} starts on "
                             f"main, the payload {n}")

    # -- ticks
    def check_ticks(self):
        pts = [(s["t0"], s["ticks"]) for s in self.snaps if isinstance(s.get("ticks"), int)]
        if not pts:
            self.err("ticks", "no snapshot carried lucid status's tick counter")
            return
        worst = None
        # A window in which lucidd was stopped on purpose (or restarted, which
        # starts its counter again) says nothing about its tick rate; nor does
        # the tick in flight when slurmctld stops: its failed call waits
        # libslurm's connect retries or reply timeout, up to MessageTimeout
        # (the ticks after it probe and keep their pace, which is checked).
        downs = self.lucid_down()
        timeout = 10  # Slurm's default MessageTimeout
        try:
            for line in open(f"{self.lab}/etc/slurm.conf"):
                if line.strip().lower().startswith("messagetimeout="):
                    timeout = int(line.split("=", 1)[1])
        except (OSError, ValueError):
            pass
        downs += [(t - 1, t + timeout + 2) for t, what, _ in self.events if what == "ctld-down"]
        for i, (t0, k0) in enumerate(pts):
            for t1, k1 in pts[i + 1:]:
                if t1 - t0 < 4:
                    continue
                if any(d < t1 and u > t0 for d, u in downs):
                    break
                if k1 >= k0:  # same daemon
                    rate = (k1 - k0) / (t1 - t0)
                    if worst is None or rate < worst[0]:
                        worst = (rate, t0, t1, k0, k1)
                break
        if worst and worst[0] < 0.5 * 1000 / 250:
            self.err("ticks", f"ticks advanced {worst[4] - worst[3]} in {worst[2] - worst[1]:.1f} s from "
                     f"t={worst[1]:.1f} (tick 250 ms: ~{(worst[2] - worst[1]) * 4:.0f} expected)")

    # -- failopen
    def check_failopen(self):
        downs = self.lucid_down()
        if not downs:
            self.err("failopen", "lucidd was never stopped")
            return
        d, u = downs[0]
        for jid in self.by_role("after-bound") + self.by_role("held-at-stop") + self.by_role("within-bound"):
            st = self.starts(jid)
            if not st:
                continue
            if self.role(jid) == "after-bound" and st[0][2] != "main":
                self.err("failopen", f"job {jid} (submitted with lucidd silent) ran on {st[0][2]}, not main")
        started_down = [jid for jid in self.by_role("after-bound") + self.by_role("held-at-stop")
                        if self.starts(jid) and d < self.starts(jid)[0][6] < u]
        if not any(self.role(j) == "after-bound" for j in started_down):
            self.err("failopen", "the job submitted with lucidd silent did not start before lucidd returned")
        if not any(self.role(j) == "held-at-stop" for j in started_down):
            self.err("failopen", "no held job was handed back and started while lucidd was down")
        for jid, rs in self.runs.items():
            for r in rs:
                if r[0] == "stop" and r[2] == "main":
                    self.err("failopen", f"job {jid} ({self.role(jid)}) was stopped on main at {r[6]:.1f} "
                             f"(a handed-back running job must never be requeued)")

    def run(self):
        self.check_once()
        self.check_gpus()
        self.check_run()
        self.check_phases()
        self.check_order()
        self.check_start_estimates()
        self.check_history()
        if self.mode == "operator":
            self.check_rules()
            self.check_fairshare()
        if self.mode in ("outages", "operator"):
            self.check_ticks()
        if self.mode == "failopen":
            self.check_failopen()
        ran = sum(1 for j in self.jobs if self.starts(j))
        print(f"check_operator ({self.mode}): {len(self.jobs)} jobs, {ran} ran, "
              f"{len(self.snaps)} snapshots ({getattr(self, 'usable_snaps', 0)} with both views), "
              f"{len(self.errors)} failed expectations")
        with open(f"{self.lab}/errors.txt", "a") as f:
            for e in self.errors:
                f.write(e + "\n")
        return 1 if self.errors else 0


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv[1], argv[2:]
    if cmd == "phase" and len(args) == 2:
        return cmd_phase(*args)
    if cmd == "ticks" and len(args) == 1:
        return cmd_ticks(*args)
    if cmd == "metrics" and len(args) == 1:
        return cmd_metrics(*args)
    if cmd == "sample" and len(args) == 4:
        return cmd_sample(*args)
    if cmd == "slow-clients" and len(args) == 3:
        return cmd_slow_clients(*args)
    if cmd == "check" and len(args) == 3:
        return Check(*args).run()
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

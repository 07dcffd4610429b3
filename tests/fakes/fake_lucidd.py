#!/usr/bin/env python3
"""fake_lucidd.py SOCKET ME LOG [NOW] — answers lucidd's socket protocol
(docs/live.md "Socket protocol") with five fixed jobs, so `lucid queue` is
tested without Slurm or a daemon (tests/cli_queue.sh).  Times are relative
to NOW (default: the start; the test passes its own, so that times it
prints to the minute cannot straddle a minute a slow run crosses); priorities 9, 99, 999 and 0 (and 103's order value 9999) have round display values;
103 and 105 carry fair-share factors 0.25 and 1.0, the others none (-1).
Every request is appended to LOG as one JSON line."""
import json
import socket
import sys
import time

path, me, log = sys.argv[1:4]
now = int(sys.argv[4]) if len(sys.argv) > 4 else int(time.time())
job = dict(user="", name="", partition="main", phase="", gpus=1, nodes=1, priority=0.0,
           estimate_s=0.0, sharing_score=-1, packed_with=0, node_list="", gpu_list="",
           reason="", submit_time=now - 7200, profile_start=0, main_start=0, end_time=0, runs=0,
           start_p10=0, start_p50=0, start_p90=0, start_none="", jobs_ahead=0, reserved_at=0,
           reserved_nodes="", reserved_since=0, fairshare=-1.0)
jobs = [
    dict(job, job=101, user="alice", name="train-a", phase="running", gpus=8, priority=99.0,
         main_start=now - 3725, node_list="n1", reason="placed on n1"),
    dict(job, job=102, user=me, name="eval", partition="profiling", phase="profiling",
         priority=9.0, profile_start=now - 65, node_list="p1", reason="profiling on p1"),
    dict(job, job=103, user="alice", name="big", phase="main-queue", gpus=16, nodes=2,
         priority=999.0, reason="waits for 16 GPUs: 8 free", fairshare=0.25, order_priority=9999.0,
         start_p10=now + 1800, start_p50=now + 3600, start_p90=now + 7200, jobs_ahead=3,
         reserved_at=now + 3600, reserved_nodes="n3,n4", reserved_since=now - 1200),
    dict(job, job=104, user="carol", name="vé€ry\nlong\x1b[31mjob-name", phase="done", gpus=2,
         main_start=now - 100000, end_time=now - 100000 + 90061, node_list="n2",
         reason="ended COMPLETED"),
    # Waits behind 103's reservation and holds none of its own.
    dict(job, job=105, user="dave", name="small", phase="main-queue", gpus=2, priority=0.0, fairshare=1.0,
         reason="waits for 2 GPUs: 0 free", start_p10=now + 600, start_p50=now + 1200,
         start_p90=now + 2400, jobs_ahead=4),
]
# Without fair share the order is the priority (as lucidd answers).
for j in jobs:
    j.setdefault("order_priority", j["priority"])
final = {"done", "done-in-profiler", "failed"}

server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
server.listen(8)
while True:
    conn, _ = server.accept()
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    request = json.loads(data)
    with open(log, "a") as f:
        f.write(json.dumps(request, sort_keys=True) + "\n")
    if request.get("cmd") == "queue":
        reply = {"ok": True, "jobs": [j for j in jobs if request.get("all") or j["phase"] not in final]}
    elif request.get("cmd") == "explain" and any(j["job"] == request.get("job") for j in jobs):
        job = next(j for j in jobs if j["job"] == request.get("job"))
        reply = {"ok": True, "job": job, "estimate": {"model": "duration", "version": 0, "why": ""},
                 "phases": [], "profile": {"samples": 0}, "decisions": []}
    else:
        reply = {"ok": False, "error": "bad request: fake lucidd knows only queue and explain"}
    conn.sendall((json.dumps(reply) + "\n").encode())
    conn.close()

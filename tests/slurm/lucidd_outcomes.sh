#!/usr/bin/env bash
# lucidd_outcomes.sh — outcomes of jobs that ended while lucidd was away
# come from slurmdbd on a lab with accounting storage (issue 28).
#   bash lucidd_outcomes.sh SOURCE_DIR BUILD_DIR
# Lab: the site profile (slurmdbd on MariaDB; jobcomp/filetxt kept too, so
# the test checks which one lucid read), 1 main + 1 profiling node,
# MinJobAge 2 s (slurmctld then purges every 10 s).  Two 1-GPU jobs start in
# the profiler (limit 120 s), one that completes and one that exits 3;
# lucidd is SIGKILLed while they run and restarted once Slurm no longer
# lists them.  Checked: each job's outcome, phase and reason name slurmdbd
# ("Slurm's accounting, slurmdbd: COMPLETED" / "FAILED"), and its start and
# end are sacct's; lucidd then stops cleanly on SIGTERM (LeakSanitizer's exit
# status under ASan).  Waits are on what Slurm and lucidd report.
set -euo pipefail
SRC=$1 BUILD=$2
LAB=$BUILD/lab-outcomes
rm -rf "$LAB"
mkdir -p "$LAB"
LUCIDD_PID=""
cleanup() {
    if [[ -n $LUCIDD_PID ]]; then
        kill -KILL "$LUCIDD_PID" 2>/dev/null || true
        wait "$LUCIDD_PID" 2>/dev/null || true
    fi
    bash "$SRC/scripts/lab-cluster.sh" down "$LAB" >/dev/null 2>&1 || true
}
trap cleanup EXIT
fail() { echo "lucidd_outcomes: $*" >&2; tail -n 20 "$LAB/lucidd.log" >&2 || true; exit 1; }

# With lucid's plugins, as a site runs it: a job is held at submission, so
# Slurm cannot start it before lucidd takes it in.
bash "$SRC/scripts/lab-cluster.sh" up "$LAB" --profile site --nodes 1 --prof-nodes 1 \
    --min-job-age 2 --plugins "$BUILD/plugins" >/dev/null
export SLURM_CONF=$LAB/etc/slurm.conf
grep -q '^AccountingStorageType=accounting_storage/slurmdbd' "$SLURM_CONF" ||
    fail "the site profile has no slurmdbd"
SOCK=$LAB/lucidd.sock

start_lucidd() {
    setsid "$BUILD/lucidd" --state "$LAB/lucid.db" --socket "$SOCK" --tick-ms 250 --heartbeat "$LAB/heartbeat" \
        --profile-limit 120 --metrics-test-dir "$LAB" </dev/null >>"$LAB/lucidd.log" 2>&1 &
    LUCIDD_PID=$!
}
source "$SRC/tests/lib/wait.sh"
# PHASE of job ID in lucid's listing ("" when absent).
phase() {
    "$BUILD/lucid" queue --all --json --socket "$SOCK" 2>/dev/null | python3 -c '
import json, sys
jobs = json.load(sys.stdin)["jobs"]
print(next((j["phase"] for j in jobs if j["job"] == int(sys.argv[1])), ""))' "$1"
}
in_phase() { [[ $(phase "$1") == "$2" && $(phase "$3") == "$2" ]]; }
ended() { [[ $(phase "$1") =~ ^(done|done-in-profiler|failed|ended-unknown)$ && $(phase "$2") =~ ^(done|done-in-profiler|failed|ended-unknown)$ ]]; }
purged() { ! squeue -h -t all -j "$1,$2" 2>/dev/null | grep -q .; }

start_lucidd
wait_until 30 "lucidd to answer" "$BUILD/lucid" status --socket "$SOCK"
wait_until 10 "lucidd's heartbeat (the lab fails open without it)" test -s "$LAB/heartbeat"
OK=$(sbatch --parsable --gres=gpu:1 -t 5 -o /dev/null --wrap 'sleep 20')
BAD=$(sbatch --parsable --gres=gpu:1 -t 5 -o /dev/null --wrap 'sleep 20; exit 3')
wait_until 60 "both jobs profiling" in_phase "$OK" profiling "$BAD"
kill -KILL "$LUCIDD_PID"
wait "$LUCIDD_PID" 2>/dev/null || true
LUCIDD_PID=""
wait_until 90 "Slurm to purge jobs $OK and $BAD" purged "$OK" "$BAD"
start_lucidd
wait_until 30 "lucidd to answer" "$BUILD/lucid" status --socket "$SOCK"
wait_until 60 "lucid to finish jobs $OK and $BAD" ended "$OK" "$BAD"

"$BUILD/lucid" queue --all --json --socket "$SOCK" >"$LAB/queue.json"
sacct -X -n -P -j "$OK,$BAD" -o JobID,State,Start,End >"$LAB/sacct.txt"
python3 - "$LAB/queue.json" "$LAB/sacct.txt" "$OK" "$BAD" <<'EOF'
import datetime, json, sys
jobs = {j["job"]: j for j in json.load(open(sys.argv[1]))["jobs"]}
acct = {}
for line in open(sys.argv[2]):
    job, state, start, end = line.strip().split("|")
    to_s = lambda t: int(datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%S").timestamp())
    acct[int(job)] = (state, to_s(start), to_s(end))
ok, bad = int(sys.argv[3]), int(sys.argv[4])
errors = []
for job, state, phase in ((ok, "COMPLETED", "done-in-profiler"), (bad, "FAILED", "failed")):
    j = jobs[job]
    want = "Slurm's accounting, slurmdbd: " + state
    if want not in j["reason"]:
        errors.append(f"job {job}: reason {j['reason']!r} does not say {want!r}")
    if j["phase"] != phase:
        errors.append(f"job {job}: phase {j['phase']}, want {phase}")
    if acct[job][0] != state:
        errors.append(f"job {job}: sacct says {acct[job][0]}, want {state}")
    if (j["profile_start"], j["end_time"]) != acct[job][1:]:
        errors.append(f"job {job}: start/end {j['profile_start']}/{j['end_time']}, sacct {acct[job][1:]}")
for e in errors:
    print("lucidd_outcomes:", e, file=sys.stderr)
sys.exit(1 if errors else 0)
EOF
# A clean stop: under ASan, LeakSanitizer's verdict on the slurmdbd path.
kill -TERM "$LUCIDD_PID"
rc=0
wait "$LUCIDD_PID" || rc=$?
LUCIDD_PID=""
((rc == 0)) || fail "lucidd exited with status $rc after SIGTERM (LeakSanitizer reports in $LAB/lucidd.log)"
echo "lucidd_outcomes: ok (jobs $OK completed and $BAD failed, read from slurmdbd)"

#!/usr/bin/env bash
# cli_queue.sh — `lucid queue` as squeue: columns, higher-is-first priority,
# -u/--me/-j/-t filters, -o format letters, usage errors (exit 2), against a
# fake lucidd on a UNIX socket (tests/fakes/fake_lucidd.py; no Slurm needed).
# Usage: cli_queue.sh LUCID SOURCE_DIR
set -u
source "$2/tests/lib/checks.sh"
me=$(id -un)
# The fake's jobs are timed from base; expected times below are printed from
# it too (a slow run, e.g. under ASan, may cross a minute meanwhile).
base=$(date +%s)
python3 "$src/tests/fakes/fake_lucidd.py" "$tmp/sock" "$me" "$tmp/requests" "$base" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 50); do [ -S "$tmp/sock" ] && break; sleep 0.1; done
export LUCID_SOCKET=$tmp/sock
q() { "$lucid" queue "$@"; }

# The default table: header, then one line per live job (done ones hidden).
out=$(q)
check "exit 0" test $? -eq 0
check "header" test "$(head -1 <<<"$out" | tr -s ' ')" = " JOBID PARTITION NAME USER PHASE GPUS ELAPSED NODES PRIORITY START REASON"
check "four live jobs" test "$(tail -n +2 <<<"$out" | wc -l)" -eq 4
# PRIORITY = 10^9 - 10^8 log10(1 + p): p = 9, 99, 999 -> 9e8, 8e8, 7e8.
line=$(grep '^ *101 ' <<<"$out" | tr -s ' ')
check "running job's columns: $line" grep -Eq '^ 101 main train-a alice running 8 1:02:0[5-8] 1 800000000 now placed on n1$' <<<"$line"
check "profiling job" grep -Eq '^ *102 +profiling +eval .* profiling +1 +1:0[5-8] +1 +900000000 ' <<<"$out"
check "waiting job: no elapsed time" grep -Eq '^ *103 +main +big +alice +main-queue +16 +0:00 +2 +700000000 +~[0-9:]+ \([0-9:]+-[0-9:]+\) +waits for 16 GPUs' <<<"$out"
check "priority higher-is-first (order of jobs 105, 102, 101, 103)" test "$(q --noheader -o '%Q %i' | sort -rn | cut -d' ' -f2 | paste -sd,)" = 105,102,101,103

# START: the predicted start ~P50 (P10-P90), in local time to the minute
# (the fake's job 103: now + 1 h, interval now + 30 min .. now + 2 h).
hm() { date -d "@$((base + $1))" +%H:%M; }
start=$(q --noheader -j 103 -o %S)
check "START of a waiting job: $start" test "$start" = "~$(hm 3600) ($(hm 1800)-$(hm 7200))"
check "START of a running job" test "$(q --noheader -j 101 -o %S)" = now
check "START of a finished job" test "$(q --noheader -a -j 104 -o %S)" = -
# The one-sentence reason of `lucid explain JOB`.
why=$("$lucid" explain 103 | grep '^start: ')
check "explain's sentence: $why" test "$why" = "start: waits for 16 GPUs; reserved for it since $(hm -1200); from ~$(hm 3600) on n3,n4; 3 jobs ahead of it; start ~$(hm 3600) (likely $(hm 1800)-$(hm 7200))"
# A job that holds no reservation says none (its reserved_since and reserved_at are 0).
why=$("$lucid" explain 105 | grep '^start: ')
check "explain without a reservation: $why" test "$why" = "start: waits for 2 GPUs; 4 jobs ahead of it; start ~$(hm 1200) (likely $(hm 600)-$(hm 2400))"

# Filters.
check "-u alice" test "$(q --noheader -u alice -o %i | paste -sd,)" = 101,103
check "--user=alice,carol -a" test "$(q --noheader --user=alice,carol -a -o %i | paste -sd,)" = 101,103,104
check "--me" test "$(q --noheader --me -o %i:%u)" = "102:$me"
check "-j 101,104 (104 finished: hidden)" test "$(q --noheader -j 101,104 -o %i)" = 101
check "-j 101,104 --all" test "$(q --noheader -j 101,104 --all -o %i | paste -sd,)" = 101,104
check "-t main-queue,profiling" test "$(q --noheader -t main-queue,profiling -o %i | paste -sd,)" = 102,103,105
# A finished phase asks lucidd for finished jobs too.
check "-t done" test "$(q --noheader -t done -o '%i %M %N')" = "104 1-01:01:01 n2"
check "-t done sent all:true" grep -q '"all": true' <(tail -1 "$tmp/requests")

# Format letters, justification and truncation as squeue's.
check "-o fields" test "$(q --noheader -j 101 -o '%i|%P|%j|%u|%T|%b|%D|%N|%Q|%e|%R')" = "101|main|train-a|alice|running|8|1|n1|800000000|0|n1"
# A waiting job's reason names the reservation it holds, since when and where.
check "%R: reason and reservation when waiting" test "$(q --noheader -j 103 -o '%R')" = "waits for 16 GPUs: 8 free; reserved for it since $(hm -1200); from ~$(hm 3600) on n3,n4"
check "%r: the same" test "$(q --noheader -j 103 -o '%r')" = "waits for 16 GPUs: 8 free; reserved for it since $(hm -1200); from ~$(hm 3600) on n3,n4"
check "%r: no reservation, none said" test "$(q --noheader -j 105 -o '%r')" = "waits for 2 GPUs: 0 free"
check "%r of a running job: its reason" test "$(q --noheader -j 101 -o '%r')" = "placed on n1"
check "--json: reserved_since" grep -q '"reserved_since": [1-9]' <(q --json)
check "%F %Y: fair share and order like sprio" test "$(q --noheader -j 103,105 -o '%i %F %Y' | paste -sd,)" = "103 0.250 600000000,105 1.000 1000000000"
check "%F unknown: -, %Y without factors = %Q" test "$(q --noheader -j 101 -o '%F %Y %Q')" = "- 800000000 800000000"
check "--factors header" test "$(q --factors -j 101 | head -1 | tr -s ' ')" = " JOBID USER PHASE GPUS EST_S PRIORITY FAIRSHARE ORDER"
check "--factors row" test "$(q --factors --noheader -j 103 | tr -s ' ')" = " 103 alice main-queue 16 0 700000000 0.250 600000000"
check "-o overrides --factors" test "$(q --factors --noheader -j 103 -o '%i')" = 103
check "-o justification" test "$(q --noheader -j 101 -o '[%.5i][%5i][%.2j]')" = "[  101][101  ][tr]"
check "-o header" test "$(q -j 101 -o '%i %Q' | head -1)" = "JOBID PRIORITY"
check "%%" test "$(q --noheader -j 101 -o '%i%%')" = "101%"

# --json keeps lucid's own priority (lower first).
check "--json raw priority" grep -q '"priority": 99' <(q --json)

# --json lists the jobs the filters keep, as the table does.
ids() { python3 -c 'import json,sys; print(",".join(str(j["job"]) for j in json.load(sys.stdin)["jobs"]))'; }
check "--json -j 103" test "$(q --json -j 103 | ids)" = 103
check "--json -u alice" test "$(q --json -u alice | ids)" = 101,103
check "--json -u alice -t running" test "$(q --json -u alice -t running | ids)" = 101
# A name with a newline, an escape sequence and multi-byte characters: shown
# on one line, control characters as '?', cut on a character boundary.
name=$(q --noheader -a -j 104 -o '%.12j')
check "control characters shown as ?: $name" test "$name" = "vé€ry?long?["
check "a job per line with such a name" test "$(q --noheader -a | wc -l)" -eq 5
cut=$(q --noheader -a -j 104 -o '%2j')
check "cut inside no character: $cut" test "$cut" = "vé"

# Usage errors: one line, exit 2.  Failures: exit 1.
usage_error() { # description expected command...
    local what=$1 want=$2 rc
    shift 2
    expect_error "$what" "$want" "$@"
    "$@" >/dev/null 2>&1
    rc=$?
    check "$what: exit 2 (got $rc)" test "$rc" -eq 2
}
usage_error "unknown format letter" "unknown field '%z'" "$lucid" queue -o '%i %z'
usage_error "unknown phase" "-t: unknown phase 'pending'" "$lucid" queue -t pending
usage_error "unknown option" "unknown argument '--frob'" "$lucid" queue --frob
usage_error "missing value" "option -u needs a value" "$lucid" queue -u
check "-h" "$lucid" queue -h >/dev/null
check "-h prints usage" grep -q 'usage: lucid queue' <("$lucid" queue -h)
expect_error "no daemon" "cannot reach lucidd at $tmp/none" "$lucid" queue --socket "$tmp/none"
"$lucid" queue --socket "$tmp/none" >/dev/null 2>&1
check "no daemon: exit 1" test $? -eq 1
finish cli_queue

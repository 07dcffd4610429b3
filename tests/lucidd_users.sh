#!/usr/bin/env bash
# lucidd's socket opened to users (tests/lucidd_users.sh LUCIDD SRC LUCID):
# a real lucidd with Slurm unreachable, jobs seeded in its state store,
# configured by a --config file with the service options.  Users this
# test creates (useradd; removed at exit) ask `lucid queue`/`explain`:
#   - the socket belongs to --socket-group with mode 0660: a user outside
#     the group cannot connect at all;
#   - a user in the group sees only their own jobs, and `explain` of
#     another's job answers "not your job";
#   - a member of --admin-group (a supplementary group) sees every job;
#   - `status` is the same global count for everyone;
#   - /metrics listens on --metrics-bind (::1 when the host has IPv6).
# And syslog: in a private mount namespace whose /dev/log is this test's
# listener, `--log both` sends lucidd's lines there (facility daemon, info;
# a refused start at err) and to stderr, unless stderr is the journal
# ($JOURNAL_STREAM); `--log stderr` sends nothing.
# Needs root, useradd/groupadd, setpriv (and unshare for the syslog part);
# skips what it cannot do and says so.
source "$(dirname "$0")/lib/checks.sh" "$1" "$2"
lucidd=$lucid
cli=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
py=/usr/bin/python3
if [ "$(id -u)" != 0 ] || ! command -v useradd >/dev/null || ! command -v setpriv >/dev/null; then
    echo "lucidd_users: needs root, useradd and setpriv: skipped"
    exit 0
fi
chmod 0755 "$tmp"
source "$(dirname "$0")/lib/no_slurm.sh"

# Two groups and three users, unique to this run, removed at exit.
tag=lt$$
users_group=${tag}u admin_group=${tag}a
alice=${tag}alice bob=${tag}bob carol=${tag}carol
cleanup() {
    [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    for u in "$alice" "$bob" "$carol"; do userdel "$u" 2>/dev/null; done
    for g in "$users_group" "$admin_group"; do groupdel "$g" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM # the users and groups go also when the test is killed
groupadd "$users_group" && groupadd "$admin_group" &&
    useradd -M -N -g nogroup -G "$users_group" "$alice" &&
    useradd -M -N -g nogroup "$bob" &&
    useradd -M -N -g nogroup -G "$users_group,$admin_group" "$carol" ||
    { echo "FAIL: cannot create the test users and groups"; exit 1; }
as() { # USER COMMAND...: the user's own uid, primary and supplementary groups
    local user=$1
    shift
    setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups "$@"
}

# The schema, from a first start; then jobs: 1 and 3 alice's, 2 bob's, 4 carol's.
"$lucidd" --state "$tmp/state.db" --socket "$tmp/first.sock" --log stderr 2>/dev/null &
pid=$!
for _ in $(seq 50); do [ -S "$tmp/first.sock" ] && break; sleep 0.1; done
kill -TERM "$pid"; wait "$pid"; pid=
$py - "$tmp/state.db" "$alice" "$bob" "$carol" <<'EOT'
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
now = int(time.time())
for job, user in ((1, sys.argv[2]), (2, sys.argv[3]), (3, sys.argv[2]), (4, sys.argv[4])):
    db.execute("INSERT INTO jobs(job_id,user,name,partition,gpus,nodes,submit_time,phase,"
               "phase_since,profile_start,main_start,end_time,estimate_s,priority,sharing_score,"
               "packed_with,node_list,gpu_list,reason,runs) VALUES(?,?,?,'main',1,1,?,'main-queue',"
               "?,0,0,0,600,600,1,0,'','','seeded',0)", (job, user, "job%d" % job, now, now))
db.commit()
EOT

ipv6=0
$py -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null && ipv6=1
port=$($py -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
bind=127.0.0.1
[ $ipv6 = 1 ] && bind=::1
sock=$tmp/sock
cat >"$tmp/lucidd.conf" <<EOT
state = $tmp/state.db
socket = $sock
socket-mode = 0660        # with socket-group: lucidd's user and that group only
socket-group = $users_group
admin-group = $admin_group
metrics-port = $port
metrics-bind = $bind
log = stderr
tick-ms = 100
EOT
"$lucidd" --config "$tmp/lucidd.conf" 2>>"$tmp/lucidd.log" &
pid=$!
for _ in $(seq 100); do
    [ -S "$sock" ] && "$cli" status --socket "$sock" >/dev/null 2>&1 && break
    sleep 0.1
done
check "lucidd serves the configured socket" test -S "$sock"
check "socket group and mode from the config ($(stat -c '%G %a' "$sock"))" \
    test "$(stat -c '%G %a' "$sock")" = "$users_group 660"

ids() { # USER: the job ids `lucid queue` shows that user, as "1 3"
    as "$1" "$cli" queue --socket "$sock" -o '%i' --noheader 2>&1 | tr '\n' ' ' | sed 's/ $//'
}
check "alice sees her jobs only ($(ids "$alice"))" test "$(ids "$alice")" = "1 3"
check "carol (admin group) sees every job ($(ids "$carol"))" test "$(ids "$carol")" = "1 2 3 4"
check "root sees every job" test "$("$cli" queue --socket "$sock" -o '%i' --noheader | tr '\n' ' ')" = "1 2 3 4 "
expect_error "bob (not in the socket group) cannot connect" "Permission denied" \
    as "$bob" "$cli" queue --socket "$sock"
expect_error "alice: explain of bob's job" "not your job" \
    as "$alice" "$cli" explain 2 --socket "$sock"
check "alice: explain of her own job" as "$alice" "$cli" explain 3 --socket "$sock" >/dev/null
mq() { "$@" "$cli" status --json --socket "$sock" | $py -c 'import json,sys; print(json.load(sys.stdin)["phases"]["main-queue"])'; }
check "status counts are global (alice: $(mq as "$alice"))" test "$(mq as "$alice")" = 4
if [ $ipv6 = 1 ]; then
    metrics=$($py -c "import urllib.request; print(urllib.request.urlopen('http://[::1]:$port/metrics').read().decode())")
    check "/metrics on [::1]:$port" grep -q '^lucid_ticks_total' <<<"$metrics"
    check "/metrics not on 127.0.0.1 when bound to ::1" \
        $py -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1', $port)) == 0)"
else
    echo "lucidd_users: no IPv6 loopback: --metrics-bind ::1 not checked"
fi
check "the log names the bind address" grep -q "metrics $bind:$port\|metrics \[$bind\]:$port" "$tmp/lucidd.log"
kill -TERM "$pid"; wait "$pid"; pid=
# lucidd's user must belong to --socket-group: refused at start, socket removed.
mkdir -m 0777 "$tmp/nb"
expect_error "socket group lucidd's user is not in" \
    "cannot give $tmp/nb/sock to group $users_group: Operation not permitted (lucidd's user must be a member)" \
    setpriv --reuid=nobody --regid=nogroup --clear-groups "$lucidd" --state "$tmp/nb/s.db" \
    --socket "$tmp/nb/sock" --socket-group "$users_group" --socket-mode 0660 --log stderr
check "the refused socket is not left behind" test ! -e "$tmp/nb/sock"

# syslog: a private /dev with this test's listener as /dev/log.
if unshare -m true 2>/dev/null; then
    cat >"$tmp/syslog.sh" <<EOT
set -e
mount -t tmpfs none /dev
mknod -m 666 /dev/null c 1 3
$py -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind("/dev/log")
open(sys.argv[1] + ".ready", "w").close()
s.settimeout(3)
with open(sys.argv[1], "w") as out:
    try:
        while True:
            out.write(s.recv(4096).decode(errors="replace").rstrip("\0") + "\n"); out.flush()
    except socket.timeout:
        pass
' "\$1" &
listener=\$!
while [ ! -e "\$1.ready" ]; do sleep 0.05; done
shift
"\$@" 2>>"\${STDERR_FILE:-/dev/null}" &
daemon=\$!
sleep 1
kill -TERM \$daemon 2>/dev/null || true
wait \$daemon || true
wait \$listener
EOT
    run_logged() { # FILE LOG-MODE: lucidd for 1 s, its syslog lines in FILE
        unshare -m bash "$tmp/syslog.sh" "$1" "$lucidd" --state "$tmp/sys.db" \
            --socket "$tmp/sys.sock" --log "$2" --tick-ms 100
    }
    run_logged "$tmp/both.log" both
    sed "s/^/  syslog got: /" "$tmp/both.log"
    check "--log both: the start line reaches syslog at daemon.info ($(head -c 120 "$tmp/both.log"))" \
        grep -q '^<30>.*lucidd\[[0-9]*\]: state .*jobs known' "$tmp/both.log"
    check "--log both: the stop line too" grep -q '^<30>.*lucidd\[[0-9]*\]: stopping' "$tmp/both.log"
    run_logged "$tmp/stderr.log" stderr
    # Under systemd (stderr is the journal: $JOURNAL_STREAM names it), both
    # means syslog only: the journal would get every line twice.
    : >"$tmp/journal"
    STDERR_FILE=$tmp/journal JOURNAL_STREAM=$(stat -c '%d:%i' "$tmp/journal") \
        run_logged "$tmp/journald.log" both
    check "stderr is the journal: the lines go to syslog ($(wc -l <"$tmp/journald.log") lines)" \
        grep -q 'lucidd\[[0-9]*\]: stopping' "$tmp/journald.log"
    check "stderr is the journal: not twice ($(cat "$tmp/journal"))" test ! -s "$tmp/journal"
    STDERR_FILE=$tmp/plain run_logged "$tmp/plain.log" both
    check "stderr elsewhere: both get the lines" grep -q 'lucidd: stopping' "$tmp/plain"
    check "--log stderr: nothing reaches syslog ($(cat "$tmp/stderr.log"))" test ! -s "$tmp/stderr.log"
    # A refused start (the state is locked by a running lucidd) is logged at daemon.err.
    "$lucidd" --state "$tmp/sys.db" --socket "$tmp/sys2.sock" --log stderr 2>/dev/null &
    pid=$!
    for _ in $(seq 50); do [ -S "$tmp/sys2.sock" ] && break; sleep 0.1; done
    run_logged "$tmp/err.log" syslog
    check "a refused start reaches syslog at daemon.err ($(cat "$tmp/err.log"))" \
        grep -q '^<27>.*lucidd\[[0-9]*\]: state .* is in use by lucidd pid' "$tmp/err.log"
    kill -TERM "$pid"; wait "$pid"; pid=
else
    echo "lucidd_users: cannot make a mount namespace (unshare -m): syslog checks skipped"
fi
finish lucidd_users

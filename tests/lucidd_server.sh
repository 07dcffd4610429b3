#!/usr/bin/env bash
# lucidd serving clients without Slurm (tests/lucidd_server.sh LUCIDD SRC LUCID):
# a real lucidd whose Slurm is unreachable (a slurm.conf naming a port
# nobody listens on) keeps ticking and answering; `lucid status` says since
# when Slurm is unreachable; slow clients as the unprivileged user `nobody`,
# on the socket and on /metrics, are cut off at their deadline while the
# ticks go on at the tick rate; one lucidd per state file and per socket;
# a stale socket is replaced, a foreign file is not, and lucidd removes
# only the socket it bound.
source "$(dirname "$0")/lib/checks.sh" "$1" "$2"
lucidd=$lucid
cli=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
py=/usr/bin/python3
chmod 0711 "$tmp" # nobody must reach the socket inside
source "$(dirname "$0")/lib/no_slurm.sh"
port=$($py -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sock=$tmp/sock

start_lucidd() { # STATE SOCKET [options]: runs it in the background, waits for its socket
    local state=$1 socket=$2
    shift 2
    "$lucidd" --state "$state" --socket "$socket" --tick-ms 100 "$@" 2>>"$tmp/lucidd.log" &
    pid=$!
    for _ in $(seq 100); do
        [ -S "$socket" ] && "$cli" status --socket "$socket" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}

ticks() { "$cli" status --json --socket "$sock" | $py -c 'import json,sys; print(json.load(sys.stdin)["ticks"])'; }

check "lucidd starts without Slurm" start_lucidd "$tmp/state.db" "$sock" --socket-mode 0666 \
    --metrics-port "$port"
first=$pid

# Slurm unreachable: status answers at once and says since when.
start=$(date +%s.%N)
out=$("$cli" status --socket "$sock")
took=$(awk "BEGIN { printf \"%.3f\", $(date +%s.%N) - $start }")
check "status says Slurm is unreachable" grep -q '^slurm: *Slurm unreachable since 20[0-9-]* [0-9:]* UTC' <<<"$out"
check "status answers within 1 s ($took s)" awk "BEGIN { exit !($took < 1) }"

# One lucidd per state file, one per socket.
expect_error "second lucidd on the same state" "state $tmp/state.db is in use by lucidd pid $first" \
    "$lucidd" --state "$tmp/state.db" --socket "$tmp/other.sock"
expect_error "second lucidd on the same socket" "another lucidd serves $sock" \
    "$lucidd" --state "$tmp/other.db" --socket "$sock"
check "the refused one touched no state" test ! -e "$tmp/other.db"
check "the first still serves its socket" "$cli" status --socket "$sock" >/dev/null

# Slow clients as nobody: one byte every 0.9 s on the socket and on /metrics.
cat >"$tmp/dribble.py" <<'EOF'
import socket, sys, time
kind, where = sys.argv[1], sys.argv[2]
if kind == "unix":
    s = socket.socket(socket.AF_UNIX); s.connect(where); req = b'{"cmd":"status"}\n'
else:
    s = socket.create_connection(("127.0.0.1", int(where))); req = b"GET /metrics HTTP/1.0\r\n\r\n"
t0 = time.time()
try:
    for b in req:
        s.send(bytes([b]))
        time.sleep(0.9)
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                break
        except BlockingIOError:
            pass
        s.setblocking(True)
except OSError:
    pass
print("%.1f" % (time.time() - t0))
EOF
nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
if "${nobody[@]}" true 2>/dev/null; then
    before=$(ticks)
    "${nobody[@]}" $py "$tmp/dribble.py" unix "$sock" >"$tmp/cut_unix" &
    slow_unix=$!
    "${nobody[@]}" $py "$tmp/dribble.py" http "$port" >"$tmp/cut_http" &
    slow_http=$!
    sleep 1
    fast=$("${nobody[@]}" "$cli" status --socket "$sock" | grep -c '^ticks:')
    check "nobody is answered while the slow clients dribble" test "$fast" = 1
    wait "$slow_unix" "$slow_http"
    after=$(ticks)
    cut_unix=$(cat "$tmp/cut_unix") cut_http=$(cat "$tmp/cut_http")
    echo "slow clients as nobody: cut after $cut_unix s (socket), $cut_http s (/metrics);" \
        "ticks $before -> $after meanwhile (100 ms ticks)"
    # 100 ms ticks over the slow clients' ~2.7 s: at least 15 (70 % of the rate).
    check "ticks went on during the slow clients ($before -> $after)" test $((after - before)) -ge 15
    check "slow socket client cut at its 2 s deadline ($cut_unix s)" \
        awk "BEGIN { exit !($cut_unix >= 1.8 && $cut_unix <= 3.6) }"
    check "slow /metrics client cut at its 2 s deadline ($cut_http s)" \
        awk "BEGIN { exit !($cut_http >= 1.8 && $cut_http <= 3.6) }"
    metrics=$($py -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$port/metrics').read().decode())")
    check "/metrics counts ticks" grep -q '^lucid_ticks_total [1-9]' <<<"$metrics"
    check "/metrics says Slurm is down" grep -q '^lucid_slurm_up 0' <<<"$metrics"
else
    echo "lucidd_server: cannot run as nobody (not root?): slow-client checks skipped"
fi

# SIGTERM: exits 0 and removes its own socket; the lock goes with it.
kill -TERM "$first"
wait "$first"
check "SIGTERM exits 0" test $? -eq 0
check "socket removed at exit" test ! -e "$sock"
# SIGKILL leaves a stale socket: the next lucidd replaces it.
check "restart on the same state" start_lucidd "$tmp/state.db" "$sock"
{
    kill -KILL "$pid"
    wait "$pid"
} 2>/dev/null
check "SIGKILL leaves the socket" test -S "$sock"
check "a stale socket is replaced" start_lucidd "$tmp/state.db" "$sock"
# Another file at the path while it runs: not ours, so it stays at exit.
mv "$sock" "$tmp/moved.sock"
echo keep >"$sock"
kill -TERM "$pid"
wait "$pid"
check "a path that is no longer its socket is left alone" grep -q keep "$sock"
expect_error "a file at the socket path is not replaced" "$sock exists and is not a socket" \
    "$lucidd" --state "$tmp/state.db" --socket "$sock"
expect_error "bad --socket-mode" "--socket-mode: '0999' is not an octal mode" \
    "$lucidd" --state "$tmp/state.db" --socket "$tmp/s2" --socket-mode 0999
finish lucidd_server

#!/usr/bin/env bash
# lucidd's options without a cluster (tests/lucidd_options.sh LUCIDD SRC):
# values out of range are refused with one clear line before any state or
# Slurm is touched, and --help lists the pair-rule limits `lucid tune`
# writes (score_sum, priority_ratio).
source "$(dirname "$0")/lib/checks.sh" "$1" "$2"
lucidd=$lucid
base=(--state "$tmp/state.db" --socket "$tmp/sock")
expect_error "share GRES not a name" "--share-gres: 'gpu:2' is not a GRES name (letters, digits, _) or none" \
    "$lucidd" "${base[@]}" --share-gres gpu:2
expect_error "score sum not whole" "--score-sum: '2.5' is not a whole number from 0 to 4" \
    "$lucidd" "${base[@]}" --score-sum 2.5
expect_error "score sum above 4" "--score-sum: '5' is not a whole number from 0 to 4" \
    "$lucidd" "${base[@]}" --score-sum 5
expect_error "negative score sum" "--score-sum: '-1' is not a number >= 0" \
    "$lucidd" "${base[@]}" --score-sum -1
expect_error "ratio below 1" "--priority-ratio: '0.5' is not a number >= 1" \
    "$lucidd" "${base[@]}" --priority-ratio 0.5
expect_error "ratio not a number" "--priority-ratio: 'two' is not a number >= 1" \
    "$lucidd" "${base[@]}" --priority-ratio two
expect_error "bad --async-writes" "--async-writes: 'yes' is not on, window or off" \
    "$lucidd" "${base[@]}" --async-writes yes
expect_error "bad --async-reads" "--async-reads: 'window' is not on or off" \
    "$lucidd" "${base[@]}" --async-reads window
expect_error "bad --backfill" "--backfill: 'fifo' is not none, easy or conservative" \
    "$lucidd" "${base[@]}" --backfill fifo
expect_error "backfill margin below 1" "--backfill-margin: '0.5' is not a number >= 1" \
    "$lucidd" "${base[@]}" --backfill-margin 0.5
expect_error "backfill margin above 100" "--backfill-margin: '500' is more than 100" \
    "$lucidd" "${base[@]}" --backfill-margin 500
# The simulator's backfill_window / backfill_min_gpus ranges (backfill.h).
expect_error "backfill window negative" \
    "--backfill-window: '-5' is not a whole number of seconds from 0 to 2147483647" \
    "$lucidd" "${base[@]}" --backfill-window -5
expect_error "backfill window with a unit" \
    "--backfill-window: '20m' is not a whole number of seconds from 0 to 2147483647" \
    "$lucidd" "${base[@]}" --backfill-window 20m
expect_error "backfill window too large" \
    "--backfill-window: '2147483648' is not a whole number of seconds from 0 to 2147483647" \
    "$lucidd" "${base[@]}" --backfill-window 2147483648
expect_error "backfill min GPUs not whole" \
    "--backfill-min-gpus: '8.5' is not a whole number from 0 to 100000" \
    "$lucidd" "${base[@]}" --backfill-min-gpus 8.5
expect_error "backfill min GPUs too large" \
    "--backfill-min-gpus: '100001' is not a whole number from 0 to 100000" \
    "$lucidd" "${base[@]}" --backfill-min-gpus 100001
# Fair share: -1 (the default: Slurm's own weight says) or a weight >= 0.
expect_error "fair-share weight below -1" \
    "--fairshare-weight: '-2' is not -1 (Slurm's weight says) or a number >= 0" \
    "$lucidd" "${base[@]}" --fairshare-weight -2
expect_error "fair-share weight not a number" \
    "--fairshare-weight: 'auto' is not -1 (Slurm's weight says) or a number >= 0" \
    "$lucidd" "${base[@]}" --fairshare-weight auto
printf 'state = x\nsocket = y\nbackfill = easy\nbackfill-window = 1200\nbackfill-min-gpus = nine\n' \
    >"$tmp/window.conf"
expect_error "config: bad backfill-min-gpus named by file and line (the window read)" \
    "window.conf:5: --backfill-min-gpus: 'nine' is not a whole number from 0 to 100000" \
    "$lucidd" --config "$tmp/window.conf"
printf 'state = x\nsocket = y\nbackfill-window = -1\n' >"$tmp/window2.conf"
expect_error "config: bad backfill-window named by file and line" \
    "window2.conf:3: --backfill-window: '-1' is not a whole number of seconds" \
    "$lucidd" --config "$tmp/window2.conf"
printf 'state = x\nsocket = y\nbackfill = EASY\n' >"$tmp/backfill.conf"
expect_error "config: bad backfill named by file and line" \
    "backfill.conf:3: --backfill: 'EASY' is not none, easy or conservative" \
    "$lucidd" --config "$tmp/backfill.conf"
# The service options: where logs go, the socket's group, the admin group,
# the /metrics address; refused with one line before anything is touched.
expect_error "bad --log" "--log: 'journal' is not syslog, stderr or both" \
    "$lucidd" "${base[@]}" --log journal
expect_error "unknown socket group" "--socket-group: no group 'no-such-group-lucid'" \
    "$lucidd" "${base[@]}" --socket-group no-such-group-lucid
expect_error "unknown admin group" "--admin-group: no group 'no-such-group-lucid'" \
    "$lucidd" "${base[@]}" --admin-group no-such-group-lucid
expect_error "metrics bind not an address" "--metrics-bind: 'localhost' is not an IPv4 or IPv6 address" \
    "$lucidd" "${base[@]}" --metrics-bind localhost
expect_error "metrics bind: a port is not part of it" "--metrics-bind: '127.0.0.1:9477' is not" \
    "$lucidd" "${base[@]}" --metrics-bind 127.0.0.1:9477
printf 'state = x\nsocket = y\nlog = stderr\nmetrics-bind = ::1\nsocket-group = %s\nadmin-group = nope-lucid\n' \
    "$(id -gn)" >"$tmp/svc.conf"
expect_error "config: the service keys are read, a bad one named by line" \
    "svc.conf:6: --admin-group: no group 'nope-lucid'" "$lucidd" --config "$tmp/svc.conf"
help=$("$lucidd" --help)
for opt in --socket-group --admin-group --metrics-bind --log; do
    check "help lists $opt" grep -q -- "$opt " <<<"$help"
done
check "help lists --score-sum" grep -q -- '--score-sum X' <<<"$help"
check "help lists --backfill-window" grep -q -- '--backfill-window S' <<<"$help"
check "help lists --backfill-min-gpus" grep -q -- '--backfill-min-gpus N' <<<"$help"
check "help lists --priority-ratio" grep -q -- '--priority-ratio X' <<<"$help"
# --config FILE: long options without --, comments, flags override the file.
printf '# lucidd\nstate = %s/a.db   # inline comment\nsocket = %s/sock\n; other comment\n\nprofile-limit = 300\n' \
    "$tmp" "$tmp" >"$tmp/good.conf"
expect_error "config: a flag overrides the file" "state database $tmp/no/b.db: cannot open" \
    "$lucidd" --config "$tmp/good.conf" --state "$tmp/no/b.db"
check "config: the file's state not used" test ! -e "$tmp/a.db"
printf 'state = x\nsocket = y\nscore-sum = 2.5\n' >"$tmp/bad.conf"
expect_error "config: bad value named by file and line" "bad.conf:3: --score-sum: '2.5' is not a whole number" \
    "$lucidd" --config "$tmp/bad.conf"
printf 'state = x\nfrob = 1\n' >"$tmp/key.conf"
expect_error "config: unknown key" "key.conf:2: unknown key 'frob'" "$lucidd" --config "$tmp/key.conf"
printf 'state\n' >"$tmp/eq.conf"
expect_error "config: no =" "eq.conf:1: expected key = value" "$lucidd" --config "$tmp/eq.conf"
expect_error "config: missing file" "--config $tmp/none.conf: cannot open" "$lucidd" --config "$tmp/none.conf"
expect_error "config: a directory" "--config $tmp: cannot read" "$lucidd" --config "$tmp"
"$lucidd" --config "$tmp/key.conf" >/dev/null 2>&1
check "config: bad file exits 1" test $? -eq 1
"$lucidd" --config "$tmp/good.conf" --frob 1 >/dev/null 2>&1
check "config: bad flag exits 2" test $? -eq 2
# The example shipped with the package parses (it fails later, at its state path).
example=$("$lucidd" --config "$src/packaging/lucidd.conf" --state "$tmp/no/c.db" 2>&1)
check "packaged lucidd.conf parses: $example" grep -q "state database $tmp/no/c.db" <<<"$example"
check "refused runs created no state" test ! -e "$tmp/state.db"
finish lucidd_options

#!/bin/sh
# venus_cmd.sh — the whole Venus command, two builds side by side.
#
#   bench/venus_cmd.sh OLD_LUCID NEW_LUCID [RUNS]
#
# Runs `lucid simulate examples/venus.ini --quiet --out DIR` (six policies,
# reference semantics; start-time predictions on, the default), the same
# with `--set simulate.eta=off`, and the same without --quiet (the command
# as typed, printing Tables 4 and 5 and the progress, here to /dev/null:
# mode "tables"), and mode "rerun": as "on", but into the folder the
# build's previous "rerun" wrote (its files replaced, as a user's rerun
# does; the others start from an empty folder).  RUNS times each (default
# 7), alternating the two builds so that both see the same load on a shared
# machine; prints the median wall (milliseconds, `date +%s%N` around the
# command) and CPU (user + sys seconds, /usr/bin/time) per build and mode
# (on: predictions on, off: predictions off, tables: on without --quiet).
# The mode "tables" matters since simulate works out the tables only when
# it prints them.  Run from the repository root; needs /usr/bin/time.
set -eu
old=${1:?usage: venus_cmd.sh OLD_LUCID NEW_LUCID [RUNS]}
new=${2:?usage: venus_cmd.sh OLD_LUCID NEW_LUCID [RUNS]}
runs=${3:-7}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

one() { # label, output folder, program, extra arguments
    label=$1
    out=$2
    prog=$3
    shift 3
    t0=$(date +%s%N)
    /usr/bin/time -f "%U %S" -o "$work/cpu" \
        "$prog" simulate examples/venus.ini --out "$out" "$@" >/dev/null 2>"$work/err" ||
        { cat "$work/err" >&2; echo "$label: failed" >&2; exit 1; }
    t1=$(date +%s%N)
    echo "$label $(( (t1 - t0) / 1000000 )) $(cat "$work/cpu")" >>"$work/times"
}
fresh() { # label, program, extra arguments
    label=$1
    prog=$2
    shift 2
    rm -rf "$work/out"
    one "$label" "$work/out" "$prog" "$@"
}

# The "rerun" folders hold a run's files before the first timed rerun.
"$old" simulate examples/venus.ini --out "$work/rerun-old" --quiet
"$new" simulate examples/venus.ini --out "$work/rerun-new" --quiet
i=0
while [ $i -lt "$runs" ]; do
    fresh "old on" "$old" --quiet
    fresh "new on" "$new" --quiet
    fresh "old off" "$old" --quiet --set simulate.eta=off
    fresh "new off" "$new" --quiet --set simulate.eta=off
    fresh "old tables" "$old"
    fresh "new tables" "$new"
    one "old rerun" "$work/rerun-old" "$old" --quiet
    one "new rerun" "$work/rerun-new" "$new" --quiet
    i=$((i + 1))
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%-8s %-6s %8s %8s\n' build mode wall_ms cpu_s
for b in old new; do
    for e in on off tables rerun; do
        wall=$(grep "^$b $e " "$work/times" | awk '{ print $3 }' | median)
        cpu=$(grep "^$b $e " "$work/times" | awk '{ print $4 + $5 }' | median)
        printf '%-8s %-6s %8s %8s\n' "$b" "$e" "$wall" "$cpu"
    done
done

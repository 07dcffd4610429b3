#!/bin/sh
# venus_cmd.sh — the whole Venus command, two builds side by side.
#
#   bench/venus_cmd.sh OLD_LUCID NEW_LUCID [RUNS]
#
# Runs `lucid simulate examples/venus.ini --quiet --out DIR` (six policies,
# reference semantics; start-time predictions on, the default), the same
# with `--set simulate.eta=off`, and the same without --quiet (the command
# as typed, printing Tables 4 and 5 and the progress, here to /dev/null:
# mode "tables"), RUNS times each (default 7), alternating the two builds
# so that both see the same load on a shared machine, and prints the median
# wall and CPU (user + sys) seconds per build and mode (on: predictions on,
# off: predictions off, tables: on without --quiet).  The mode "tables"
# matters since simulate works out the tables only when it prints them.
# Run from the repository root; needs /usr/bin/time.
set -eu
old=${1:?usage: venus_cmd.sh OLD_LUCID NEW_LUCID [RUNS]}
new=${2:?usage: venus_cmd.sh OLD_LUCID NEW_LUCID [RUNS]}
runs=${3:-7}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

one() { # label, program, extra arguments
    label=$1
    prog=$2
    shift 2
    rm -rf "$work/out"
    /usr/bin/time -f "$label %e %U %S" -a -o "$work/times" \
        "$prog" simulate examples/venus.ini --out "$work/out" "$@" >/dev/null 2>"$work/err" ||
        { cat "$work/err" >&2; echo "$label: failed" >&2; exit 1; }
}

i=0
while [ $i -lt "$runs" ]; do
    one "old on" "$old" --quiet
    one "new on" "$new" --quiet
    one "old off" "$old" --quiet --set simulate.eta=off
    one "new off" "$new" --quiet --set simulate.eta=off
    one "old tables" "$old"
    one "new tables" "$new"
    i=$((i + 1))
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%-8s %-6s %8s %8s\n' build mode wall_s cpu_s
for b in old new; do
    for e in on off tables; do
        wall=$(grep "^$b $e " "$work/times" | awk '{ print $3 }' | median)
        cpu=$(grep "^$b $e " "$work/times" | awk '{ print $4 + $5 }' | median)
        printf '%-8s %-6s %8s %8s\n' "$b" "$e" "$wall" "$cpu"
    done
done

#!/bin/sh
# venus_cmd.sh — the whole Venus command, two builds side by side.
#
#   bench/venus_cmd.sh OLD_LUCID NEW_LUCID [RUNS]
#
# Runs `lucid simulate examples/venus.ini --quiet --out DIR` (six policies,
# reference semantics; start-time predictions on, the default) and the same
# with `--set simulate.eta=off`, RUNS times each (default 7), alternating
# the two builds so that both see the same load on a shared machine, and
# prints the median wall and CPU (user + sys) seconds per build and mode.
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
        "$prog" simulate examples/venus.ini --quiet --out "$work/out" "$@"
}

i=0
while [ $i -lt "$runs" ]; do
    one "old on" "$old"
    one "new on" "$new"
    one "old off" "$old" --set simulate.eta=off
    one "new off" "$new" --set simulate.eta=off
    i=$((i + 1))
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%-8s %-5s %8s %8s\n' build eta wall_s cpu_s
for b in old new; do
    for e in on off; do
        wall=$(grep "^$b $e " "$work/times" | awk '{ print $3 }' | median)
        cpu=$(grep "^$b $e " "$work/times" | awk '{ print $4 + $5 }' | median)
        printf '%-8s %-5s %8s %8s\n' "$b" "$e" "$wall" "$cpu"
    done
done

#!/bin/sh
# same_outputs.sh — checks that two builds of lucid write the same bytes.
#
#   bench/same_outputs.sh OLD_LUCID NEW_LUCID [WORKDIR]
#
# For a change meant to be pure speed (start-time predictions, output
# formatting): runs both programs on the same experiments and compares
# every output file byte for byte.  MANIFEST and experiment.ini name the
# output folder, so there the line `out = ...` is left out of the
# comparison, the MANIFEST's hash of experiment.ini with it, and the
# MANIFEST's hash values (see norm below).  Experiments: Venus in reference and fixed
# semantics (all six policies, predictions on, as by default), fixed
# semantics with hourly re-predictions, FIFO/QSSF/Lucid with EASY and
# conservative backfill (the other replay modes), and a synthetic trace of
# 20,000 jobs (`lucid trace synth --jobs 20000 --seed 1`, all six
# policies).  Exit 0 when every file matches, 1 otherwise (each difference
# is named).  Run from the repository root.
set -u
old=${1:?usage: same_outputs.sh OLD_LUCID NEW_LUCID [WORKDIR]}
new=${2:?usage: same_outputs.sh OLD_LUCID NEW_LUCID [WORKDIR]}
work=${3:-$(mktemp -d)}
mkdir -p "$work"
fail=0

# The lines that may differ: the output folder, the hash of experiment.ini
# (which names it), the hashes' kind (fnv1a64 in older builds,
# xxh64 now) with their values and the sum over the input hashes.  The
# files themselves are compared byte for byte, and with xxhsum installed the
# new MANIFEST's file hashes are checked against it.
norm() {
    grep -v -e '^out = ' -e '^file = experiment.ini ' -e '^inputs_hash = ' "$1" |
        sed -E 's/ (fnv1a64|xxh64):[0-9a-f]{16}$/ HASH/'
}

check_hashes() { # folder written by the new build
    command -v xxhsum >/dev/null || return 0
    grep '^file = ' "$1/MANIFEST" | while read -r _ _ file hash; do
        want="xxh64:$(xxhsum -H1 "$1/$file" | cut -d' ' -f1)"
        [ "$hash" = "$want" ] || echo "$1: MANIFEST's hash of $file is not its XXH64"
    done | grep . && fail=1
    return 0
}

run_pair() { # name, then the arguments after `simulate`
    name=$1
    shift
    rm -rf "$work/$name.old" "$work/$name.new"
    "$old" simulate "$@" --quiet --out "$work/$name.old" || { echo "$name: old build failed"; fail=1; return; }
    "$new" simulate "$@" --quiet --out "$work/$name.new" || { echo "$name: new build failed"; fail=1; return; }
    for f in "$work/$name.old"/*; do
        b=$(basename "$f")
        g="$work/$name.new/$b"
        if [ ! -f "$g" ]; then
            echo "$name: $b missing in the new run"
            fail=1
        elif [ "$b" = MANIFEST ] || [ "$b" = experiment.ini ]; then
            norm "$f" >"$work/a.tmp"
            norm "$g" >"$work/b.tmp"
            cmp -s "$work/a.tmp" "$work/b.tmp" || { echo "$name: $b differs"; fail=1; }
        else
            cmp -s "$f" "$g" || { echo "$name: $b differs"; fail=1; }
        fi
    done
    for g in "$work/$name.new"/*; do
        [ -f "$work/$name.old/$(basename "$g")" ] || { echo "$name: $(basename "$g") only in the new run"; fail=1; }
    done
    check_hashes "$work/$name.new"
    echo "$name: $(ls "$work/$name.old" | wc -l) files compared"
}

run_pair venus-reference examples/venus.ini
run_pair venus-fixed examples/venus.ini --set simulate.compat=fixed
run_pair venus-hourly examples/venus.ini --set simulate.compat=fixed \
    --set simulate.policies=fifo,qssf,lucid --set simulate.eta_hourly=on
run_pair venus-easy examples/venus.ini --set simulate.compat=fixed \
    --set simulate.policies=fifo,qssf,lucid --set fifo.backfill=easy \
    --set qssf.backfill=easy --set lucid.backfill=easy
run_pair venus-conservative examples/venus.ini --set simulate.compat=fixed \
    --set simulate.policies=fifo,qssf,lucid --set fifo.backfill=conservative \
    --set qssf.backfill=conservative --set lucid.backfill=conservative
if [ ! -f "$work/synth/experiment.ini" ]; then
    "$old" trace synth --jobs 20000 --seed 1 --out "$work/synth" >/dev/null || exit 1
fi
run_pair synth-20k "$work/synth/experiment.ini" --set simulate.eta=on
rm -f "$work/a.tmp" "$work/b.tmp"
[ $fail -eq 0 ] && echo "all outputs identical"
exit $fail

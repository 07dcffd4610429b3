#!/usr/bin/env bash
# cli_progress.sh — long work reports progress on stderr even when it is not
# a terminal (issue 11): after 2 s, one line every 5 s when piped, with one
# job counter for the whole run that only grows and a fixed total; --quiet
# prints nothing.  A 400,000-job synthetic trace keeps all six policies busy
# for several seconds.
# Usage: cli_progress.sh LUCID SOURCE_DIR
set -u
source "$2/tests/lib/checks.sh"

"$lucid" trace synth --jobs 400000 --nodes 4000 --seed 3 --from "$src/data/venus-sept/trace.csv" \
    --from-vcs "$src/data/venus-sept/vc_config.csv" --out "$tmp/synth" >/dev/null || fail "synth"
sed -i "s|= /.*/data/venus-sept/|= $src/data/venus-sept/|" "$tmp/synth/experiment.ini"

start=$(date +%s)
"$lucid" simulate "$tmp/synth/experiment.ini" --out "$tmp/out" --threads 1 2>"$tmp/err" >/dev/null ||
    fail "simulate"
took=$(($(date +%s) - start))
lines=$(grep -c '^simulating: [0-9]* of [0-9]* jobs ([0-9]*%)$' "$tmp/err")
if [ "$took" -ge 3 ] && [ "$lines" -lt 1 ]; then
    fail "no progress line in a ${took}-s run: $(cat "$tmp/err")"
else
    passes=$((passes + 1))
fi
# every line is a progress line, the counter grows, the total stays
if awk '/^lucid: left out/ {next}
        !/^simulating: [0-9]+ of [0-9]+ jobs \([0-9]+%\)$/ {bad=1}
        {if (NR>1 && ($2 < done || $4 != total)) bad=1; done=$2; total=$4}
        END {exit bad}' "$tmp/err"; then
    passes=$((passes + 1))
else
    fail "progress lines: $(cat "$tmp/err")"
fi
"$lucid" simulate "$tmp/synth/experiment.ini" --out "$tmp/out" --threads 1 --quiet 2>"$tmp/err2" >/dev/null
check "--quiet is silent" test ! -s "$tmp/err2"

finish cli_progress

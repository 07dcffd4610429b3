#!/usr/bin/env bash
# lucidd's options without a cluster (tests/lucidd_options.sh LUCIDD SRC):
# values out of range are refused with one clear line before any state or
# Slurm is touched, and --help lists the pair-rule limits `lucid tune`
# writes (score_sum, priority_ratio).
source "$(dirname "$0")/lib/checks.sh" "$1" "$2"
lucidd=$lucid
base=(--state "$tmp/state.db" --socket "$tmp/sock")
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
help=$("$lucidd" --help)
check "help lists --score-sum" grep -q -- '--score-sum X' <<<"$help"
check "help lists --priority-ratio" grep -q -- '--priority-ratio X' <<<"$help"
check "refused runs created no state" test ! -e "$tmp/state.db"
finish lucidd_options

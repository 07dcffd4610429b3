#!/usr/bin/env bash
# cli_tune.sh — `lucid tune`: bad usage gives one clear line and a non-zero
# exit; on Venus the tuner finishes in under 2 minutes, and an independent
# `lucid simulate` of the tuned experiment file (run from another directory)
# reproduces the average JCT the tuner reported for its best configuration;
# the search does not depend on the thread count; an online experiment's
# tuning replays its online run exactly and searches the retrain period.
# Usage: cli_tune.sh LUCID SOURCE_DIR
set -u
source "$2/tests/lib/checks.sh"

venus=$src/examples/venus.ini
expect_error "no experiment" "give an experiment file" "$lucid" tune
expect_error "missing experiment" "nope.ini" "$lucid" tune "$tmp/nope.ini"
expect_error "bad key in experiment" "bad_key.ini:6: [simulate] threadz: unknown key" "$lucid" tune "$src/tests/bad/bad_key.ini"
expect_error "unknown option" "unknown option '--frobnicate'" "$lucid" tune "$venus" --frobnicate
expect_error "bad objective" "--objective: 'speed' is neither jct nor queue" "$lucid" tune "$venus" --objective speed
expect_error "bad knob" "--knobs: 'warp_factor' is not a tunable [lucid] key" "$lucid" tune "$venus" --knobs score_sum,warp_factor
expect_error "bad budget" "--budget: 0 is not between 1 and 100000" "$lucid" tune "$venus" --budget 0
expect_error "bad threads" "--threads: 'two' is not an integer" "$lucid" tune "$venus" --threads two

# best_of LOG FIELD: the tuner's reported value of avg_jct or avg_queue.
best_of() { awk -v key="$2=" '/^best lucid / { for (i = 3; i <= 4; i++) if (index($i, key) == 1) print substr($i, length(key) + 1) }' "$1"; }
# simulated DIR FIELD_INDEX: lucid's all-jobs value in summary.csv (4 = avg_jct, 5 = avg_queue).
simulated() { awk -F, -v f="$2" '$1 == "lucid" && $2 == "all" { print $f }' "$1/summary.csv"; }

# The full tuner on Venus, timed, then verified from another directory.
start=$(date +%s%N)
if (cd "$src" && "$lucid" tune examples/venus.ini --out "$tmp/tuned.ini" >"$tmp/tune.log"); then
    elapsed_ms=$((($(date +%s%N) - start) / 1000000))
    echo "lucid tune examples/venus.ini: ${elapsed_ms} ms"
    # The 2-minute bound is for an optimized build; sanitizers slow it ~15x.
    limit_ms=120000
    if grep -q __asan_init "$lucid"; then limit_ms=600000; fi
    if [ $elapsed_ms -lt $limit_ms ]; then passes=$((passes + 1)); else fail "tune took ${elapsed_ms} ms (limit $limit_ms ms)"; fi
    reported=$(best_of "$tmp/tune.log" avg_jct)
    mkdir -p "$tmp/elsewhere"
    if (cd "$tmp/elsewhere" && "$lucid" simulate ../tuned.ini --quiet --policies lucid --out "$tmp/check"); then
        got=$(simulated "$tmp/check" 4)
        if [ -n "$reported" ] && [ "$got" = "$reported" ]; then
            echo "tuned lucid avg JCT $reported s, verified by lucid simulate"
            passes=$((passes + 1))
        else
            fail "tuner reported avg JCT '$reported', lucid simulate of the tuned file gives '$got'"
        fi
    else
        fail "lucid simulate of the tuned experiment file"
    fi
    grep -q '^sensitivity' "$tmp/tune.log" && grep -q '^profiler_time_limit  *50 ' "$tmp/tune.log" && grep -q '^  *200 \* ' "$tmp/tune.log" &&
        grep -q '^score_sum' "$tmp/tune.log" && passes=$((passes + 1)) || fail "sensitivity table"
    # The tuned file is the original with the knobs replaced: other keys stay.
    grep -q '^borrow_vc = vcYVn$' "$tmp/tuned.ini" && grep -q '^compat = reference$' "$tmp/tuned.ini" &&
        [ "$(grep -c '^score_sum = ' "$tmp/tuned.ini")" -eq 1 ] && passes=$((passes + 1)) || fail "tuned file keeps the other keys"
else
    fail "lucid tune examples/venus.ini"; cat "$tmp/tune.log"
fi

# Objective queue, a few knobs, small budget; the same with one thread.
small() { "$lucid" tune "$venus" --objective queue --knobs score_sum,pack_threshold --budget 12 --quiet "$@"; }
if small --threads 2 --out "$tmp/q2.ini" >"$tmp/q2.log" && small --threads 1 --out "$tmp/q1.ini" >"$tmp/q1.log"; then
    if diff <(grep -v 'simulations in' "$tmp/q1.log" | grep -v 'written to') <(grep -v 'simulations in' "$tmp/q2.log" | grep -v 'written to') >/dev/null &&
        diff <(grep -v '^# Tuned' "$tmp/q1.ini") <(grep -v '^# Tuned' "$tmp/q2.ini") >/dev/null; then
        passes=$((passes + 1))
    else
        fail "tune depends on --threads"
    fi
    reported=$(best_of "$tmp/q2.log" avg_queue)
    # The tuner's queue is the comparable one (docs/semantics.md): the
    # experiment is compat = reference, so the check clears queue_waits_only.
    (cd "$tmp" && "$lucid" simulate q2.ini --quiet --policies lucid --fix queue_waits_only --out "$tmp/checkq") &&
        [ -n "$reported" ] && [ "$(simulated "$tmp/checkq" 5)" = "$reported" ] && passes=$((passes + 1)) ||
        fail "objective queue: reported '$reported', simulated '$(simulated "$tmp/checkq" 5)'"
    # Knobs not searched keep their values.
    grep -q '^profiler_time_limit = 200$' "$tmp/q2.ini" && passes=$((passes + 1)) || fail "unsearched knob changed"
else
    fail "small tune runs"; cat "$tmp/q2.log" "$tmp/q1.log"
fi

# An online experiment (models trained during the run): the first 2,500
# Venus jobs, a month of throughput history, half-day retraining, one bag.
# The tuner replays its online run (exactly: the check line says so),
# searches the retrain period by online runs, and an independent simulation
# of the tuned file gives what it reported.
data=$src/data/venus-sept
head -2501 "$data/trace.csv" >"$tmp/online-trace.csv"
awk -F, 'NR == 1 || ($1 >= "2020-08-01" && $1 < "2020-09-04")' "$data/throughput.csv" >"$tmp/online-history.csv"
cat >"$tmp/online.ini" <<EOF
[trace]
jobs = online-trace.csv
vcs = $data/vc_config.csv
[simulate]
policies = lucid
[lucid]
models = online
history = online-history.csv
sharing_labels = $data/sharing_labels.csv
colocation = $data/colocation_pairs.csv
profiler_nodes_from = vc8Gr:1,vcefl:1
borrow_vc = vcYVn
retrain_period = 43200
model_bags = 1
EOF
# The tuned file goes to another directory: its paths must be absolute.
mkdir -p "$tmp/tuned" "$tmp/elsewhere2"
if (cd "$tmp" && "$lucid" tune online.ini --knobs score_sum,pack_threshold,retrain_period --out tuned/online.ini >online-tune.log); then
    grep -q '^replay check: .* (identical)$' "$tmp/online-tune.log" && passes=$((passes + 1)) || fail "online tune: replay check"
    # The period table: the experiment's 43,200 s and the grid, each an online run.
    awk '/^retrain period: online runs/ { on = 1 } on && /^retrain_period +43200 \*/ { a = 1 } on && / 302400 / { b = 1 } on && / 1209600 / { c = 1 } END { exit !(a && b && c) }' "$tmp/online-tune.log" &&
        passes=$((passes + 1)) || fail "online tune: retrain period table"
    [ "$(grep -c '^retrain_period = ' "$tmp/tuned/online.ini")" -eq 1 ] && grep -q '^model_bags = 1$' "$tmp/tuned/online.ini" &&
        passes=$((passes + 1)) || fail "online tune: tuned file"
    reported=$(best_of "$tmp/online-tune.log" avg_jct)
    if (cd "$tmp/elsewhere2" && "$lucid" simulate ../tuned/online.ini --quiet --out "$tmp/check-online"); then
        got=$(simulated "$tmp/check-online" 4)
        [ -n "$reported" ] && [ "$got" = "$reported" ] && passes=$((passes + 1)) ||
            fail "online tune reported avg JCT '$reported', lucid simulate of the tuned file gives '$got'"
    else
        fail "lucid simulate of the tuned online experiment"
    fi
else
    fail "lucid tune of an online experiment"; cat "$tmp/online-tune.log"
fi

# Equal capacity (the default): every profiler node is taken from a VC, so
# the tuned file's profiler_nodes_from adds up to its profiler_nodes, and
# the result says so; --extra-capacity may add nodes and says how many.
if "$lucid" tune "$venus" --knobs profiler_nodes --budget 8 --objective queue --out "$tmp/cap.ini" >"$tmp/cap.log"; then
    nodes=$(sed -n 's/^profiler_nodes = //p' "$tmp/cap.ini")
    taken=$(sed -n 's/^profiler_nodes_from = //p' "$tmp/cap.ini" | tr ',' '\n' | awk -F: '{ s += $2 } END { print s }')
    check "equal capacity: profiler_nodes_from ($taken) = profiler_nodes ($nodes)" [ -n "$nodes" ] && [ "$taken" = "$nodes" ]
    check "equal capacity said" grep -q "^capacity: equal to the baselines'; the profiler's $nodes nodes are taken from the VCs" "$tmp/cap.log"
else
    fail "lucid tune --knobs profiler_nodes"
fi
"$lucid" tune "$venus" --knobs profiler_nodes --budget 8 --objective queue --extra-capacity --out "$tmp/extra.ini" >"$tmp/extra.log"
check "--extra-capacity prints the added nodes" grep -Eq '^capacity: extra capacity allowed \(--extra-capacity\); the profiler.s 8 nodes take 2 from the VCs \(vc8Gr:1,vcefl:1\) and add 6 nodes \(48 GPUs\)' "$tmp/extra.log"

finish cli_tune

#!/usr/bin/env bash
# cli_conventions.sh — the Unix conventions of both programs: --version,
# `lucid help [VERB]`, --help and -h on every verb and sub-verb (usage on
# stdout, exit 0), exit status 2 for usage errors and 1 for failures, one
# line on stderr; `trace synth` finds its bundled base trace from any
# directory and from a relocated install, and names --from when it cannot.
# lucidd's --version/--help when it was built beside lucid.
# Usage: cli_conventions.sh LUCID SOURCE_DIR
set -u
source "$2/tests/lib/checks.sh"
lucidd=$(dirname "$lucid")/lucidd
version=$(sed -n 's/^project(lucid VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")

# status WANT DESCRIPTION COMMAND...: the command exits with WANT.
status() {
    local want=$1 what=$2 rc
    shift 2
    "$@" >/dev/null 2>&1
    rc=$?
    check "$what: exit $want (got $rc)" test "$rc" -eq "$want"
}
# asks_help DESCRIPTION COMMAND...: usage on stdout, nothing on stderr, exit 0.
asks_help() {
    local what=$1 out err rc
    shift
    out=$("$@" 2>"$tmp/err")
    rc=$?
    err=$(cat "$tmp/err")
    check "$what: exit 0 (got $rc)" test "$rc" -eq 0
    check "$what: usage on stdout" grep -q '^usage: ' <<<"$out"
    check "$what: nothing on stderr ($err)" test -z "$err"
}
# usage_error DESCRIPTION TEXT COMMAND...: one line naming TEXT, exit 2.
usage_error() {
    local what=$1 want=$2
    shift 2
    expect_error "$what" "$want" "$@"
    status 2 "$what" "$@"
}

check "lucid --version" test "$("$lucid" --version)" = "lucid $version"
check "version is known" test -n "$version"
asks_help "lucid --help" "$lucid" --help
asks_help "lucid -h" "$lucid" -h
asks_help "lucid help" "$lucid" help
status 2 "lucid without a command" "$lucid"
usage_error "unknown command" "unknown command 'frob'" "$lucid" frob
usage_error "help for an unknown command" "help: unknown command 'frob'" "$lucid" help frob

verbs="simulate trace model queue status report explain tune whatif"
for verb in $verbs; do
    asks_help "lucid $verb --help" "$lucid" "$verb" --help
    asks_help "lucid $verb -h" "$lucid" "$verb" -h
    asks_help "lucid help $verb" "$lucid" help "$verb"
    check "lucid help $verb = lucid $verb --help" \
        test "$("$lucid" help "$verb")" = "$("$lucid" "$verb" --help)"
done
for sub in train predict eval explain features; do
    asks_help "lucid model $sub --help" "$lucid" model "$sub" --help
    asks_help "lucid model $sub -h" "$lucid" model "$sub" -h
done
asks_help "lucid model train ... -h" "$lucid" model train --kind duration -h
asks_help "lucid trace synth --help" "$lucid" trace synth --help
asks_help "lucid trace synth -h" "$lucid" trace synth -h
asks_help "lucid help trace synth" "$lucid" help trace synth
check "lucid help trace names synth and import" bash -c "'$lucid' help trace | grep -q '^usage: lucid trace synth' && '$lucid' help trace | grep -q '^       lucid trace import'"
check "man lucid lists trace import" grep -q '^\.B trace import$' "$src/man/lucid.1"
asks_help "lucid help model train" "$lucid" help model train
asks_help "lucid help simulate extra" "$lucid" help simulate extra

# Usage errors: exit 2, one line.
for verb in simulate queue status report explain tune; do
    usage_error "$verb: unknown option" "unknown" "$lucid" "$verb" --frobnicate
done
usage_error "trace synth: unknown option" "unknown option '--frob'" "$lucid" trace synth --frob
usage_error "model train: unknown option" "unknown argument '--frob'" "$lucid" model train --frob
usage_error "simulate: missing value" "option --policies needs a value" "$lucid" simulate --policies
usage_error "simulate: two experiment files" "more than one experiment file" \
    "$lucid" simulate "$src/examples/venus.ini" "$src/examples/venus-online.ini"
usage_error "simulate: bad --set" "--set wants SECTION.KEY=VALUE" "$lucid" simulate --set x
usage_error "trace: unknown subcommand" "unknown subcommand 'mix'" "$lucid" trace mix
usage_error "trace synth: no --out" "--out DIR is required" "$lucid" trace synth
usage_error "trace synth: bad --jobs" "'many' is not an integer" "$lucid" trace synth --out "$tmp/s" --jobs many
usage_error "model: unknown verb" "model: unknown verb 'fit'" "$lucid" model fit
usage_error "model train: no --kind" "model train: --kind is required" "$lucid" model train
usage_error "explain: extra argument" "unexpected argument 'c'" "$lucid" explain a b c
usage_error "tune: no experiment" "give an experiment file" "$lucid" tune
usage_error "report: no OUTDIR" "give the output directory" "$lucid" report
usage_error "queue: --job not a number" "'x' is not an integer" "$lucid" queue --job x
# Option integers are decimal: hexadecimal, exponents and blanks are refused
# with one line naming the option (trace files keep their own rules).
usage_error "tune: hexadecimal --budget" "option --budget: '0x10' is not an integer" \
    "$lucid" tune "$src/examples/venus.ini" --budget 0x10
usage_error "model: hexadecimal --seed" "option --seed: '0x10' is not an integer" \
    "$lucid" model train --kind duration --seed 0x10
usage_error "trace synth: exponent --jobs" "option --jobs: '1e3' is not an integer" \
    "$lucid" trace synth --out "$tmp/s" --jobs 1e3
usage_error "trace synth: blank before --seed" "option --seed: ' 5' is not an integer" \
    "$lucid" trace synth --out "$tmp/s" --seed " 5"
usage_error "release: hexadecimal job" "option JOB: '0x5' is not an integer" "$lucid" release 0x5
check "no output from the refused synths" test ! -e "$tmp/s"
status 2 "model without a verb" "$lucid" model
status 2 "trace without a subcommand" "$lucid" trace

# Failures (bad input, unreachable daemon): exit 1, one line.
expect_error "simulate: missing experiment" "nope.ini" "$lucid" simulate "$tmp/nope.ini"
status 1 "simulate: missing experiment" "$lucid" simulate "$tmp/nope.ini"
status 1 "report: not an output folder" "$lucid" report "$tmp"
status 1 "status: no daemon" "$lucid" status --socket "$tmp/none"

# trace synth's bundled base trace, from any directory.
(cd "$tmp" && "$lucid" trace synth --out syn --jobs 20 >/dev/null)
check "trace synth from another directory" test -s "$tmp/syn/trace.csv"
# A copy of the program outside the build tree reads ../share/lucid beside it
# (the installed layout), and without it says how to give a base trace.
mkdir -p "$tmp/inst/bin"
cp "$lucid" "$tmp/inst/bin/lucid"
datadir=$("$lucid" trace synth --help | sed -n 's/.*or \(\/[^)]*\)).*/\1/p')
if [ -e "$datadir/data/venus-sept/trace.csv" ]; then
    echo "note: $datadir is installed on this machine; the missing-data case is not checked"
else
    expect_error "synth without its data" "give one with --from TRACE" \
        env -u LUCID_DATA_DIR "$tmp/inst/bin/lucid" trace synth --out "$tmp/s2" --jobs 20
    status 1 "synth without its data" env -u LUCID_DATA_DIR "$tmp/inst/bin/lucid" trace synth --out "$tmp/s2"
fi
mkdir -p "$tmp/inst/share/lucid/data"
ln -s "$src/data/venus-sept" "$tmp/inst/share/lucid/data/venus-sept"
(cd / && "$tmp/inst/bin/lucid" trace synth --out "$tmp/s3" --jobs 20 >/dev/null)
check "relocated install finds share/lucid" test -s "$tmp/s3/trace.csv"
check "same trace either way" cmp -s "$tmp/syn/trace.csv" "$tmp/s3/trace.csv"
# $LUCID_DATA_DIR comes first: a base trace of Venus's first 300 jobs there
# gives another synthetic trace than the whole of Venus.
mkdir -p "$tmp/mine/data/venus-sept"
head -301 "$src/data/venus-sept/trace.csv" >"$tmp/mine/data/venus-sept/trace.csv"
cp "$src/data/venus-sept/vc_config.csv" "$tmp/mine/data/venus-sept/"
LUCID_DATA_DIR=$tmp/mine "$tmp/inst/bin/lucid" trace synth --out "$tmp/s4" --jobs 20 >/dev/null
check "LUCID_DATA_DIR read first" test -s "$tmp/s4/trace.csv"
differ() { ! cmp -s "$1" "$2"; }
check "LUCID_DATA_DIR's base trace used" differ "$tmp/s3/trace.csv" "$tmp/s4/trace.csv"

# trace synth writes its folder whole or not at all, and never over its base.
mkdir -p "$tmp/base"
cp "$src/data/venus-sept/trace.csv" "$src/data/venus-sept/vc_config.csv" "$tmp/base/"
echo "# the user's own experiment" >"$tmp/base/experiment.ini"
cp -a "$tmp/base" "$tmp/base.orig"
expect_error "synth into its --from folder" "--out $tmp/base holds the --from input $tmp/base/trace.csv" \
    "$lucid" trace synth --from "$tmp/base/trace.csv" --from-vcs "$tmp/base/vc_config.csv" --out "$tmp/base" --jobs 5
expect_error "synth into its --from-vcs folder (as .)" "--out . holds the --from-vcs input vc_config.csv" \
    bash -c "cd '$tmp/base' && '$lucid' trace synth --from-vcs vc_config.csv --out . --jobs 5"
status 1 "synth into its --from folder" \
    "$lucid" trace synth --from "$tmp/base/trace.csv" --from-vcs "$tmp/base/vc_config.csv" --out "$tmp/base/." --jobs 5
check "the base folder is unchanged byte for byte" diff -r "$tmp/base" "$tmp/base.orig"
# A run that fails while writing (more VCs than nodes: found by the writer)
# creates no folder, and leaves a previous good run as it was, no temporaries.
expect_error "synth failing while writing" "need jobs >= 1, 1 <= vcs <= nodes" \
    "$lucid" trace synth --out "$tmp/half" --jobs 5 --nodes 2 --vcs 5
check "no half folder" test ! -e "$tmp/half"
cp -a "$tmp/syn" "$tmp/syn.orig"
status 1 "synth failing over a good run" "$lucid" trace synth --out "$tmp/syn" --jobs 5 --nodes 2 --vcs 5
check "the previous run is intact" diff -r "$tmp/syn" "$tmp/syn.orig"
check "no temporary files left ($(ls -A "$tmp/syn" | tr '\n' ' '))" \
    test "$(ls -A "$tmp/syn" | tr '\n' ' ')" = "estimates.csv experiment.ini trace.csv vc_config.csv "
usage_error "synth: --jobs 0" "--jobs: 0 is not a positive number of jobs" "$lucid" trace synth --out "$tmp/z" --jobs 0

# lucidd, when built (needs libslurm).
if [ -x "$lucidd" ]; then
    check "lucidd --version" test "$("$lucidd" --version)" = "lucidd $version"
    asks_help "lucidd --help" "$lucidd" --help
    asks_help "lucidd -h" "$lucidd" -h
    usage_error "lucidd: unknown option" "unknown option --frob" "$lucidd" --frob x
    usage_error "lucidd: no --socket" "--state and --socket are required" "$lucidd" --state "$tmp/x.db"
    check "lucidd refused runs created no state" test ! -e "$tmp/x.db"
else
    echo "note: lucidd not built; its conventions are not checked"
fi
finish cli_conventions

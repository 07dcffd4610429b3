# checks.sh — shared by the CLI test scripts (source it): counts passes and
# failures, and checks that a command fails with one clear line.
# After sourcing: `lucid` and `src` (absolute paths, so tests may change
# directory) and `tmp` (removed on exit) are set from the script's arguments
# LUCID SOURCE_DIR.
lucid=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
passes=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# check DESCRIPTION COMMAND...: the command succeeds.
check() {
    local what=$1
    shift
    if "$@"; then passes=$((passes + 1)); else fail "$what"; fi
}

# expect_error DESCRIPTION EXPECTED_SUBSTRING COMMAND...: the command exits
# non-zero without crashing and prints exactly one line containing the text.
expect_error() {
    local what=$1 want=$2
    shift 2
    local out rc
    out=$("$@" 2>&1 >/dev/null)
    rc=$?
    if [ $rc -eq 0 ] || [ $rc -gt 125 ]; then fail "$what: exit status $rc"; return; fi
    if [ "$(printf '%s\n' "$out" | wc -l)" -ne 1 ]; then fail "$what: expected one line, got: $out"; return; fi
    case "$out" in
    *"$want"*) passes=$((passes + 1)) ;;
    *) fail "$what: '$out' lacks '$want'" ;;
    esac
}

# finish [NAME]: the closing line ctest and CI read, and the exit status.
finish() {
    echo "${1:+$1: }$passes passed, $failures failed"
    [ "$failures" -eq 0 ]
}

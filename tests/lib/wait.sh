# wait.sh — shared by the lab test scripts (source it after defining
# `fail MESSAGE`, which must not return).
# wait_until SECONDS WHAT COMMAND...: polls COMMAND (output discarded) every
# 0.2 s until it succeeds; past SECONDS, `fail "timed out ... waiting for WHAT"`.
wait_until() {
    local limit=$1 what=$2
    shift 2
    local deadline=$((SECONDS + limit))
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || fail "timed out after ${limit}s waiting for $what"
        sleep 0.2
    done
}

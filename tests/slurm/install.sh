#!/usr/bin/env bash
# install.sh — lucid from its installed files only: `cmake --install` with
# DESTDIR into a clean root (prefix /usr, the package's layout), then a lab
# cluster whose slurmctld and slurmstepd load the installed plugins with the
# installed example lucid.conf, and the installed lucidd started from the
# installed example lucidd.conf (flags override its paths and limits).
# Fail-open as shipped: a job submitted before lucidd first starts (no
# heartbeat yet) is not held and runs under plain Slurm, once.  Then a few
# jobs are held at submission, scheduled, and complete; the installed
# `lucid queue` and `lucid status` show them.
#   bash install.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
SRC=$1 BUILD=$2
W=$BUILD/lab-install
rm -rf "$W"
mkdir -p "$W/out" "$W/gpu"
LUCIDD_PID=""
cleanup() {
    if [[ -n $LUCIDD_PID ]]; then
        { kill -KILL "$LUCIDD_PID" && wait "$LUCIDD_PID"; } 2>/dev/null || true
    fi
    bash "$SRC/scripts/lab-cluster.sh" down "$W/lab" >/dev/null 2>&1 || true
}
trap cleanup EXIT
fail() { echo "install: $*" >&2; tail -n 20 "$W/lucidd.log" >&2 2>/dev/null || true; exit 1; }

# 1. Install into a clean root; nothing below runs from the build tree.
DESTDIR=$W/root cmake --install "$BUILD" --prefix /usr >"$W/install.log"
R=$W/root/usr
plugin=$(find "$R/lib" -name job_submit_lucid.so -print -quit)
[[ -n $plugin && -f $(dirname "$plugin")/spank_lucid.so ]] || fail "plugins not installed under $R/lib"
LUCID=$R/bin/lucid LUCIDD=$R/sbin/lucidd EXAMPLES=$R/share/doc/lucid-slurm/examples
[[ -x $LUCID && -x $LUCIDD && -f $EXAMPLES/lucidd.conf && -f $EXAMPLES/lucid.conf ]] ||
    fail "programs or example configurations missing in $R"

# 2. The lab cluster with the installed plugins and the installed lucid.conf.
bash "$SRC/scripts/lab-cluster.sh" up "$W/lab" --plugins "$(dirname "$plugin")" >/dev/null
# The shipped file as it is but for the heartbeat's folder (the package's
# /var/lib/lucid is the unit's StateDirectory, not this test's).
grep -qx 'heartbeat=/var/lib/lucid/heartbeat' "$EXAMPLES/lucid.conf" || fail "installed lucid.conf does not fail open"
sed "s|^heartbeat=/var/lib/lucid/heartbeat$|heartbeat=$W/heartbeat|" "$EXAMPLES/lucid.conf" >"$W/lab/etc/lucid.conf"
export SLURM_CONF=$W/lab/etc/slurm.conf
grep -q "PluginDir=.*$(dirname "$plugin")" "$SLURM_CONF" || fail "slurm.conf does not load $(dirname "$plugin")"

# 2b. lucidd not started yet: a new job runs under plain Slurm (fail-open
#     with the shipped fail_open_after=180), held by nobody.
open_id=$(sbatch --parsable --gres=gpu:1 --time=5 -o "$W/out/%j.out" --wrap "sleep 1") || fail "sbatch failed"
deadline=$((SECONDS + 60))
until grep -q "^JobId=$open_id .*JobState=COMPLETED" "$W/lab/log/jobcomp.log" 2>/dev/null; do
    ((SECONDS < deadline)) ||
        fail "job $open_id, submitted while lucidd was down, did not run under Slurm: $(squeue -h -j "$open_id" -o '%T %r %Q')"
    sleep 0.5
done

# 3. The installed lucidd, configured by the installed example, started
#    until its first heartbeat and stopped: the heartbeat stays fresh for
#    fail_open_after, so the jobs below are held (and stay held for the
#    check) until lucidd starts again on the same state.
SOCK=$W/lucidd.sock
start_lucidd() {
    setsid "$LUCIDD" --config "$EXAMPLES/lucidd.conf" --state "$W/state.db" --socket "$SOCK" \
        --heartbeat "$W/heartbeat" --profile-limit 3 --tick-ms 250 --metrics-test-dir "$W/gpu" \
        --profiler-bypass off --profiler-yield off </dev/null >>"$W/lucidd.log" 2>&1 &
    LUCIDD_PID=$!
    local deadline=$((SECONDS + 10))
    until "$LUCID" status --socket "$SOCK" >/dev/null 2>&1 && [[ -s $W/heartbeat ]]; do
        ((SECONDS < deadline)) || fail "installed lucidd did not answer and beat"
        sleep 0.1
    done
}
stop_lucidd() {
    kill -TERM "$LUCIDD_PID"
    wait "$LUCIDD_PID" || fail "installed lucidd did not stop cleanly on SIGTERM"
    LUCIDD_PID=""
    [[ ! -e $SOCK ]] || fail "socket left behind"
}
start_lucidd
stop_lucidd

# 4. Jobs: GPUs, nodes, seconds, expected final phase (profiling limit 3 s,
#    GPU limit 8: a short job ends in the profiler, a long one moves to
#    main, a 16-GPU job is never profiled).
declare -A want
submit() {
    local id
    id=$(sbatch --parsable -N "$2" --gres="gpu:$(($1 / $2))" --time=5 -o "$W/out/%j.out" \
        --wrap "echo '60 2000 10' >$W/gpu/\$SLURM_JOB_ID.gpu; sleep $3") || fail "sbatch failed"
    want[$id]=$4
}
submit 1 1 1 done-in-profiler
submit 4 1 1 done-in-profiler
submit 2 1 8 done
submit 16 2 2 done
sleep 1
for id in "${!want[@]}"; do
    [[ $(squeue -h -j "$id" -o '%T %Q') == "PENDING 0" ]] ||
        fail "job $id not held by the installed job_submit plugin: $(squeue -h -j "$id" -o '%T %Q')"
done
start_lucidd

deadline=$((SECONDS + 90))
while [[ -n "$(squeue -h -o %i)" ]]; do
    ((SECONDS < deadline)) || fail "jobs left after 90 s: $("$LUCID" queue --socket "$SOCK")"
    sleep 0.5
done
sleep 1 # lucidd's next tick records the ends
for id in "${!want[@]}"; do
    state=$(scontrol show job "$id" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    [[ $state == COMPLETED ]] || fail "Slurm says job $id is $state"
    phase=$("$LUCID" queue --socket "$SOCK" --noheader -t "${want[$id]}" -j "$id" -o %T)
    [[ $phase == "${want[$id]}" ]] ||
        fail "job $id: lucid says '$("$LUCID" queue --socket "$SOCK" -a -j "$id")', expected ${want[$id]}"
done
"$LUCID" status --socket "$SOCK" | grep -q '^profiler: *partition profiling, limit 3 s' ||
    fail "lucid status: $("$LUCID" status --socket "$SOCK")"
stop_lucidd
# The fail-open job ran once, under Slurm alone (jobcomp: one end).
runs=$(grep -c "^JobId=$open_id " "$W/lab/log/jobcomp.log" || true)
[[ $runs == 1 ]] || fail "job $open_id (fail-open) ended $runs times in jobcomp.log"
echo "install: job $open_id ran unheld before lucidd started; ${#want[@]} jobs held by the installed plugins, scheduled by the installed lucidd, completed"

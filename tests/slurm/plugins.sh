#!/usr/bin/env bash
# plugins.sh — lucid's Slurm plugins on a lab cluster (4 x 8 GPUs + 1 profiling):
#   job_submit/lucid holds new jobs in managed partitions (admin comment
#   `lucid: waiting for lucidd`, or `lucid-user-hold` for sbatch -H), leaves
#   others alone, refuses impossible or malformed GPU requests (also per node,
#   also in an update) with a clear message, keeps a requeued job's output
#   (open mode append), refuses a user's release of a job above lucidd's
#   intake watermark, lets new jobs pass unheld when lucidd's heartbeat is
#   stale (fail-open), and says at init when there is no lucid.conf;
#   spank_lucid turns lucidd's AdminComment into access to the partner's GPU
#   devices under ConstrainDevices and CUDA_VISIBLE_DEVICES in the job's own
#   numbering, so a packed job opens exactly its partner's GPUs, and refuses
#   a user's --lucid-gpus at sbatch; job_submit/lucid refuses a user's
#   request of the share GRES (issue 24).  LUCID_LAB_PROFILE=simple runs it
#   without device confinement (slurm_plugins_simple).
#   bash plugins.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
SRC=$1 BUILD=$2
LAB=$BUILD/lab-plugins${LUCID_LAB_PROFILE:+-$LUCID_LAB_PROFILE}
rm -rf "$LAB"
mkdir -p "$LAB/out"
BEATER=""
trap 'rm -f "$LAB/beating"; [[ -z $BEATER ]] || wait "$BEATER"; bash "$SRC/scripts/lab-cluster.sh" down "$LAB" >/dev/null 2>&1 || true' EXIT
# Only `main` is lucid's here, so `profiling` shows the pass-through case.
bash "$SRC/scripts/lab-cluster.sh" up "$LAB" --plugins "$BUILD/plugins" \
    --lucid-partitions main --lucid-conf "heartbeat=$LAB/heartbeat" --lucid-conf fail_open_after=4 >/dev/null
export SLURM_CONF=$LAB/etc/slurm.conf
cd "$LAB/out"
chmod 777 "$LAB/out" # user nobody submits from here
# lucidd's heartbeat as lucidd writes it (whole, by rename); intake = the
# highest job id lucidd has taken in.  A stand-in for lucidd rewrites it
# every second until section 5, as lucidd does every tick, so that no step
# finds it stale however slow the machine is (fail_open_after is 4 s, and a
# step that waits on Slurm can take longer than that on a loaded machine;
# once the packed job of section 3 passed unheld that way).  `beat N` sets
# the intake it reports.
write_beat() { # a temporary file per writer: the stand-in and `beat` may write at once
    echo "pid=$$ time=$(date +%s) intake=$(cat "$LAB/intake")" >"$LAB/heartbeat.tmp.$BASHPID" &&
        mv "$LAB/heartbeat.tmp.$BASHPID" "$LAB/heartbeat"
}
beat() { echo "$1" >"$LAB/intake.tmp" && mv "$LAB/intake.tmp" "$LAB/intake" && write_beat; }
beat 0
touch "$LAB/beating"
(while [[ -e $LAB/beating ]]; do write_beat; sleep 1; done) &
BEATER=$!

fail() { echo "plugins: $*" >&2; exit 1; }
field() { scontrol show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }
wait_state() { # job state seconds
    local deadline=$((SECONDS + $3))
    until [[ $(field "$1" JobState) == "$2" ]]; do
        ((SECONDS < deadline)) || fail "job $1 is $(field "$1" JobState), expected $2"
        sleep 0.2
    done
}
# Each job says where it ran, what CUDA_VISIBLE_DEVICES and LUCID_PACKED_GPUS
# hold, and which of its node's GPU device files it can open (an allowed
# fake device answers ENXIO, one the job's cgroup denies EPERM).
cat >"$LAB/report.sh" <<'EOF'
#!/bin/bash
open=""
for f in "$LUCID_LAB_DEV/$SLURMD_NODENAME"/nvidia*; do
    # bash's own open(2): ENXIO "No such device or address" = allowed.
    (exec 3<>"$f") 2>&1 | grep -q "No such device or address" && open+="${f##*nvidia},"
done
echo "$SLURMD_NODENAME CVD=$CUDA_VISIBLE_DEVICES PACKED=$LUCID_PACKED_GPUS OPEN=${open%,}"
EOF
chmod 755 "$LAB/report.sh"
export LUCID_LAB_DEV=$LAB/dev
report="$LAB/report.sh"

# 1. Held at submission in a managed partition; untouched elsewhere.
held=$(sbatch --parsable --gres=gpu:4 -o %j.out --wrap "$report; sleep 30")
free=$(sbatch --parsable -p profiling --gres=gpu:1 -o %j.out --wrap "$report")
sleep 1
[[ $(field "$held" JobState) == PENDING && $(field "$held" Priority) == 0 ]] ||
    fail "job $held not held: $(field "$held" JobState) priority $(field "$held" Priority)"
comment() { scontrol show job "$1" | sed -n 's/^ *AdminComment=//p' | sed 's/ *$//'; }
[[ $(comment "$held") == "lucid: waiting for lucidd" ]] || fail "job $held admin comment '$(comment "$held")'"
[[ -z $(comment "$free") ]] || fail "unmanaged job $free got admin comment '$(comment "$free")'"
wait_state "$free" COMPLETED 20
# sbatch -H: the user's own hold, marked for lucidd.
beat 0
userheld=$(sbatch --parsable -H --gres=gpu:1 -o %j.out --wrap true)
[[ $(field "$userheld" Priority) == 0 && $(comment "$userheld") == lucid-user-hold ]] ||
    fail "sbatch -H job $userheld: priority $(field "$userheld" Priority), admin comment '$(comment "$userheld")'"
scancel "$userheld"

# 2. Refusals, each with one clear line.
out=$(sbatch --gpus=64 --wrap true 2>&1) && fail "64-GPU job accepted"
grep -q "lucid: job asks for 64 GPUs but the largest partition lucid manages has 32" <<<"$out" ||
    fail "no clear message for 64 GPUs: $out"
out=$(sbatch --gres=gpu:lots --wrap true 2>&1) && fail "malformed gres accepted"
grep -q "lucid: malformed GPU request" <<<"$out" || fail "no clear message for gpu:lots: $out"
out=$(sbatch --gres=gpu:9 --wrap true 2>&1) && fail "9 GPUs per node accepted on 8-GPU nodes"
grep -q "lucid: job asks for 9 GPUs per node but the largest node lucid manages has 8" <<<"$out" ||
    fail "no clear message for gpu:9: $out"
out=$(sbatch -N 2 --gpus-per-node=9 --wrap true 2>&1) && fail "--gpus-per-node=9 accepted"
grep -q "9 GPUs per node" <<<"$out" || fail "no clear message for --gpus-per-node=9: $out"
# The same limits hold for an update of a held job (a resize after intake).
scontrol update jobid="$held" gres=gpu:9 2>/dev/null && fail "resize of $held to gpu:9 accepted"
[[ $(field "$held" TresPerNode) == gres:gpu:4 ]] || fail "job $held resized: $(field "$held" TresPerNode)"
grep -q "lucid: job asks for 9 GPUs per node .*update of job $held by uid 0 refused" "$LAB/log/slurmctld.log" ||
    fail "refused resize not logged"

# 2b. A user cannot release a job lucidd has not yet taken in: id above the
#     heartbeat's intake.  At or below it, lucidd holds it as an administrator,
#     so Slurm itself refuses (shown by an admin hold here).
beat 0
mine=$(runuser -u nobody -- sbatch --parsable --gres=gpu:1 -o /dev/null --wrap true)
out=$(runuser -u nobody -- scontrol release "$mine" 2>&1) && fail "user released job $mine above intake"
grep -q "Access/permission denied" <<<"$out" || fail "user release of $mine: $out"
[[ $(field "$mine" Priority) == 0 ]] || fail "job $mine released anyway"
grep -q "lucid: job $mine waits for the lucid scheduler and cannot be released by hand (lucid queue -j $mine) (uid 65534)" \
    "$LAB/log/slurmctld.log" || fail "refused release not logged"
scontrol update jobid="$mine" priority=0 # what lucidd does at intake: an admin hold
beat "$mine"
runuser -u nobody -- scontrol release "$mine" 2>/dev/null && fail "user lifted lucidd's admin hold on $mine"
scontrol release "$mine" || fail "root cannot release $mine"
wait_state "$mine" COMPLETED 20

# 2c. Output kept across the profiling requeue: Slurm truncates --output when a
#     requeued job runs again unless the open mode is append (set by the plugin).
beat 0
twice=$(sbatch --parsable --gres=gpu:1 -o twice.out --wrap 'echo run ${SLURM_RESTART_COUNT:-0}; sleep 3')
scontrol release "$twice"
wait_state "$twice" RUNNING 20
# RUNNING comes before the script's first line (task/cgroup sets the step
# up first): requeue once the first run has written it.
deadline=$((SECONDS + 20))
until grep -q '^run 0' twice.out 2>/dev/null; do
    ((SECONDS < deadline)) || fail "job $twice: no 'run 0' line 20 s after it started"
    sleep 0.2
done
first_node=$(squeue -h -j "$twice" -o %N)
scontrol requeuehold "$twice"
deadline=$((SECONDS + 20))
until [[ $(squeue -h -j "$twice" -o %t) == PD ]]; do
    ((SECONDS < deadline)) || fail "requeued job $twice not pending"
    sleep 0.2
done
# Off the node of its first run, as lucidd's move from the profiling node is:
# that node keeps the first run's credential revoked for a while, and a run
# started there at once is killed ("Job credential revoked").
scontrol update jobid="$twice" starttime=now ${first_node:+excnodelist=$first_node}
scontrol release "$twice"
wait_state "$twice" COMPLETED 30
[[ $(grep '^run' twice.out | paste -sd' ') == "run 0 run 1" ]] || fail "requeued job's output: '$(paste -sd' ' twice.out)'"

# 3. Release the held job where lucid says (pin to n3), then pack a second
#    job onto its GPUs the way lucidd does: no gres, same node, AdminComment.
#    A filler takes n3's first 2 GPUs, so the partner holds 2-5: under
#    ConstrainDevices the packed job must open exactly those and see them as
#    its own 0-3 (CUDA numbers the devices it can open).  Two GPUs stay free:
#    with none free Slurm keeps the packed job pending (Resources) although
#    its GPU request is gone (docs/live.md, "Packing under device confinement").
filler=$(sbatch --parsable --gres=gpu:2 -o /dev/null --wrap "sleep 60")
scontrol update jobid="$filler" nodelist=n3
scontrol release "$filler"
wait_state "$filler" RUNNING 20
scontrol update jobid="$held" nodelist=n3
scontrol release "$held"
wait_state "$held" RUNNING 20
# "GRES=gpu:4(IDX:2-5)", typed on the site profile: "GRES=gpu:v100:4(IDX:2-5)".
gpus=$(scontrol show job -d "$held" | sed -n 's/.*GRES=gpu:\([a-z0-9_]*:\)\{0,1\}4(IDX:\([0-9,-]*\)).*/\2/p')
[[ -n $gpus ]] || fail "no GPU indices for job $held"
packed=$(sbatch --parsable --gres=gpu:1 -o %j.out --wrap "$report")
scontrol update jobid="$packed" tresPerNode="" nodelist=n3 admincomment="lucid-gpus=$gpus"
scontrol release "$packed"
wait_state "$packed" COMPLETED 20
[[ $(field "$held" JobState) == RUNNING ]] || fail "partner $held stopped early"
expanded=$(tr ',' '\n' <<<"$gpus" | while IFS=- read -r a b; do seq "$a" "${b:-$a}"; done | paste -sd,)
[[ $expanded == 2,3,4,5 ]] || fail "partner holds GPUs $expanded, want 2-5 (the filler has 0-1)"
if [[ $(cat "$LAB/etc/profile") == site ]]; then # ConstrainDevices
    want="n3 CVD=0,1,2,3 PACKED=$expanded OPEN=$expanded"
else
    want="n3 CVD=$expanded PACKED=$expanded OPEN=0,1,2,3,4,5,6,7"
fi
grep -qx "$want" "$packed.out" || fail "packed job saw '$(cat "$packed.out")', want '$want'"
scancel "$filler"

# 4. Users cannot name GPUs: the option is refused at sbatch with one line;
#    a comment or an environment variable naming GPUs gives the job none.
err=$(sbatch -p profiling --lucid-gpus=2-3,6 --wrap true 2>&1) && fail "--lucid-gpus accepted"
grep -q "lucid: --lucid-gpus is not for users" <<<"$err" || fail "--lucid-gpus refused without lucid's line: $err"
sneak=$(sbatch --parsable -p profiling --comment lucid-gpus=0-7 --export=ALL,LUCID_PACKED_GPUS=0-7 \
    -o %j.out --wrap "$report")
wait_state "$sneak" COMPLETED 20
if [[ $(cat "$LAB/etc/profile") == site ]]; then
    want="p1 CVD= PACKED=0-7 OPEN="
else
    want="p1 CVD= PACKED=0-7 OPEN=0,1,2,3,4,5,6,7"
fi
grep -qx "$want" "$sneak.out" || fail "a user's comment/env: '$(cat "$sneak.out")', want '$want'"
# The share GRES is lucidd's alone (it accounts a packed job's GPUs and opens
# none): a user asking it at sbatch, or in an update of their own job, is
# refused with lucid's line; no job of theirs ever holds it.  (Where the
# site has no such GRES, the simple profile, Slurm refuses it itself.)
site=$([[ $(cat "$LAB/etc/profile") == site ]] && echo 1 || true)
err=$(runuser -u nobody -- sbatch -p profiling --gres=lucidshare:1 -o /dev/null --wrap true 2>&1) &&
    fail "a user's --gres=lucidshare accepted"
[[ -z $site ]] || grep -q "lucid: gres/lucidshare is lucid's own (it accounts packed jobs and gives no GPU)" <<<"$err" ||
    fail "--gres=lucidshare refused without lucid's line: $err"
mine=$(runuser -u nobody -- sbatch --parsable -H -p profiling --gres=gpu:1 -o /dev/null --wrap true)
runuser -u nobody -- scontrol update jobid="$mine" tresPerNode=gres:lucidshare:1 2>/dev/null &&
    fail "a user's update of job $mine to the share GRES accepted"
[[ $(field "$mine" TresPerNode) == gres:gpu:1 ]] || fail "job $mine asks $(field "$mine" TresPerNode)"
[[ -z $site ]] || grep -q "lucid: gres/lucidshare is lucid's own (update of job $mine by uid $(id -u nobody) refused)" \
    "$LAB/log/slurmctld.log" || fail "the refused update is not in slurmctld's log"
scancel "$mine"

scancel "$held"

# 5. Fail-open: lucidd silent past fail_open_after (4 s): new jobs pass unheld,
#    the user is told, slurmctld logs it; a missing heartbeat likewise.  The
#    stand-in stops; the heartbeat then only ages (6 s is a lower bound).
rm "$LAB/beating"
wait "$BEATER"
BEATER=""
beat 0
sleep 6
out=$(sbatch --parsable --gres=gpu:1 -o /dev/null --wrap true 2>"$LAB/failopen.err")
grep -q "lucid: lucidd silent for [0-9]* s ($LAB/heartbeat); job passes to Slurm unheld" "$LAB/failopen.err" ||
    fail "fail-open not said to the user: $(cat "$LAB/failopen.err")"
wait_state "$out" COMPLETED 20
grep -q "lucid: lucidd silent for [0-9]* s ($LAB/heartbeat); job passes to Slurm unheld" "$LAB/log/slurmctld.log" ||
    fail "fail-open not logged"
rm "$LAB/heartbeat"
out=$(sbatch --parsable --gres=gpu:1 -o /dev/null --wrap true 2>/dev/null)
wait_state "$out" COMPLETED 20
# ... and a user may release their own hold then (nobody is taking jobs in).
mine=$(runuser -u nobody -- sbatch --parsable -H --gres=gpu:1 -o /dev/null --wrap true 2>/dev/null)
runuser -u nobody -- scontrol release "$mine" || fail "user hold not liftable while lucidd is silent"
wait_state "$mine" COMPLETED 20

# 6. Without lucid.conf every partition is managed, and slurmctld says so.
mv "$LAB/etc/lucid.conf" "$LAB/etc/lucid.conf.off"
bash "$SRC/scripts/lab-cluster.sh" restart-ctld "$LAB" >/dev/null
grep -q "lucid: no $LAB/etc/lucid.conf: holding new jobs of every partition for lucidd" "$LAB/log/slurmctld.log" ||
    fail "no init line without lucid.conf"
echo "plugins: hold, refusals, pinning, packed CUDA_VISIBLE_DEVICES, release rule, output kept, fail-open all as expected"

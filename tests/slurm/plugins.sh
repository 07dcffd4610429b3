#!/usr/bin/env bash
# plugins.sh — lucid's Slurm plugins on a lab cluster (4 x 8 GPUs + 1 profiling):
#   job_submit/lucid holds new jobs in managed partitions, leaves others
#   alone, refuses impossible or malformed GPU requests with a clear message;
#   spank_lucid turns --lucid-gpus and lucidd's AdminComment into
#   CUDA_VISIBLE_DEVICES, so a packed job sees exactly its partner's GPUs.
#   bash plugins.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
SRC=$1 BUILD=$2
LAB=$BUILD/lab-plugins
rm -rf "$LAB"
mkdir -p "$LAB/out"
trap 'bash "$SRC/scripts/lab-cluster.sh" down "$LAB" >/dev/null 2>&1 || true' EXIT
# Only `main` is lucid's here, so `profiling` shows the pass-through case.
bash "$SRC/scripts/lab-cluster.sh" up "$LAB" --plugins "$BUILD/plugins" \
    --lucid-partitions main >/dev/null
export SLURM_CONF=$LAB/etc/slurm.conf
cd "$LAB/out"

fail() { echo "plugins: $*" >&2; exit 1; }
field() { scontrol show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }
wait_state() { # job state seconds
    local deadline=$((SECONDS + $3))
    until [[ $(field "$1" JobState) == "$2" ]]; do
        ((SECONDS < deadline)) || fail "job $1 is $(field "$1" JobState), expected $2"
        sleep 0.2
    done
}
report='echo $SLURMD_NODENAME CVD=$CUDA_VISIBLE_DEVICES PACKED=$LUCID_PACKED_GPUS'

# 1. Held at submission in a managed partition; untouched elsewhere.
held=$(sbatch --parsable --gres=gpu:4 -o %j.out --wrap "$report; sleep 30")
free=$(sbatch --parsable -p profiling --gres=gpu:1 -o %j.out --wrap "$report")
sleep 1
[[ $(field "$held" JobState) == PENDING && $(field "$held" Priority) == 0 ]] ||
    fail "job $held not held: $(field "$held" JobState) priority $(field "$held" Priority)"
wait_state "$free" COMPLETED 20

# 2. Refusals, each with one clear line.
out=$(sbatch --gpus=64 --wrap true 2>&1) && fail "64-GPU job accepted"
grep -q "lucid: job asks for 64 GPUs but the largest partition lucid manages has 32" <<<"$out" ||
    fail "no clear message for 64 GPUs: $out"
out=$(sbatch --gres=gpu:lots --wrap true 2>&1) && fail "malformed gres accepted"
grep -q "lucid: malformed GPU request" <<<"$out" || fail "no clear message for gpu:lots: $out"

# 3. Release the held job where lucid says (pin to n3), then pack a second
#    job onto its GPUs the way lucidd does: no gres, same node, AdminComment.
scontrol update jobid="$held" nodelist=n3
scontrol release "$held"
wait_state "$held" RUNNING 20
gpus=$(scontrol show job -d "$held" | sed -n 's/.*GRES=gpu:4(IDX:\([0-9,-]*\)).*/\1/p')
[[ -n $gpus ]] || fail "no GPU indices for job $held"
packed=$(sbatch --parsable --gres=gpu:4 -o %j.out --wrap "$report")
scontrol update jobid="$packed" tresPerNode="" nodelist=n3 admincomment="lucid-gpus=$gpus"
scontrol release "$packed"
wait_state "$packed" COMPLETED 20
[[ $(field "$held" JobState) == RUNNING ]] || fail "partner $held stopped early"
expanded=$(tr ',' '\n' <<<"$gpus" | while IFS=- read -r a b; do seq "$a" "${b:-$a}"; done | paste -sd,)
grep -qx "n3 CVD=$expanded PACKED=$expanded" "$packed.out" ||
    fail "packed job saw '$(cat "$packed.out")', partner has $expanded"

# 4. The submission option carries a list too; a bad list is refused by sbatch.
opt=$(sbatch --parsable -p profiling --lucid-gpus=2-3,6 -o %j.out --wrap "$report")
wait_state "$opt" COMPLETED 20
grep -qx "p1 CVD=2,3,6 PACKED=2,3,6" "$opt.out" || fail "--lucid-gpus gave '$(cat "$opt.out")'"
sbatch -p profiling --lucid-gpus='0;rm' --wrap true >/dev/null 2>&1 && fail "bad --lucid-gpus accepted"

scancel "$held"
echo "plugins: hold, refusals, pinning and packed CUDA_VISIBLE_DEVICES all as expected"

#!/usr/bin/env bash
# lab_smoke.sh — the lab cluster itself: brings up 4 main nodes x 8 fake GPUs
# + 1 profiling node, runs a few sleep jobs of 1..16 GPUs, checks that each
# completes and that the CUDA_VISIBLE_DEVICES every task saw matches the GPUs
# Slurm says it gave the job, then tears everything down by PID.
#   bash lab_smoke.sh SOURCE_DIR WORK_DIR
set -euo pipefail
SRC=$1 WORK=$2
LAB=$WORK/lab-smoke
rm -rf "$LAB"
mkdir -p "$LAB/out"
trap 'bash "$SRC/scripts/lab-cluster.sh" down "$LAB" >/dev/null 2>&1 || true' EXIT
bash "$SRC/scripts/lab-cluster.sh" up "$LAB" >/dev/null
export SLURM_CONF=$LAB/etc/slurm.conf

fail() { echo "lab_smoke: $*" >&2; exit 1; }

# gpus nodes partition -> job id.  Every task prints node and visible GPUs.
submit() {
    sbatch --parsable -p "$3" -N "$2" --gres="gpu:$(( $1 / $2 ))" -o "$LAB/out/%j.out" \
        --wrap 'scontrol show job -d $SLURM_JOB_ID | grep " Nodes=.*IDX" | sed "s/^ */alloc /"
                srun -l bash -c "echo task \$SLURMD_NODENAME \$CUDA_VISIBLE_DEVICES"; sleep 1'
}
declare -A want_gpus
for spec in "1 1 main" "3 1 main" "8 1 main" "16 2 main" "2 1 profiling" "4 1 main"; do
    read -r gpus nodes part <<<"$spec"
    id=$(submit "$gpus" "$nodes" "$part")
    want_gpus[$id]=$gpus
done

deadline=$((SECONDS + 60))
while [[ -n "$(squeue -h -o %i)" ]]; do
    ((SECONDS < deadline)) || fail "jobs still queued after 60 s: $(squeue -h)"
    sleep 0.5
done

for id in "${!want_gpus[@]}"; do
    out=$LAB/out/$id.out
    [[ -f $out ]] || fail "job $id wrote no output"
    state=$(scontrol show job "$id" | sed -n 's/.*JobState=\([A-Z]*\).*/\1/p')
    [[ $state == COMPLETED ]] || fail "job $id ended $state"
    # node -> GPU indices Slurm allocated ("Nodes=n[1-2] ... GRES=gpu:8(IDX:0-7)").
    declare -A given=()
    while read -r nodes idx; do
        for node in $(scontrol show hostnames "$nodes"); do given[$node]=$idx; done
    done < <(sed -n 's/^alloc Nodes=\([^ ]*\) .*IDX:\([0-9,-]*\)).*/\1 \2/p' "$out")
    seen=0
    while read -r _ _ node list; do
        seen=$((seen + $(tr ',' '\n' <<<"$list" | grep -c .)))
        idx=${given[$node]:-none}
        expanded=$(tr ',' '\n' <<<"$idx" | while IFS=- read -r a b; do seq "$a" "${b:-$a}"; done | paste -sd,)
        [[ $expanded == "$list" ]] || fail "job $id on $node: CUDA_VISIBLE_DEVICES=$list but Slurm gave $idx"
    done < <(grep ' task ' "$out")
    unset given
    [[ $seen == "${want_gpus[$id]}" ]] || fail "job $id saw $seen GPUs, asked ${want_gpus[$id]}"
done
echo "lab_smoke: ${#want_gpus[@]} jobs completed with correct CUDA_VISIBLE_DEVICES"

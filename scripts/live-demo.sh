#!/usr/bin/env bash
# live-demo.sh — lucid scheduling a small workload on a real Slurm lab cluster.
#   scripts/live-demo.sh [BUILD_DIR]      (default: build; needs root and Slurm)
# Brings up 4 main nodes x 8 fake GPUs + 1 profiling node on loopback with
# lucid's plugins, starts lucidd (5 s profiling limit, packing on), submits 12
# plain `sbatch` jobs, shows `lucid queue` until all are done, then `lucid
# status`, and tears everything down by PID.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
LAB=$BUILD/lab-demo
for tool in "$BUILD/lucidd" "$BUILD/lucid" "$BUILD/plugins/job_submit_lucid.so"; do
    [[ -e $tool ]] || { echo "live-demo: $tool missing (build with libslurm-dev installed)" >&2; exit 1; }
done
rm -rf "$LAB"
mkdir -p "$LAB/gpu" "$LAB/out"
LUCIDD_PID=""
cleanup() {
    if [[ -n $LUCIDD_PID ]]; then { kill "$LUCIDD_PID" && wait "$LUCIDD_PID"; } 2>/dev/null || true; fi
    bash "$SRC/scripts/lab-cluster.sh" down "$LAB" >/dev/null 2>&1 || true
}
trap cleanup EXIT
bash "$SRC/scripts/lab-cluster.sh" up "$LAB" --plugins "$BUILD/plugins" | head -1
export SLURM_CONF=$LAB/etc/slurm.conf
SOCK=$LAB/lucidd.sock
"$BUILD/lucidd" --state "$LAB/lucid.db" --socket "$SOCK" --profile-limit 5 --packing on \
    --tick-ms 250 --metrics-test-dir "$LAB/gpu" --heartbeat "$LAB/heartbeat" 2>"$LAB/lucidd.log" &
LUCIDD_PID=$!
# Fail-open is on in the lab as in the package: jobs are held once lucidd's
# heartbeat is there.
for _ in $(seq 100); do [[ -s $LAB/heartbeat ]] && break; sleep 0.1; done

# Each job writes its GPU sample for the test metrics backend (no real GPUs
# here) and sleeps; what users see is plain sbatch.
cd "$LAB/out"
specs=("1 2 20" "2 12 20" "4 15 80" "1 3 30" "8 12 90" "2 10 20" "16 10 50" "4 12 20"
       "1 8 20" "4 20 20" "2 1 90" "8 9 20")
for spec in "${specs[@]}"; do
    read -r gpus secs util <<<"$spec"
    nodes=$((gpus > 8 ? 2 : 1))
    sbatch --parsable -N "$nodes" --gres="gpu:$((gpus / nodes))" --time=$((secs / 2 + 1)) -o %j.out \
        --wrap "echo '$util 2000 10' > $LAB/gpu/\$SLURM_JOB_ID.gpu; echo \$SLURMD_NODENAME CUDA_VISIBLE_DEVICES=\$CUDA_VISIBLE_DEVICES; sleep $secs" >/dev/null
done
echo "submitted ${#specs[@]} jobs with sbatch; lucid holds, profiles, orders and packs them"
while :; do
    echo "---- $(date +%T)"
    "$BUILD/lucid" queue --socket "$SOCK"
    [[ $("$BUILD/lucid" queue --socket "$SOCK" --json | grep -c '"job":') == 0 ]] && break
    sleep 3
done
echo "---- all done"
"$BUILD/lucid" queue --socket "$SOCK" --all
echo
"$BUILD/lucid" status --socket "$SOCK"

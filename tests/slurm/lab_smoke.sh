#!/usr/bin/env bash
# lab_smoke.sh — the lab cluster itself: brings up 4 main nodes x 8 fake GPUs
# + 1 profiling node in the given profile (site by default), runs a few sleep
# jobs of 1..16 GPUs, checks that each completes and that every task saw the
# GPUs Slurm says it gave the job (SLURM_STEP_GPUS = the allocated indices;
# CUDA_VISIBLE_DEVICES the same without device confinement, 0..n-1 under it).
# On the site profile also what makes it a site (docs/live.md):
#   - device confinement: a job's payload opens its own GPU device files
#     (ENXIO: a fake device without a driver) and gets EPERM on the others;
#   - accounting: sacct shows the finished jobs with their account and GPUs;
#     a user without an association is refused at sbatch;
#   - typed GPUs: --gres=gpu:v100:1 runs on a v100 node, gpu:a100 on an a100;
#   - fair share: sshare lists the accounts alpha and beta with their users,
#     and a job of lucidlab2 is charged to beta.
# Then tears everything down by PID and checks nothing of the lab still runs.
#   bash lab_smoke.sh SOURCE_DIR WORK_DIR [site|simple]
set -euo pipefail
SRC=$1 WORK=$2 PROFILE=${3:-site}
LAB=$WORK/lab-smoke-$PROFILE
rm -rf "$LAB"
mkdir -p "$LAB/out"
chmod 777 "$LAB/out" # lucidlab2's job writes here
trap 'bash "$SRC/scripts/lab-cluster.sh" down "$LAB" >/dev/null 2>&1 || true' EXIT
bash "$SRC/scripts/lab-cluster.sh" up "$LAB" --profile "$PROFILE" >/dev/null
echo "lab_smoke: up"
export SLURM_CONF=$LAB/etc/slurm.conf

fail() { echo "lab_smoke: $*" >&2; exit 1; }
confined=0
grep -q '^ConstrainDevices=yes' "$LAB/etc/cgroup.conf" 2>/dev/null && confined=1

# Waits until COMMAND's output matches the regex, at most SECONDS.
wait_match() { # seconds regex command...
    local limit=$1 regex=$2 out
    shift 2
    local deadline=$((SECONDS + limit))
    while :; do
        out=$("$@" 2>&1 || true)
        [[ $out =~ $regex ]] && return 0
        ((SECONDS < deadline)) || { echo "$out"; return 1; }
        sleep 0.5
    done
}

# gpus nodes partition -> job id.  Every task prints node, the allocated GPU
# indices and the visible ones.
submit() {
    sbatch --parsable -p "$3" -N "$2" --gres="gpu:$(($1 / $2))" -o "$LAB/out/%j.out" \
        --wrap 'scontrol show job -d $SLURM_JOB_ID | grep " Nodes=.*IDX" | sed "s/^ */alloc /"
                srun -l bash -c "echo task \$SLURMD_NODENAME \$SLURM_STEP_GPUS \$CUDA_VISIBLE_DEVICES"; sleep 1'
}
declare -A want_gpus
for spec in "1 1 main" "3 1 main" "8 1 main" "16 2 main" "2 1 profiling" "4 1 main"; do
    read -r gpus nodes part <<<"$spec"
    id=$(submit "$gpus" "$nodes" "$part")
    want_gpus[$id]=$gpus
done

# Site profile: a 2-GPU job opens every GPU device file of its node.
if [[ $PROFILE == site ]]; then
    cat >"$LAB/open_gpus.py" <<'EOF'
import errno, os, sys
node, gpus = os.environ["SLURMD_NODENAME"], int(sys.argv[2])
for k in range(gpus):
    path = "%s/%s/nvidia%d" % (sys.argv[1], node, k)
    try:
        os.close(os.open(path, os.O_RDWR))
        result = "opened"
    except OSError as e:
        result = errno.errorcode[e.errno]
    print("open", node, k, result)
print("gpus", os.environ.get("SLURM_JOB_GPUS"), os.environ.get("CUDA_VISIBLE_DEVICES"))
EOF
    open_id=$(sbatch --parsable --gres=gpu:2 -w n2 -o "$LAB/out/open.out" \
        --wrap "python3 $LAB/open_gpus.py $LAB/dev 8")
    v100_id=$(sbatch --parsable --gres=gpu:v100:1 -o /dev/null --wrap 'sleep 1')
    a100_id=$(sbatch --parsable --gres=gpu:a100:1 -N 1 -o /dev/null --wrap 'sleep 1')
    beta_id=$(cd "$LAB/out" && runuser -u lucidlab2 -- sbatch --parsable --gres=gpu:1 -o /dev/null --wrap 'sleep 1')
    # A user with no association is refused (AccountingStorageEnforce).
    out=$(cd "$LAB/out" && runuser -u daemon -- sbatch --gres=gpu:1 -o /dev/null --wrap true 2>&1) &&
        fail "user daemon, without an association, could submit: $out"
    [[ $out == *"Invalid account"* ]] || fail "user daemon refused for another reason: $out"
fi

deadline=$((SECONDS + 60))
while [[ -n "$(squeue -h -o %i)" ]]; do
    ((SECONDS < deadline)) || fail "jobs still queued after 60 s: $(squeue -h)"
    sleep 0.5
done

# "0-2,5" -> "0,1,2,5"
expand() { tr ',' '\n' <<<"$1" | while IFS=- read -r a b; do seq "$a" "${b:-$a}"; done | paste -sd,; }

for id in "${!want_gpus[@]}"; do
    out=$LAB/out/$id.out
    [[ -f $out ]] || fail "job $id wrote no output"
    state=$(scontrol show job "$id" | sed -n 's/.*JobState=\([A-Z]*\).*/\1/p')
    [[ $state == COMPLETED ]] || fail "job $id ended $state"
    # node -> GPU indices Slurm allocated ("Nodes=n[1-2] ... GRES=gpu:a100:8(IDX:0-7)").
    declare -A given=()
    while read -r nodes idx; do
        for node in $(scontrol show hostnames "$nodes"); do given[$node]=$idx; done
    done < <(sed -n 's/^alloc Nodes=\([^ ]*\) .*IDX:\([0-9,-]*\)).*/\1 \2/p' "$out")
    seen=0
    while read -r _ _ node step_gpus visible; do
        seen=$((seen + $(tr ',' '\n' <<<"$visible" | grep -c .)))
        allocated=$(expand "${given[$node]:-none}")
        [[ $step_gpus == "$allocated" ]] || fail "job $id on $node: SLURM_STEP_GPUS=$step_gpus but Slurm gave $allocated"
        want=$allocated
        # Under ConstrainDevices, CUDA numbers the job's own devices 0..n-1.
        ((confined)) && want=$(seq 0 $(($(tr ',' '\n' <<<"$allocated" | grep -c .) - 1)) | paste -sd,)
        [[ $visible == "$want" ]] || fail "job $id on $node: CUDA_VISIBLE_DEVICES=$visible, want $want (Slurm gave $allocated)"
    done < <(grep ' task ' "$out")
    unset given
    [[ $seen == "${want_gpus[$id]}" ]] || fail "job $id saw $seen GPUs, asked ${want_gpus[$id]}"
done
echo "lab_smoke: ${#want_gpus[@]} jobs completed with the GPUs Slurm allocated ($PROFILE profile)"

if [[ $PROFILE == site ]]; then
    # Confinement: exactly the job's own two devices open (ENXIO, no driver).
    allocated=$(sed -n 's/^gpus \([0-9,]*\) .*/\1/p' "$LAB/out/open.out")
    [[ $(tr ',' '\n' <<<"$allocated" | grep -c .) == 2 ]] || fail "open job: SLURM_JOB_GPUS='$allocated'"
    for k in 0 1 2 3 4 5 6 7; do
        want=EPERM
        [[ ",$allocated," == *",$k,"* ]] && want=ENXIO
        grep -qx "open n2 $k $want" "$LAB/out/open.out" ||
            fail "open job: nvidia$k should give $want: $(grep "open n2 $k " "$LAB/out/open.out")"
    done
    grep -qx "gpus $allocated 0,1" "$LAB/out/open.out" || fail "open job: $(grep '^gpus' "$LAB/out/open.out")"
    echo "lab_smoke: confinement: job $open_id opened GPUs $allocated of n2 and got EPERM on the other six"

    # Typed GPUs: on a node of that type.
    for pair in "$v100_id v100" "$a100_id a100"; do
        read -r id type <<<"$pair"
        node=$(scontrol show job "$id" | sed -n 's/^ *NodeList=\([^ ]*\).*/\1/p')
        scontrol show node "$node" | grep -q "Gres=gpu:$type:8" || fail "job $id (gpu:$type:1) ran on $node: $(scontrol show node "$node" | grep Gres=)"
    done
    echo "lab_smoke: typed: gpu:v100:1 ran on a v100 node, gpu:a100:1 on an a100 node"

    # Accounting: every job in sacct, with its account and GPUs (slurmctld
    # sends the records to slurmdbd asynchronously: wait for the last end).
    wait_match 30 "^$beta_id\|beta\|lucidlab2\|COMPLETED\|[^|]*gres/gpu=1(,|$)" \
        sacct -n -X -P -j "$beta_id" -o JobID,Account,User,State,AllocTRES ||
        fail "sacct: job $beta_id of lucidlab2 not recorded in beta"
    wait_match 30 "^$open_id\|alpha\|root\|COMPLETED\|[^|]*gres/gpu=2(,|$)" \
        sacct -n -X -P -j "$open_id" -o JobID,Account,User,State,AllocTRES ||
        fail "sacct: job $open_id not recorded"
    for id in "${!want_gpus[@]}"; do
        wait_match 30 "^$id\|COMPLETED\|[^|]*gres/gpu=${want_gpus[$id]}(,|$)" \
            sacct -n -X -P -j "$id" -o JobID,State,AllocTRES || fail "sacct: job $id not recorded with ${want_gpus[$id]} GPUs"
    done
    echo "lab_smoke: sacct: every job recorded with its account and GPUs"

    # Fair share: both accounts and their users in sshare.
    shares=$(sshare -n -P -a -o Account,User | sed 's/^ *//')
    for want in "alpha|" "alpha|root" "alpha|lucidlab1" "beta|" "beta|lucidlab2" "beta|nobody"; do
        grep -qxF "$want" <<<"$shares" || fail "sshare lacks '$want': $shares"
    done
    echo "lab_smoke: sshare lists alpha (root, lucidlab1) and beta (lucidlab2, nobody)"
fi

# Down: nothing of this lab keeps running.
pids=$(awk '{print $2}' "$LAB/pids")
bash "$SRC/scripts/lab-cluster.sh" down "$LAB" >/dev/null
trap - EXIT
for pid in $pids; do
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || true)
    [[ -z $state || $state == Z ]] || fail "pid $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline")) still runs after down"
done
first=$(sed -n 's/^FirstJobId=//p' "$LAB/etc/slurm.conf")
if [[ -n $first ]]; then
    # (find fails when no slurm_* folder is left at all: that is a pass.)
    left=$(find /sys/fs/cgroup/*/slurm_* -maxdepth 2 -type d -name 'job_*' 2>/dev/null |
        awk -F_ -v lo="$first" -v hi=$((first + 99999)) '$NF >= lo && $NF <= hi' || true)
    [[ -z $left ]] || fail "job cgroups left after down: $left"
fi
echo "lab_smoke: down left no daemon${first:+ and no job cgroup}"

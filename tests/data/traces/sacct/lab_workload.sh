#!/usr/bin/env bash
# lab_workload.sh OUTDIR — runs a small GPU workload on a lab cluster
# (scripts/lab-cluster.sh up DIR, with JobCompType=jobcomp/filetxt and
# JobCompLoc=DIR/jobcomp.txt set in DIR/etc/slurm.conf; SLURM_CONF exported)
# and saves what Slurm recorded:
#   submitted.txt   job id, partition, account, GPUs asked, what the job does
#   scontrol.txt    `scontrol show job -o` of every job (done and running)
#   jobcomp.txt     the jobcomp/filetxt log
#   completion.txt  `sacct --completion --parsable2 --allocations -o ...` (the
#                   documented field list, read from the jobcomp log: the lab has
#                   no slurmdbd, so `sacct` without --completion has no data)
set -euo pipefail
out=$1
mkdir -p "$out"
cd "$out"
: >submitted.txt
sub() { # partition account gpus-as-asked command... ; records and submits
    local part=$1 acct=$2 gpus=$3
    shift 3
    local id
    id=$(sbatch --parsable -p "$part" -A "$acct" -o /dev/null "$@")
    echo "$id $part $acct $gpus $*" >>submitted.txt
    echo "$id"
}
sub main teamA 1 --gres=gpu:1 -t 10 --wrap "sleep 2" >/dev/null
sub main teamB 4 --gres=gpu:4 -t 5 --wrap "sleep 3" >/dev/null
sub main teamA 4 --gres=gpu:2 -N 2 -t 10 --wrap "srun sleep 2" >/dev/null
sub profiling teamB 1 --gres=gpu:1 -t 3 --wrap "sleep 1" >/dev/null
sub main teamA 3 --gres=gpu:3 -t 10 --wrap "sleep 1; exit 3" >/dev/null
sub main teamC 0 -t 10 --wrap "sleep 1" >/dev/null
sub main teamB 2 --gres=gpu:2 --array=0-2 -t 10 --wrap "sleep 2" >/dev/null
sub main teamC 3 --gpus=3 -t 10 --wrap "sleep 2" >/dev/null
long=$(sub main teamC 4 --gres=gpu:4 -t 20 --wrap "sleep 300")
held=$(sub main teamA 1 -H --gres=gpu:1 -t 10 --wrap "sleep 1")
sleep 6
scancel "$long" "$held"
sleep 8
still=$(sub main teamA 2 --gres=gpu:2 -t 60 --wrap "sleep 600")
sleep 3
scontrol show job -o >scontrol.txt
sacct --completion --parsable2 --allocations \
    -o JobID,User,Account,Partition,AllocTRES,ReqTRES,Submit,Start,End,Elapsed,State,NNodes \
    >completion.txt 2>&1 || true
cp "$(sed -n 's/^JobCompLoc=//p' "$SLURM_CONF")" jobcomp.txt
scancel "$still"

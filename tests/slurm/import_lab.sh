#!/usr/bin/env bash
# import_lab.sh — `lucid trace import --format sacct` on what a real Slurm
# cluster just ran: brings up the lab cluster with the jobcomp/filetxt log,
# runs tests/data/traces/sacct/lab_workload.sh (13 jobs), writes scontrol's
# records in sacct's schema (the lab has no slurmdbd, see that folder's
# README), imports them and checks GPUs, durations and submit times against
# Slurm's own jobcomp log and the sbatch requests; then simulates the folder.
# On the site profile (slurmdbd) it also moves one job from the profiling
# partition to main the way lucidd does (requeue-hold, partition, release)
# and imports real `sacct --duplicates` output: the job's two records must
# join into one job (check_duplicates.py).
#   bash import_lab.sh SOURCE_DIR WORK_DIR LUCID
set -euo pipefail
SRC=$1 WORK=$2 LUCID=$3
LAB=$WORK/import-lab
DATA=$SRC/tests/data/traces/sacct
rm -rf "$LAB"
mkdir -p "$LAB"
trap 'bash "$SRC/scripts/lab-cluster.sh" down "$LAB" >/dev/null 2>&1 || true' EXIT
bash "$SRC/scripts/lab-cluster.sh" up "$LAB" --nodes 2 --gpus 4 --prof-nodes 1 >/dev/null
export SLURM_CONF=$LAB/etc/slurm.conf
# The workload's accounts, where associations are enforced (site profile).
if grep -q '^AccountingStorageEnforce=.*associations' "$SLURM_CONF"; then
    sacctmgr -i add account teamA,teamB,teamC Organization=lab Description=import-lab >/dev/null
    sacctmgr -i add user root Account=teamA,teamB,teamC >/dev/null
fi
bash "$DATA/lab_workload.sh" "$LAB/run" >/dev/null
scontrol show node -o >"$LAB/run/nodes.txt"
python3 "$DATA/scontrol_to_sacct.py" "$LAB/run/scontrol.txt" >"$LAB/lab.sacct"
"$LUCID" trace import --format sacct "$LAB/lab.sacct" "$LAB/run/nodes.txt" --out "$LAB/trace" >/dev/null
python3 "$DATA/check_lab.py" "$LAB/run" "$LAB/trace/trace.csv"
"$LUCID" simulate "$LAB/trace/experiment.ini" --quiet
if grep -q '^AccountingStorageType=accounting_storage/slurmdbd' "$SLURM_CONF"; then
    state() { scontrol show job -o "$1" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }
    wait_for() { # job state seconds
        local deadline=$((SECONDS + $3))
        until [[ $(state "$1") == "$2" ]]; do
            ((SECONDS < deadline)) || { echo "import_lab: job $1 is $(state "$1"), expected $2"; exit 1; }
            sleep 0.2
        done
    }
    moved=$(sbatch --parsable -p profiling -A teamA --gres=gpu:1 -t 5 -o /dev/null --wrap "sleep 4")
    wait_for "$moved" RUNNING 30
    sleep 2
    node=$(squeue -h -j "$moved" -o %N)
    scontrol requeuehold "$moved"
    wait_for "$moved" PENDING 30
    # Off the first run's node (its credential is revoked there for a while)
    # and eligible now, as lucidd's move does (docs/live.md).
    scontrol update jobid="$moved" partition=main starttime=now ${node:+excnodelist=$node}
    scontrol release "$moved"
    wait_for "$moved" COMPLETED 60
    cols=JobID,User,Account,Partition,AllocTRES,ReqTRES,Submit,Start,End,Elapsed,State,NNodes
    since=$(date -u -d '-1 hour' +%Y-%m-%dT%H:%M:%S)
    deadline=$((SECONDS + 30)) # slurmdbd stores the main run's end shortly after
    until TZ=UTC sacct -a -X -P --duplicates -S "$since" -o "$cols" >"$LAB/dup.sacct" &&
        [[ $(grep -c "^$moved|.*|COMPLETED|" "$LAB/dup.sacct") == 1 ]]; do
        ((SECONDS < deadline)) || { echo "import_lab: sacct has no COMPLETED record of job $moved"; exit 1; }
        sleep 0.5
    done
    TZ=UTC sacct -a -X -P -S "$since" -o "$cols" -j "$moved" >"$LAB/last.sacct"
    "$LUCID" trace import --format sacct "$LAB/dup.sacct" "$LAB/run/nodes.txt" --out "$LAB/dup" >/dev/null
    python3 "$DATA/check_duplicates.py" "$LAB/dup.sacct" "$LAB/last.sacct" "$LAB/dup/trace.csv" "$moved"
fi
echo "import_lab: passed"

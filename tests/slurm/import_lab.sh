#!/usr/bin/env bash
# import_lab.sh — `lucid trace import --format sacct` on what a real Slurm
# cluster just ran: brings up the lab cluster with the jobcomp/filetxt log,
# runs tests/data/traces/sacct/lab_workload.sh (13 jobs), writes scontrol's
# records in sacct's schema (the lab has no slurmdbd, see that folder's
# README), imports them and checks GPUs, durations and submit times against
# Slurm's own jobcomp log and the sbatch requests; then simulates the folder.
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
echo "import_lab: passed"

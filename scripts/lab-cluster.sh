#!/usr/bin/env bash
# lab-cluster.sh — a real Slurm cluster on loopback, for lucid's tests and demos.
#
#   lab-cluster.sh up DIR [--profile site|simple] [--nodes N] [--gpus G]
#                         [--prof-nodes P] [--gpu-types LIST|none] [--cpus C]
#                         [--memory MB] [--port P] [--plugins PLUGIN_DIR]
#                         [--lucid-partitions LIST] [--lucid-conf KEY=VAL]...
#                         [--fail-open SECONDS|off] [--min-job-age SECONDS]
#   lab-cluster.sh down DIR        stop every daemon this script started in DIR
#   lab-cluster.sh status DIR      one line per recorded daemon, then sinfo
#   lab-cluster.sh env DIR         prints `export SLURM_CONF=...` for eval
#   lab-cluster.sh restart-ctld DIR  stop slurmctld and start it again (state kept)
#   lab-cluster.sh stop-ctld DIR   stop slurmctld only (nodes and jobs keep running)
#   lab-cluster.sh start-ctld DIR  start it again after stop-ctld
#
# Everything lives under DIR: configuration, spool, logs, state, fake GPU
# character devices (mode 0666, like /dev/nvidia*), and a private munged with
# its own key and socket (so no system folder is written and parallel
# clusters do not share anything).  Main nodes are n1..nN in partition `main`
# (default), profiling nodes p1..pP in partition `profiling`; each node has G
# fake GPUs /DIR/dev/<node>/nvidiaK and C CPUs (default 32), MB of memory
# (default 64000).
#
# Two profiles.  `site` (the default) is configured like a production GPU
# site: sched/backfill; priority/multifactor with fair share, age, job size
# and QOS weights and a 7-day half-life; task/cgroup + proctrack/cgroup with
# ConstrainDevices=yes (cgroup v1, DIR/etc/cgroup.conf); CR_Core_Memory with
# DefMemPerCPU=MB/C; jobacct_gather/linux; slurmdbd on a private MariaDB
# (datadir DIR/db, socket DIR/run/mariadb.sock, port P+91; slurmdbd on P+92)
# with AccountingStorageEnforce=associations,limits,qos; accounts `alpha`
# (users root, lucidlab1) and `beta` (nobody, lucidlab2) — the two lucidlabN
# system users are created when missing and left in place; GPUs typed by
# --gpu-types (default a100,v100: main nodes in halves, the first half and
# the profiling nodes a100; `none` for untyped); a count-only GRES
# `lucidshare` (one unit per GPU, accounted and billed like a GPU) that
# lucidd asks for a packed job; a first job id of its own
# (FirstJobId, from the port block), because slurmd's cgroup hierarchy is
# named after the node (slurm_n1/uid_0/job_ID) and shared by every lab on
# this host.  `simple` is the configuration of the first lab tests:
# sched/builtin, every priority weight 0, task/none, no accounting database,
# untyped GPUs; it starts in about a second (site: several, mostly MariaDB
# and slurmdbd).  Both keep jobcomp/filetxt.  LUCID_LAB_PROFILE=simple in the
# environment makes simple the default (so `ctest -L slurm` runs on it).
#
# Ports: slurmctld on P, node i on P+i (default: a free block of 100 below
# 32000, chosen from a hash of DIR; P+90 is left for lucidd's /metrics, P+91
# is MariaDB's, P+92 slurmdbd's).  PIDs are recorded in DIR/pids and daemons
# are stopped by PID only; `down` also removes this lab's job cgroups.  With
# --plugins, lucid's job_submit and SPANK plugins are loaded from PLUGIN_DIR (job_submit_lucid.so, spank_lucid.so), and each
# --lucid-conf line is added to their lucid.conf.  Fail-open is on as in
# the package: lucid.conf names DIR/heartbeat with fail_open_after=180
# (--fail-open sets the seconds; `off` leaves the heartbeat out), so start
# lucidd with `--heartbeat DIR/heartbeat` or new jobs run under plain Slurm.
# Slurm records every job's end in DIR/log/jobcomp.log (jobcomp/filetxt:
# one `JobId=... JobState=... Partition=... StartTime=... EndTime=...
# NodeList=...` line per end, also per requeue); --min-job-age sets how long
# ended jobs stay listed (600 s).
# Facts behind each setting: shared/spec/slurm-lab.md; docs/live.md, "Lab
# cluster, tests and demo", says why each site setting is there.
set -euo pipefail

SLURM_PLUGIN_DIR=/usr/lib/x86_64-linux-gnu/slurm-wlm
# The controllers slurmd's cgroup/v1 plugin may create slurm_<node> in.
CGROUP_CONTROLLERS="freezer devices cpuset memory cpu,cpuacct cpuacct cpu"
LAB_ACCOUNTS="alpha beta"

die() { echo "lab-cluster: $*" >&2; exit 1; }

usage() { sed -n '2,57p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

# Process state letter, or empty when the PID no longer exists.
proc_state() { awk '{print $3}' "/proc/$1/stat" 2>/dev/null || true; }

alive() {
    local state
    state=$(proc_state "$1")
    [[ -n "$state" && "$state" != Z && "$state" != X ]]
}

start_daemon() { # name, then command line; records "name pid" in DIR/pids
    local name=$1; shift
    # From DIR/run, so whatever a daemon drops in its working folder (a core
    # file) stays under DIR; exec keeps the recorded PID the daemon's.
    (cd "$DIR/run" && exec setsid "$@" </dev/null >>"$DIR/log/$name.out" 2>&1) &
    echo "$name $!" >>"$DIR/pids"
}

wait_for() { # seconds, description, command...
    local limit=$1 what=$2; shift 2
    local deadline=$((SECONDS + limit))
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || die "timed out after ${limit}s waiting for $what (logs in $DIR/log)"
        sleep 0.1
    done
}

write_munge() {
    mkdir -p "$DIR/munge"
    chmod 711 "$DIR/munge"
    if [[ ! -f "$DIR/munge/munge.key" ]]; then
        head -c 1024 /dev/urandom >"$DIR/munge/munge.key"
        chmod 400 "$DIR/munge/munge.key"
    fi
}

start_munge() {
    start_daemon munged munged --foreground --force \
        --socket="$DIR/munge/munge.socket" --key-file="$DIR/munge/munge.key" \
        --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/log/munged.log" \
        --seed-file="$DIR/munge/munged.seed"
    wait_for 10 "munged" test -S "$DIR/munge/munge.socket"
}

node_list() { # prefix count -> "n1 n2 ..."
    local i out=""
    for ((i = 1; i <= $2; i++)); do out+="$1$i "; done
    echo "$out"
}

# The GPU type of a node under --gpu-types, empty when untyped: main nodes
# in consecutive groups (two types on 4 nodes: n1,n2 the first, n3,n4 the
# second; the first groups take the odd node), profiling nodes the first type.
node_gpu_type() {
    local node=$1 types
    [[ -n "$GPU_TYPES" ]] || return 0
    IFS=, read -r -a types <<<"$GPU_TYPES"
    if [[ $node == p* ]]; then echo "${types[0]}"; return; fi
    local count=${#types[@]} k=${node#n}
    echo "${types[$(((k - 1) / ((NODES + count - 1) / count)))]}"
}

# Site profile: slurmd's cgroup v1 hierarchy is /sys/fs/cgroup/<controller>/
# slurm_<node>/uid_<uid>/job_<id>, the same folder for every lab on this host
# with a node n1, so each lab numbers its jobs from its own first id:
# 100,000 ids per port block (100 ports), below MaxJobId (67,108,863).
first_job_id() { echo $(((PORT / 100) % 600 * 100000 + 1)); }

simple_settings() {
    cat <<EOF
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.log
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
GresTypes=gpu
MailProg=/bin/true
MpiDefault=none
SchedulerType=sched/builtin
# Lucid releases jobs one by one; let Slurm start them within a second.
SchedulerParameters=sched_interval=1
PriorityType=priority/multifactor
PriorityWeightAge=0
PriorityWeightFairshare=0
PriorityWeightJobSize=0
PriorityWeightPartition=0
PriorityWeightQOS=0
PriorityWeightAssoc=0
EOF
}

# Like a production GPU site; docs/live.md ("Lab cluster, tests and demo")
# says why each line is there.
site_settings() {
    cat <<EOF
FirstJobId=$(first_job_id)
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$((PORT + 92))
# slurmctld's connection to slurmdbd ignores AuthInfo's socket: named here.
AccountingStoragePass=$DIR/munge/munge.socket
AccountingStorageEnforce=associations,limits,qos
# gres/lucidshare: the count-only GRES lucidd gives a packed job, so its
# GPUs are accounted to it (docs/deploy.md, "Packing at a site").
AccountingStorageTRES=gres/gpu,gres/lucidshare
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.log
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=$((MEMORY / CPUS))
GresTypes=gpu,lucidshare
MailProg=/bin/true
MpiDefault=none
SchedulerType=sched/backfill
# The main scheduler every second: lucid releases pinned jobs one by one and
# Slurm must start them promptly.  Backfill every 10 s (Slurm's default 30).
SchedulerParameters=sched_interval=1,bf_interval=10,bf_continue,bf_max_job_test=1000
PriorityType=priority/multifactor
PriorityDecayHalfLife=7-0
PriorityCalcPeriod=1
PriorityMaxAge=7-0
PriorityWeightFairshare=10000
PriorityWeightAge=1000
PriorityWeightJobSize=1000
PriorityWeightQOS=2000
PriorityWeightPartition=0
PriorityWeightAssoc=0
EOF
}

write_cgroup_conf() {
    cat >"$DIR/etc/cgroup.conf" <<EOF
# Generated by lab-cluster.sh (site profile): device confinement on the
# host's cgroup v1 hierarchy; cores and memory not constrained.
CgroupPlugin=cgroup/v1
CgroupAutomount=no
CgroupMountpoint=/sys/fs/cgroup
ConstrainDevices=yes
ConstrainCores=no
ConstrainRAMSpace=no
ConstrainSwapSpace=no
EOF
}

write_slurmdbd_conf() {
    cat >"$DIR/etc/slurmdbd.conf" <<EOF
# Generated by lab-cluster.sh (site profile).
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/munge.socket
DbdHost=$(hostname -s)
DbdAddr=127.0.0.1
DbdPort=$((PORT + 92))
SlurmUser=root
LogFile=$DIR/log/slurmdbd.log
PidFile=$DIR/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$((PORT + 91))
StorageUser=root
StorageLoc=slurm_acct_db
EOF
    chmod 600 "$DIR/etc/slurmdbd.conf" # slurmdbd refuses one others may read
}

write_config() {
    local host port=$PORT i=0 node gpu_last=$((GPUS - 1)) type
    host=$(hostname -s)
    mkdir -p "$DIR/etc" "$DIR/state" "$DIR/spool" "$DIR/log" "$DIR/run" "$DIR/dev"
    local plugin_lines=""
    if [[ -n "$PLUGINS" ]]; then
        # The lab's plugins first: an installed lucid-slurm package must not
        # stand in for the build's plugins.
        plugin_lines="PluginDir=$PLUGINS:$SLURM_PLUGIN_DIR
JobSubmitPlugins=lucid
PlugStackConfig=$DIR/etc/plugstack.conf"
        echo "required $PLUGINS/spank_lucid.so" >"$DIR/etc/plugstack.conf"
        # job_submit/lucid reads which partitions lucid manages, and the
        # largest GPU request it accepts, from lucid.conf next to slurm.conf.
        printf 'partitions=%s\nmax_gpus=%d\nmax_gpus_per_node=%d\n' "$LUCID_PARTITIONS" \
            $((NODES * GPUS)) "$GPUS" >"$DIR/etc/lucid.conf"
        # A heartbeat left by an earlier lab in DIR is not this lab's lucidd.
        rm -f "$DIR/heartbeat" "$DIR/heartbeat.tmp"
        [[ $FAIL_OPEN == off ]] ||
            printf 'heartbeat=%s\nfail_open_after=%d\n' "$DIR/heartbeat" "$FAIL_OPEN" >>"$DIR/etc/lucid.conf"
        local line
        for line in ${LUCID_CONF[@]+"${LUCID_CONF[@]}"}; do echo "$line" >>"$DIR/etc/lucid.conf"; done
    fi
    local settings node_shape="CPUs=$CPUS RealMemory=$MEMORY"
    if [[ $PROFILE == site ]]; then
        settings=$(site_settings)
        node_shape="CPUs=$CPUS Sockets=2 CoresPerSocket=$((CPUS / 2)) ThreadsPerCore=1 RealMemory=$MEMORY"
        write_cgroup_conf
        write_slurmdbd_conf
    else
        settings=$(simple_settings)
    fi
    cat >"$DIR/etc/slurm.conf" <<EOF
# Generated by lab-cluster.sh ($PROFILE profile); see shared/spec/slurm-lab.md.
ClusterName=lab$PORT
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.socket
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
SlurmdParameters=config_overrides
$settings
ReturnToService=2
MinJobAge=$MIN_JOB_AGE
KillWait=2
InactiveLimit=0
SlurmctldTimeout=30
SlurmdTimeout=60
MessageTimeout=10
$plugin_lines
EOF
    : >"$DIR/etc/gres.conf"
    for node in $(node_list n "$NODES") $(node_list p "$PROF_NODES"); do
        i=$((i + 1))
        mkdir -p "$DIR/dev/$node" "$DIR/spool/$node"
        local k
        for ((k = 0; k < GPUS; k++)); do
            # 0666 like /dev/nvidia*: the job's device cgroup decides, not the mode.
            [[ -e "$DIR/dev/$node/nvidia$k" ]] || mknod -m 0666 "$DIR/dev/$node/nvidia$k" c 195 "$k"
        done
        type=$(node_gpu_type "$node")
        local share=""
        [[ $PROFILE == site ]] && share=",lucidshare:$GPUS"
        echo "NodeName=$node NodeHostname=$host NodeAddr=127.0.0.1 Port=$((port + i)) $node_shape Gres=gpu:${type:+$type:}$GPUS$share State=UNKNOWN" \
            >>"$DIR/etc/slurm.conf"
        echo "NodeName=$node Name=gpu ${type:+Type=$type }File=$DIR/dev/$node/nvidia[0-$gpu_last]" >>"$DIR/etc/gres.conf"
        [[ -z $share ]] || echo "NodeName=$node Name=lucidshare Count=$GPUS Flags=CountOnly" >>"$DIR/etc/gres.conf"
    done
    local main_nodes prof_nodes billing=""
    # A GPU site charges fair-share usage by the GPU, not by the CPU; a packed
    # job's shared GPUs as much as its partner's (each job of a pair its GPUs).
    [[ $PROFILE == site ]] && billing=" TRESBillingWeights=CPU=1.0,GRES/gpu=8.0,GRES/lucidshare=8.0"
    main_nodes=$(node_list n "$NODES" | sed 's/ $//; s/ /,/g')
    echo "PartitionName=main Nodes=$main_nodes Default=YES MaxTime=INFINITE State=UP$billing" >>"$DIR/etc/slurm.conf"
    if ((PROF_NODES > 0)); then
        prof_nodes=$(node_list p "$PROF_NODES" | sed 's/ $//; s/ /,/g')
        echo "PartitionName=profiling Nodes=$prof_nodes MaxTime=INFINITE State=UP$billing" >>"$DIR/etc/slurm.conf"
    fi
    echo "$NODES $PROF_NODES $GPUS $PORT" >"$DIR/etc/shape" # tests read it too
    echo "$PROFILE" >"$DIR/etc/profile"
}

all_nodes_idle() {
    local total=$((NODES + PROF_NODES)) idle
    idle=$(SLURM_CONF="$DIR/etc/slurm.conf" sinfo -h -N -o '%N %t' 2>/dev/null | sort -u | grep -c ' idle$' || true)
    ((idle == total))
}

start_ctld() {
    start_daemon slurmctld env SLURM_CONF="$DIR/etc/slurm.conf" slurmctld -D
    wait_for 20 "slurmctld" env SLURM_CONF="$DIR/etc/slurm.conf" scontrol ping
}

# --- The accounting database (site profile) ---------------------------------

MARIADB_OPTIONS=() # set by mariadb_options
mariadb_options() {
    # Small and without fsync: a test database, thrown away with DIR.
    # Its own temporary files too: two labs bootstrapping at once in the
    # shared /tmp were seen to lose one's temporary table ("Could not
    # remove temporary table", bootstrap aborted).
    mkdir -p "$DIR/dbtmp"
    MARIADB_OPTIONS=(--no-defaults --datadir="$DIR/db" --tmpdir="$DIR/dbtmp" --user=root
        --innodb-buffer-pool-size=32M --innodb-log-file-size=8M
        --innodb-flush-log-at-trx-commit=0 --innodb-flush-method=nosync --innodb-doublewrite=0 --skip-log-bin)
}

# mariadb-install-db would also load the help tables and the sys schema
# (~6 s); slurmdbd needs only the system tables (stored procedures live in
# mysql.proc), bootstrapped once per DIR (~2 s).
init_mariadb() {
    [[ -d "$DIR/db/mysql" ]] && return 0
    mkdir -p "$DIR/db"
    { printf 'create database if not exists mysql;\nuse mysql;\nSET @auth_root_socket=NULL;\n'
      cat /usr/share/mysql/mysql_system_tables.sql; } |
        mariadbd "${MARIADB_OPTIONS[@]}" --bootstrap >"$DIR/log/mariadb-init.log" 2>&1 ||
        die "mariadbd --bootstrap failed (see $DIR/log/mariadb-init.log)"
}

mariadb_ready() { mariadb --no-defaults --socket="$DIR/run/mariadb.sock" -e 'select 1'; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

sacctmgr_lab() { SLURM_CONF="$DIR/etc/slurm.conf" timeout 20 sacctmgr -i "$@"; }

# System users for the two accounts, created when missing (useradd may meet
# another one's lock: retried).
ensure_lab_users() {
    local user try
    for user in lucidlab1 lucidlab2; do
        for try in 1 2 3 4 5; do
            id "$user" >/dev/null 2>&1 && break
            useradd --system --no-create-home --shell /usr/sbin/nologin --gid nogroup "$user" 2>/dev/null && break
            sleep 1
        done
        id "$user" >/dev/null 2>&1 || die "cannot create the system user $user (useradd)"
    done
}

# The cluster, two accounts and their users, before slurmctld connects
# (associations are enforced: a user without one cannot submit).  One
# sacctmgr session: each round trip to slurmdbd costs ~45 ms on loopback.
# root is also in account root (made with the cluster); its jobs go to alpha.
add_associations() {
    ensure_lab_users
    sacctmgr_lab >"$DIR/log/sacctmgr-setup.log" 2>&1 <<EOF
add cluster lab$PORT
add account alpha,beta Organization=lab Description=lab-team
add user root,lucidlab1 Account=alpha DefaultAccount=alpha
add user nobody,lucidlab2 Account=beta DefaultAccount=beta
modify user root set DefaultAccount=alpha
EOF
    local want got
    want=$'alpha|lucidlab1\nalpha|root\nbeta|lucidlab2\nbeta|nobody'
    got=$(sacctmgr_lab -n -P show associations cluster="lab$PORT" format=Account,User |
        grep -E '^(alpha|beta)\|.' | sort)
    [[ $got == "$want" ]] || die "sacctmgr did not make the lab's associations (see $DIR/log/sacctmgr-setup.log)"
}

start_accounting() {
    mariadb_options
    init_mariadb
    start_daemon mariadbd mariadbd "${MARIADB_OPTIONS[@]}" --socket="$DIR/run/mariadb.sock" \
        --port=$((PORT + 91)) --bind-address=127.0.0.1 --skip-grant-tables \
        --pid-file="$DIR/run/mariadbd.pid" --log-error="$DIR/log/mariadbd.log"
    wait_for 30 "mariadbd" mariadb_ready
    start_daemon slurmdbd env SLURM_CONF="$DIR/etc/slurm.conf" slurmdbd -D
    wait_for 30 "slurmdbd" port_open $((PORT + 92))
    # Once per DIR and cluster name (lab<port>): the database keeps them over
    # a down/up, unless the port block changed.
    if [[ $(cat "$DIR/db/.lab-associations" 2>/dev/null) != "lab$PORT" ]]; then
        add_associations
        echo "lab$PORT" >"$DIR/db/.lab-associations"
    fi
}

# The site profile's cgroup/v1 plugin needs the v1 devices and freezer
# controllers (proctrack/cgroup freezes and signals a job's processes).
cgroup_v1_mounted() {
    local controller
    for controller in devices freezer; do
        awk -v c="$controller" '$3 == "cgroup" && $2 == "/sys/fs/cgroup/" c { found = 1 }
            END { exit !found }' /proc/mounts || return 1
    done
}

cmd_up() {
    [[ -e "$DIR/pids" ]] && die "$DIR already holds a cluster (run: $0 down $DIR)"
    [[ $(id -u) == 0 ]] || die "must run as root (fake GPU devices need mknod)"
    [[ $PROFILE == simple ]] || cgroup_v1_mounted ||
        die "the site profile needs the cgroup v1 devices and freezer controllers under /sys/fs/cgroup (this host has not got them): use --profile simple"
    mkdir -p "$DIR"
    DIR=$(cd "$DIR" && pwd)
    write_config
    write_munge
    : >"$DIR/pids"
    # A failed start leaves nothing running behind it.
    trap 'echo "lab-cluster: start failed, stopping what started" >&2; cmd_down >/dev/null' EXIT
    start_munge
    [[ $PROFILE == site ]] && start_accounting
    start_ctld
    local node
    for node in $(node_list n "$NODES") $(node_list p "$PROF_NODES"); do
        start_daemon "slurmd-$node" env SLURM_CONF="$DIR/etc/slurm.conf" slurmd -D -N "$node"
    done
    wait_for 30 "all nodes idle" all_nodes_idle
    trap - EXIT
    echo "lab-cluster: up in $DIR ($PROFILE profile): $NODES main nodes + $PROF_NODES profiling x $GPUS GPUs, ports $PORT-$((PORT + NODES + PROF_NODES))"
    echo "export SLURM_CONF=$DIR/etc/slurm.conf"
}

stop_pids() { # pids... : TERM, wait up to 5 s, then KILL
    local pid deadline=$((SECONDS + 5)) left
    for pid in "$@"; do alive "$pid" && kill -TERM "$pid" 2>/dev/null || true; done
    while :; do
        left=0
        for pid in "$@"; do alive "$pid" && left=1; done
        ((left)) || return 0
        ((SECONDS < deadline)) || break
        sleep 0.1
    done
    for pid in "$@"; do alive "$pid" && kill -KILL "$pid" 2>/dev/null || true; done
}

# Job steps (slurmstepd and the job's own processes) run in the sessions of
# the slurmd that launched them or in sessions they created; find those whose
# ancestry leads to a recorded slurmd PID (one ps, not one read per process).
descendants() {
    ps -e -o pid=,ppid= | awk -v roots="$*" '
        BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) inside[r[i]] = 1 }
        { parent[$1] = $2 }
        END {
            do {
                changed = 0
                for (pid in parent)
                    if (!(pid in inside) && (parent[pid] in inside)) {
                        inside[pid] = 1; found = found pid " "; changed = 1
                    }
            } while (changed)
            print found
        }'
}

# Node names other labs' slurmd serve now ("n1 n2 p1 ...").
node_names_in_use() { ps -e -o args= | sed -n 's/^slurmd -D -N \([^ ]*\).*/\1/p' | sort -u | paste -sd' '; }

# The job cgroups this lab's slurmd left (its job ids only; steps first),
# then the user and node folders when empty and no other lab's slurmd has a
# node of that name.  Under flock on the node folder, as Slurm locks it.
clean_cgroups() {
    [[ -f "$DIR/etc/shape" && $PROFILE == site ]] || return 0
    local first last controller node root in_use
    first=$(first_job_id) last=$(($(first_job_id) + 99999))
    in_use=" $(node_names_in_use) "
    for controller in $CGROUP_CONTROLLERS; do
        for node in $(node_list n "$NODES") $(node_list p "$PROF_NODES"); do
            root=/sys/fs/cgroup/$controller/slurm_$node
            [[ -d $root ]] || continue
            # shellcheck disable=SC2016
            flock -w 10 "$root" bash -c '
                first=$1 last=$2 root=$3
                for job in "$root"/uid_*/job_*; do
                    [[ -d $job ]] || continue
                    id=${job##*_}
                    ((id >= first && id <= last)) || continue
                    find "$job" -depth -type d -exec rmdir {} + 2>/dev/null || true
                done
                for uid in "$root"/uid_*; do [[ -d $uid ]] && rmdir "$uid" 2>/dev/null; done
                true' _ "$first" "$last" "$root" || true
            [[ $in_use == *" $node "* ]] || rmdir "$root" 2>/dev/null || true
        done
    done
}

cmd_down() {
    [[ -f "$DIR/pids" ]] || { echo "lab-cluster: nothing recorded in $DIR"; return 0; }
    local name pid daemons=() munge_pid="" slurmds=() dbd_pid="" db_pid=""
    if [[ -f "$DIR/etc/slurm.conf" ]]; then
        SLURM_CONF="$DIR/etc/slurm.conf" timeout 5 squeue -h -o %A 2>/dev/null |
            SLURM_CONF="$DIR/etc/slurm.conf" timeout 5 xargs -r scancel --full >/dev/null 2>&1 || true
    fi
    while read -r name pid; do
        case $name in
            munged) munge_pid=$pid ;;
            slurmdbd) dbd_pid=$pid ;;
            mariadbd) db_pid=$pid ;;
            slurmd-*) slurmds+=("$pid"); daemons+=("$pid") ;;
            *) daemons+=("$pid") ;;
        esac
    done <"$DIR/pids"
    local steps=""
    ((${#slurmds[@]})) && steps=$(descendants "${slurmds[@]}")
    # Slurm's daemons and job steps, then the accounting that slurmctld
    # reports to, then its database, munged last.
    # shellcheck disable=SC2086
    stop_pids ${daemons[@]+"${daemons[@]}"} $steps
    [[ -n "$dbd_pid" ]] && stop_pids "$dbd_pid"
    [[ -n "$db_pid" ]] && stop_pids "$db_pid"
    [[ -n "$munge_pid" ]] && stop_pids "$munge_pid"
    clean_cgroups
    mv "$DIR/pids" "$DIR/pids.stopped"
    echo "lab-cluster: down ($DIR)"
}

cmd_restart_ctld() {
    cmd_stop_ctld >/dev/null
    start_ctld
    echo "lab-cluster: slurmctld restarted"
}

cmd_stop_ctld() {
    local name pid rest=""
    while read -r name pid; do
        if [[ $name == slurmctld ]]; then stop_pids "$pid"; else rest+="$name $pid"$'\n'; fi
    done <"$DIR/pids"
    printf '%s' "$rest" >"$DIR/pids"
    echo "lab-cluster: slurmctld stopped"
}

cmd_start_ctld() {
    grep -q '^slurmctld ' "$DIR/pids" && die "slurmctld already recorded in $DIR/pids"
    start_ctld
    echo "lab-cluster: slurmctld started"
}

cmd_status() {
    [[ -f "$DIR/pids" ]] || { echo "lab-cluster: no cluster in $DIR"; return 1; }
    local name pid
    echo "profile $PROFILE"
    while read -r name pid; do
        if alive "$pid"; then echo "$name $pid running"; else echo "$name $pid gone"; fi
    done <"$DIR/pids"
    SLURM_CONF="$DIR/etc/slurm.conf" sinfo -N -o '%N %P %t %G' || true
    if [[ $PROFILE == site ]]; then
        SLURM_CONF="$DIR/etc/slurm.conf" timeout 5 sacctmgr -n -P show associations \
            format=Account,User | sed 's/^/association /' || true
    fi
}

[[ $# -ge 2 ]] || usage
COMMAND=$1 DIR=$2
shift 2
NODES=4 GPUS=8 PROF_NODES=1 PLUGINS="" LUCID_PARTITIONS="main,profiling" MIN_JOB_AGE=600 FAIL_OPEN=180
PROFILE=${LUCID_LAB_PROFILE:-site} GPU_TYPES=default CPUS=32 MEMORY=64000
LUCID_CONF=()
PORT=""
want_number() { [[ $2 =~ ^[0-9]+$ ]] || die "$1 wants a number, not '$2'"; }
while [[ $# -gt 0 ]]; do
    [[ $# -ge 2 ]] || die "$1 wants a value"
    case $1 in
        --profile) [[ $2 == site || $2 == simple ]] || die "--profile wants site or simple, not '$2'"
            PROFILE=$2; shift 2 ;;
        --nodes) want_number "$1" "$2"; NODES=$2; shift 2 ;;
        --gpus) want_number "$1" "$2"; GPUS=$2; shift 2 ;;
        --prof-nodes) want_number "$1" "$2"; PROF_NODES=$2; shift 2 ;;
        --gpu-types) [[ $2 =~ ^[a-z0-9_]+(,[a-z0-9_]+)*$ ]] ||
                die "--gpu-types wants a list like a100,v100 (or none), not '$2'"
            GPU_TYPES=$2; shift 2 ;;
        --cpus) want_number "$1" "$2"; ((${2} >= 2 && ${2} % 2 == 0)) || die "--cpus wants an even number >= 2"
            CPUS=$2; shift 2 ;;
        --memory) want_number "$1" "$2"; MEMORY=$2; shift 2 ;;
        --port) want_number "$1" "$2"; PORT=$2; shift 2 ;;
        --plugins) PLUGINS=$(cd "$2" && pwd); shift 2 ;;
        --lucid-partitions) LUCID_PARTITIONS=$2; shift 2 ;;
        --lucid-conf) [[ $2 == *=* ]] || die "--lucid-conf wants KEY=VALUE, not '$2'"
            LUCID_CONF+=("$2"); shift 2 ;;
        --min-job-age) want_number "$1" "$2"; MIN_JOB_AGE=$2; shift 2 ;;
        --fail-open) [[ $2 == off ]] || want_number "$1" "$2"; FAIL_OPEN=$2; shift 2 ;;
        *) die "unknown option $1" ;;
    esac
done
# Typed GPUs are part of the site profile; the simple one stays untyped.
if [[ $GPU_TYPES == default ]]; then
    if [[ $PROFILE == site ]]; then GPU_TYPES=a100,v100; else GPU_TYPES=none; fi
fi
[[ $GPU_TYPES == none ]] && GPU_TYPES=""

# Something listening on 127.0.0.1:$1?
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A block of 100 ports below the ephemeral range (32768+), the first of them
# derived from DIR and the block skipped when any port of it is taken:
# P..P+nodes for Slurm, P+90 lucidd's /metrics, P+91 MariaDB, P+92 slurmdbd.
pick_port() {
    local bucket k p busy
    bucket=$(($(printf '%s' "$(realpath -m "$DIR")" | cksum | cut -d' ' -f1) % 120))
    for ((k = 0; k < 120; k++)); do
        p=$((20000 + (bucket + k) % 120 * 100))
        busy=0
        for ((i = 0; i <= NODES + PROF_NODES; i++)); do
            port_busy $((p + i)) && { busy=1; break; }
        done
        for i in 90 91 92; do port_busy $((p + i)) && busy=1; done
        ((busy)) || { echo "$p"; return; }
    done
    die "no free block of ports in 20000-31999"
}

if [[ -z $PORT && $COMMAND == up ]]; then
    PORT=$(pick_port)
fi
if [[ -f "$DIR/etc/shape" && $COMMAND != up ]]; then
    read -r NODES PROF_NODES GPUS PORT <"$DIR/etc/shape"
    PROFILE=simple # a lab made before profiles existed
    [[ -f "$DIR/etc/profile" ]] && read -r PROFILE <"$DIR/etc/profile"
fi
case $COMMAND in
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    restart-ctld) DIR=$(cd "$DIR" && pwd); cmd_restart_ctld ;;
    stop-ctld) DIR=$(cd "$DIR" && pwd); cmd_stop_ctld ;;
    start-ctld) DIR=$(cd "$DIR" && pwd); cmd_start_ctld ;;
    env) echo "export SLURM_CONF=$(cd "$DIR" && pwd)/etc/slurm.conf" ;;
    *) usage ;;
esac

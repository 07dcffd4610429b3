# no_slurm.sh — source after checks.sh: points $SLURM_CONF at a slurm.conf
# in $tmp whose slurmctld nobody listens on (port 9, 1 s timeouts), so a
# real lucidd starts, keeps ticking and answers with Slurm unreachable.
cat >"$tmp/slurm.conf" <<EOF
ClusterName=noslurm
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=9
AuthType=auth/munge
AuthInfo=socket=$tmp/no-munge.socket
MessageTimeout=1
TCPTimeout=1
NodeName=n1 CPUs=1
PartitionName=main Nodes=n1
EOF
export SLURM_CONF=$tmp/slurm.conf

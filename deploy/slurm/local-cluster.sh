#!/usr/bin/env bash
# A real single-node Slurm on this machine, for the tests and for trying the job scripts:
# Debian's slurm-wlm and munge, a minimal slurm.conf (no cgroups: proctrack/linuxproc,
# task/none), and munged, slurmctld and slurmd started on localhost with their own socket,
# ports, state and logs in one folder — nothing under /etc is changed.
#
#   deploy/slurm/local-cluster.sh install       # apt-get install slurm-wlm munge (root)
#   deploy/slurm/local-cluster.sh up DIR        # start the daemons; prints SLURM_CONF=DIR/slurm.conf
#   deploy/slurm/local-cluster.sh down DIR      # stop the daemons started by `up DIR`
#
# Clients (sbatch, squeue, scontrol, scancel) find the cluster through SLURM_CONF.
set -euo pipefail

die() { echo "local-cluster: $*" >&2; exit 1; }

install_packages() {
    local missing=()
    for tool in slurmctld slurmd sbatch munged mungekey; do
        command -v "$tool" >/dev/null || missing+=("$tool")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    [ "$(id -u)" -eq 0 ] || die "missing ${missing[*]}: run as root, or apt-get install slurm-wlm munge"
    command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get to install slurm-wlm and munge"
    echo "local-cluster: installing Debian's slurm-wlm and munge" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || die "apt-get update failed"
    apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null \
        || die "apt-get install slurm-wlm munge failed"
    for tool in slurmctld slurmd sbatch munged mungekey; do
        command -v "$tool" >/dev/null || die "$tool is still missing after installing slurm-wlm and munge"
    done
}

# Waits up to $2 seconds for the command $1 to succeed.
wait_for() {
    local what=$1 seconds=$2
    for _ in $(seq $((seconds * 5))); do
        if eval "$what" >/dev/null 2>&1; then return 0; fi
        sleep 0.2
    done
    return 1
}

up() {
    local dir=$1
    [ "$(id -u)" -eq 0 ] || die "slurmd runs jobs as their users: start it as root"
    install_packages
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    [ -e "$dir/slurmctld.pid" ] && die "$dir already holds a running cluster (down it first)"
    mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
    # munged refuses keys and sockets that others could write: its folder is munge's alone
    # (others may only pass through it to the socket).
    chown munge:munge "$dir/munge"
    chmod 0711 "$dir/munge"
    [ -f "$dir/munge/munge.key" ] || runuser -u munge -- mungekey --create --keyfile="$dir/munge/munge.key"
    runuser -u munge -- munged --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
        --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
        --seed-file="$dir/munge/munged.seed" \
        || die "munged did not start (see $dir/munge/munged.log)"

    local host cpus memory_mib
    host=$(hostname -s)
    cpus=$(nproc)
    memory_mib=$(( $(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) / 1024 * 9 / 10 ))
    # Ports off Slurm's defaults (6817/6818), so a real Slurm on the machine is not disturbed.
    cat > "$dir/slurm.conf" <<CONF
ClusterName=gapbench-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
# Finished jobs stay visible to scontrol for an hour (there is no accounting database).
MinJobAge=3600
SchedulerParameters=bf_interval=1
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory_mib State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
    export SLURM_CONF="$dir/slurm.conf"
    slurmctld -f "$SLURM_CONF" || die "slurmctld did not start (see $dir/log/slurmctld.log)"
    slurmd -f "$SLURM_CONF" -N "$host" || die "slurmd did not start (see $dir/log/slurmd.log)"
    wait_for "sinfo -h -N -o %T | grep -qx idle" 60 \
        || die "the node did not come up idle within 60 s: $(sinfo -h -N -o '%T %E' 2>&1) (see $dir/log)"
    echo "SLURM_CONF=$SLURM_CONF"
}

stop_pid_file() {
    local file=$1
    [ -f "$file" ] || return 0
    local pid
    pid=$(cat "$file")
    if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$file"
}

down() {
    local dir=$1
    [ -d "$dir" ] || return 0
    stop_pid_file "$dir/slurmd.pid"
    stop_pid_file "$dir/slurmctld.pid"
    stop_pid_file "$dir/munge/munged.pid"
}

case "${1:-}" in
    install) install_packages ;;
    up) [ $# -eq 2 ] || die "usage: $0 up DIR"; up "$2" ;;
    down) [ $# -eq 2 ] || die "usage: $0 down DIR"; down "$2" ;;
    *) die "usage: $0 install | up DIR | down DIR" ;;
esac

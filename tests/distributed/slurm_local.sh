#!/bin/sh
# A Slurm job array on this one machine: starts munged, a slurmctld and a slurmd (Debian
# slurm-wlm) with a private configuration under WORK, submits tools/distributed/slurm-sweep.sbatch
# as an array of 3 shards plus a dependent merge job, and compares the merge with the unsharded
# sweep. Needs root (slurmd runs jobs as their user) and the ports 6817/6818.
#   usage: slurm_local.sh BINARY SOURCE_DIR WORK
# Exit 0: merged = unsharded; 77: Slurm could not start here (the reason is printed).
set -u
set -f  # the sweep arguments hold * (JSON pointers), never globs
bin=$1
src=$2
work=$3
skip() { echo "slurm: SKIPPED: $*"; cleanup; exit 77; }
cleanup() {
  [ -f "$work/slurmd.pid" ] && kill "$(cat "$work/slurmd.pid")" 2>/dev/null
  [ -f "$work/slurmctld.pid" ] && kill "$(cat "$work/slurmctld.pid")" 2>/dev/null
  [ -f "$work/munged.pid" ] && kill "$(cat "$work/munged.pid")" 2>/dev/null
  return 0
}
command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null ||
  { echo "slurm: SKIPPED: slurm-wlm is not installed (apt-get install slurm-wlm)"; exit 77; }
rm -rf "$work"
mkdir -p "$work/state" "$work/spool" "$work/munge" "$work/out"
host=$(hostname -s)
cpus=$(nproc)
# munge: a private key and socket.
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 600 "$work/munge/munge.key"
chmod 700 "$work/munge"
munged --key-file="$work/munge/munge.key" --socket="$work/munge/socket" --pid-file="$work/munged.pid" \
  --log-file="$work/munge/munged.log" --seed-file="$work/munge/seed" --force 2>"$work/munge/start.err" ||
  skip "munged did not start: $(cat "$work/munge/start.err")"
cat > "$work/slurm.conf" <<CONF
ClusterName=rsim
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$work/slurm.conf"
slurmctld -f "$work/slurm.conf" 2>"$work/slurmctld.err" || skip "slurmctld did not start: $(tail -3 "$work/slurmctld.err" "$work/slurmctld.log" 2>/dev/null)"
slurmd -f "$work/slurm.conf" 2>"$work/slurmd.err" || skip "slurmd did not start: $(tail -3 "$work/slurmd.err" "$work/slurmd.log" 2>/dev/null)"
# The node comes up within seconds, or this machine does not allow it.
up=0
for _ in $(seq 1 30); do
  if sinfo -h -o %T 2>/dev/null | grep -q idle; then up=1; break; fi
  sleep 1
done
[ $up = 1 ] || skip "the node did not become idle: $(sinfo -h -o '%T %E' 2>&1 | head -2); slurmd: $(tail -3 "$work/slurmd.log" 2>/dev/null)"
cd "$src"
args="scenarios/examples/two-consumers.json --vary /consumers/*/config/session.timeout.ms=10000,20000 --seeds 1..3"
jid=$(RSIM="$bin" sbatch --parsable --array=1-3 --chdir="$src" --output="$work/out/task-%a.log" \
  --export=ALL,RSIM="$bin" tools/distributed/slurm-sweep.sbatch "$work/out" $args) || skip "sbatch refused the array"
mid=$(sbatch --parsable --dependency=afterok:"$jid" --chdir="$src" --output="$work/out/merge.log" \
  --wrap "'$bin' merge $work/out/shards/shard-*-of-3.json --out $work/out/sweep") || skip "sbatch refused the merge"
for _ in $(seq 1 180); do
  state=$(sacct -n -X -j "$mid" -o State 2>/dev/null | head -1 | tr -d ' ')
  [ -z "$(squeue -h -j "$jid,$mid" 2>/dev/null)" ] && break
  sleep 1
done
"$bin" sweep $args --quiet --out "$work/whole" || { cleanup; exit 1; }
if diff -r "$work/whole" "$work/out/sweep"; then
  echo "slurm: a job array of 3 shards and a dependent merge = the unsharded sweep, byte for byte"
  cleanup
  exit 0
fi
echo "slurm: merged output differs (or the jobs did not run): $(cat "$work/out"/*.log 2>/dev/null | tail -5)"
cleanup
exit 1

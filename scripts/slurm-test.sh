#!/usr/bin/env bash
# Usage: scripts/slurm-test.sh [DRAPE] [SHOTS] [FRAMES]
#
# Bakes a batch of shots through a real single-node Slurm and checks every cache against a
# solo `drape simulate` of the same shot, byte for byte:
#   1. installs Debian's slurm-wlm and munge if missing (apt-get; needs root),
#   2. starts munged, slurmctld and slurmd in a scratch folder (their own key, socket,
#      ports, state and logs; nothing under /etc is changed),
#   3. writes a manifest of SHOTS shots of fixtures/sheet_2corner.gltf (materials and
#      frame counts varied, FRAMES frames at most), `drape batch --emit slurm`, submits the
#      array with one CPU per task, requeues task 1 mid-bake (`scontrol requeue`) and
#      waits for the array,
#   4. bakes each shot alone and compares the caches with cmp; times both,
#   5. stops the daemons it started, by PID.
# Defaults: target/release/drape, 4 shots, 16 frames. Exits non-zero if a cache differs,
# a task failed or the requeue did not interrupt a running bake.
set -euo pipefail
cd "$(dirname "$0")/.."
drape=$(realpath "${1:-target/release/drape}")
shots=${2:-4}
frames=${3:-16}
scene=$(realpath fixtures/sheet_2corner.gltf)

install_slurm() {
    if command -v slurmctld >/dev/null && command -v slurmd >/dev/null &&
        command -v sbatch >/dev/null && command -v munged >/dev/null; then
        return
    fi
    echo "slurm-test: installing Debian's slurm-wlm and munge" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq slurm-wlm munge >/dev/null
}
install_slurm

work=$(mktemp -d /tmp/drape-slurm.XXXXXX)
pids=()
cleanup() {
    if [ -n "${SLURM_CONF:-}" ] && [ -n "${job:-}" ]; then
        scancel "$job" 2>/dev/null || true
    fi
    local p
    for p in "${pids[@]}"; do
        kill "$p" 2>/dev/null || true
    done
    for p in "${pids[@]}"; do
        wait "$p" 2>/dev/null || true
    done
    rm -rf "$work"
}
trap cleanup EXIT

# munge: its own key and socket.
mkdir -p "$work/munge" "$work/state" "$work/spool" "$work/log"
head -c 1024 /dev/urandom >"$work/munge/munge.key"
chmod 700 "$work/munge"
chmod 400 "$work/munge/munge.key"
socket="$work/munge/munge.socket"
/usr/sbin/munged --foreground --force --socket="$socket" --key-file="$work/munge/munge.key" \
    --pid-file="$work/munge/munged.pid" --log-file="$work/log/munged.log" \
    --seed-file="$work/munge/munged.seed" 2>>"$work/log/munged.err" &
pids+=($!)
for _ in $(seq 50); do
    [ -S "$socket" ] && break
    sleep 0.1
done
munge -S "$socket" -n | unmunge -S "$socket" | grep -q 'STATUS: *Success' || {
    echo "slurm-test: munge does not work:" >&2
    cat "$work/log/munged.err" "$work/log/munged.log" >&2 || true
    exit 1
}

# slurm: one node, this host, with every CPU; ports chosen to miss another instance.
host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/MemTotal/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
port=$((20000 + RANDOM % 20000))
export SLURM_CONF="$work/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=drape-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
KillWait=10
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
/usr/sbin/slurmctld -D -f "$SLURM_CONF" 2>>"$work/log/slurmctld.err" &
pids+=($!)
/usr/sbin/slurmd -D -f "$SLURM_CONF" 2>>"$work/log/slurmd.err" &
pids+=($!)
state=
for _ in $(seq 100); do
    state=$(sinfo -h -o %t 2>/dev/null || true)
    [ "$state" = idle ] && break
    sleep 0.2
done
if [ "$state" != idle ]; then
    echo "slurm-test: the node is '$state', not idle:" >&2
    tail -n 20 "$work"/log/* >&2 || true
    exit 1
fi

# The shots: the sheet in every material preset, over different frame counts.
materials=(cotton silk denim jersey leather)
mkdir -p "$work/batch"
{
    echo '{"shots": ['
    for i in $(seq 0 $((shots - 1))); do
        m=${materials[$((i % 5))]}
        last=$((frames - (i % 3) * 2))
        [ "$i" -gt 0 ] && echo ','
        printf '{"name": "sh%03d", "scene": "%s", "out": "cache/sh%03d.pc2", "frames": "1..%d", "options": ["--material", "%s"]}' \
            "$i" "$scene" "$i" "$last" "$m"
    done
    echo ']}'
} >"$work/batch/shots.json"
"$drape" batch "$work/batch/shots.json" --emit slurm "$work/farm" >/dev/null

t0=$(date +%s.%N)
job=$(sbatch --parsable --cpus-per-task=1 "$work/farm/shots.sbatch")
echo "slurm-test: submitted job array $job ($shots shots, up to $frames frames)" >&2

# Requeue task 1 once it has written some frames (its partial cache exists).
partial="$work/batch/cache/sh001.pc2.partial"
for _ in $(seq 600); do
    [ -s "$partial" ] && break
    sleep 0.1
done
[ -s "$partial" ] || {
    echo "slurm-test: task 1 never started baking" >&2
    exit 1
}
scontrol requeue "${job}_1"
# A requeued task waits out its begin time; let it go at once.
sleep 1
scontrol update JobId="${job}_1" StartTime=now 2>/dev/null || true
echo "slurm-test: requeued ${job}_1 mid-bake" >&2

for _ in $(seq 3000); do
    [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
    sleep 0.2
done
t1=$(date +%s.%N)
if [ -n "$(squeue -h -j "$job")" ]; then
    echo "slurm-test: the array did not finish" >&2
    squeue -j "$job" >&2
    exit 1
fi

log1=$(ls "$work"/farm/logs/*_"${job}"_1.log)
if ! grep -q 'interrupted' "$log1"; then
    echo "slurm-test: task 1's log shows no interrupted run:" >&2
    cat "$log1" >&2
    exit 1
fi

# Solo bakes of the same shots.
mkdir -p "$work/solo"
passed=0
failed=0
t2=$(date +%s.%N)
for i in $(seq 0 $((shots - 1))); do
    m=${materials[$((i % 5))]}
    last=$((frames - (i % 3) * 2))
    "$drape" simulate "$scene" -o "$work/solo/sh$(printf %03d "$i").pc2" --frames "1..$last" \
        --material "$m" --threads 1 --progress none
done
t3=$(date +%s.%N)
for i in $(seq 0 $((shots - 1))); do
    name=sh$(printf %03d "$i")
    if cmp -s "$work/solo/$name.pc2" "$work/batch/cache/$name.pc2"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "slurm-test: $name differs from its solo bake" >&2
        cat "$work"/farm/logs/*_"${job}_$i".log >&2 || true
    fi
done
awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" -v n="$shots" \
    'BEGIN { printf "slurm-test: %d shots through Slurm (2 at a time, one requeued) %.1f s; the same shots baked alone one after another %.1f s\n", n, b - a, d - c }'
echo "slurm: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

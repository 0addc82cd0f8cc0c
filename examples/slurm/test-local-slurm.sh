#!/bin/bash
# End-to-end test of the Slurm example on a throwaway single-node Slurm: munged, slurmctld and
# slurmd on localhost (ports 16817/16818), all config and state in a temporary directory. It
# submits SPEC as a job array of N shards plus the merge job (submit.sh), waits for both, and
# compares the merged CSV with an unsharded `smrtl sweep SPEC` byte for byte.
#
#   examples/slurm/test-local-slurm.sh [SPEC] [N]    # default: examples/sweep/small.json, 3
#
# Needs root (the daemons run as root, SlurmdUser=root) and Debian's slurm-wlm and munge
# (installed with apt-get if missing). No systemd: the daemons run in the foreground as children
# of this script, which stops them on exit. The smrtl binary is $SMRTL, else target/debug/smrtl
# after `cargo build --bin smrtl`. Exit 0 and a PASS line when the bytes match.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
spec=$(realpath "${1:-$repo/examples/sweep/small.json}")
n=${2:-3}

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

[ "$(id -u)" -eq 0 ] || fail "run as root (the test runs slurmctld, slurmd and munged as root)"
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
    ! command -v munged >/dev/null; then
    apt-get install -y slurm-wlm munge
fi

work=$(mktemp -d /tmp/smrtl-slurm.XXXXXX)
chmod 755 "$work" # munged wants every directory above its socket searchable by all
mkdir -p "$work/state" "$work/spool" "$work/log" "$work/out"
mkdir -m 755 "$work/munge"

# A copy of the binary, so that a rebuild while the jobs run cannot change it.
if [ -z "${SMRTL:-}" ]; then
    (cd "$repo" && cargo build --quiet --bin smrtl)
    SMRTL=$repo/target/debug/smrtl
fi
cp "$SMRTL" "$work/smrtl"
export SMRTL=$work/smrtl

pids=()
passed=0
cleanup() {
    for p in "${pids[@]}"; do
        kill "$p" 2>/dev/null || true
    done
    for p in "${pids[@]}"; do
        wait "$p" 2>/dev/null || true
    done
    if [ "$passed" -eq 1 ]; then
        rm -rf "$work"
    else
        echo "logs and state kept in $work" >&2
        tail -n 20 "$work"/log/*.log "$work"/out/slurm-*.out 2>/dev/null >&2 || true
    fi
}
trap cleanup EXIT

wait_for() { # SECONDS WHAT COMMAND...: polls COMMAND every 0.5 s
    local deadline=$((SECONDS + $1)) what=$2
    shift 2
    until "$@"; do
        [ "$SECONDS" -lt "$deadline" ] || fail "$what: not within the time limit"
        sleep 0.5
    done
}

# munge: a private key and socket.
head -c 1024 /dev/urandom >"$work/munge/munge.key"
chmod 400 "$work/munge/munge.key"
/usr/sbin/munged --foreground --socket="$work/munge/munge.socket" \
    --key-file="$work/munge/munge.key" --pid-file="$work/munge/munged.pid" \
    --log-file="$work/log/munged.log" --seed-file="$work/munge/munged.seed" \
    >"$work/log/munged.out" 2>&1 &
pids+=($!)
wait_for 10 "munged socket" test -S "$work/munge/munge.socket"

# Slurm: one node (localhost, 2 CPUs), one partition, no cgroups, no accounting.
cat >"$work/slurm.conf" <<EOF
ClusterName=smrtltest
SlurmctldHost=localhost
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
NodeName=localhost CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$work/slurm.conf
(cd "$work" && exec slurmctld -D -f "$SLURM_CONF") >"$work/log/slurmctld.out" 2>&1 &
pids+=($!)
(cd "$work" && exec slurmd -D -f "$SLURM_CONF" -N localhost) >"$work/log/slurmd.out" 2>&1 &
pids+=($!)
node_idle() { [ "$(sinfo -h -n localhost -o %t 2>/dev/null)" = idle ]; }
wait_for 60 "node localhost idle" node_idle
echo "slurm up: $(sinfo -h -o '%P %a %D %t %N')"

# The job array and the merge job.
read -r array merge < <("$repo/examples/slurm/submit.sh" "$spec" "$n" "$work/out")
echo "submitted array job $array ($n shards) and merge job $merge (afterok:$array)"
jobs_gone() { [ -z "$(squeue -h -j "$array,$merge" 2>/dev/null)" ]; }
wait_for 600 "jobs $array and $merge to finish" jobs_gone
state=$(scontrol show job "$merge" | grep -o 'JobState=[A-Z_]*' || true)
[ "$state" = JobState=COMPLETED ] || fail "merge job $merge: ${state:-unknown state}"

"$SMRTL" sweep "$spec" -o "$work/whole.csv"
cmp "$work/whole.csv" "$work/out/sweep.csv" ||
    fail "merged shards differ from the unsharded run"
echo "PASS: $n Slurm shards of $(basename "$spec") merged == unsharded run" \
    "($(($(wc -l <"$work/whole.csv") - 1)) rows, $(wc -c <"$work/whole.csv") bytes)"

# The memory-issue-control study on a reduced grid: shards through the shared result cache,
# merged == unsharded (computed without the cache), and the report reuses every point.
export SMRTL_CACHE_DIR=$work/cache
repro=(--cycles 20000 --workloads cp+hs,bp+sv,sv+ks --schemes ws,ws-dmil,smk-p-w)
mkdir -p "$work/repro"
read -r array merge < <("$repo/examples/slurm/submit-repro.sh" "$n" "$work/repro" "${repro[@]}")
echo "submitted repro array job $array ($n shards) and merge job $merge (afterok:$array)"
wait_for 600 "jobs $array and $merge to finish" jobs_gone
state=$(scontrol show job "$merge" | grep -o 'JobState=[A-Z_]*' || true)
[ "$state" = JobState=COMPLETED ] || fail "repro merge job $merge: ${state:-unknown state}"
"$SMRTL" repro memory-issue-control "${repro[@]}" --no-cache --csv "$work/repro-whole.csv" \
    >/dev/null 2>"$work/repro-whole.err"
cmp "$work/repro-whole.csv" "$work/repro/repro.csv" ||
    fail "merged repro shards differ from the unsharded run"
"$SMRTL" repro memory-issue-control "${repro[@]}" 2>"$work/repro-report.err" >/dev/null
grep -q "reused 9 of 9 points" "$work/repro-report.err" ||
    fail "the report did not reuse every point: $(cat "$work/repro-report.err")"
echo "PASS: $n Slurm shards of memory-issue-control merged == unsharded run; the report reused every point"

# The stall-inspector study, reduced (2 SMs): the same shape through the same cache.
gsi=(--set sms=2)
mkdir -p "$work/gsi"
read -r array merge < <(SMRTL_EXPERIMENT=stall-inspector \
    "$repo/examples/slurm/submit-repro.sh" "$n" "$work/gsi" "${gsi[@]}")
echo "submitted stall-inspector array job $array ($n shards) and merge job $merge (afterok:$array)"
wait_for 600 "jobs $array and $merge to finish" jobs_gone
state=$(scontrol show job "$merge" | grep -o 'JobState=[A-Z_]*' || true)
[ "$state" = JobState=COMPLETED ] || fail "stall-inspector merge job $merge: ${state:-unknown state}"
"$SMRTL" repro stall-inspector "${gsi[@]}" --no-cache --shard 0/1 --csv "$work/gsi-whole.csv" \
    >/dev/null 2>"$work/gsi-whole.err"
cmp "$work/gsi-whole.csv" "$work/gsi/repro.csv" ||
    fail "merged stall-inspector shards differ from the unsharded run"
"$SMRTL" repro stall-inspector "${gsi[@]}" 2>"$work/gsi-report.err" >/dev/null
grep -q "reused 19 of 19 points" "$work/gsi-report.err" ||
    fail "the stall-inspector report did not reuse every point: $(cat "$work/gsi-report.err")"
echo "PASS: $n Slurm shards of stall-inspector merged == unsharded run; the report reused every point"
passed=1

#!/bin/bash
# Submits an `smrtl sweep` as a Slurm job array of N shards, and the merge of its shards as a
# job that waits for the whole array to succeed (afterok).
#
#   examples/slurm/submit.sh SPEC N [OUTDIR]     # OUTDIR default: ./sweep-out
#
# Prints "ARRAY_JOB_ID MERGE_JOB_ID". The result is OUTDIR/sweep.csv; the jobs' logs are
# OUTDIR/slurm-*.out. Set SMRTL to the smrtl binary if it is not on PATH (the jobs inherit it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
spec=$(realpath "${1:?usage: submit.sh SPEC N [OUTDIR]}")
n=${2:?usage: submit.sh SPEC N [OUTDIR]}
out=$(realpath -m "${3:-sweep-out}")
mkdir -p "$out"
if [ -n "${SMRTL:-}" ]; then
    SMRTL=$(realpath "$SMRTL")
    export SMRTL
fi

# --parsable prints "JOBID" or "JOBID;CLUSTER".
array=$(sbatch --parsable --array="0-$((n - 1))" --chdir="$out" \
    "$here/sweep.sbatch" "$spec" "$out")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes \
    --chdir="$out" "$here/merge.sbatch" "$out" "$n")
merge=${merge%%;*}
echo "$array $merge"

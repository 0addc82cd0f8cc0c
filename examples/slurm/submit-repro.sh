#!/bin/bash
# Submits `smrtl repro EXPERIMENT` ($SMRTL_EXPERIMENT, default memory-issue-control) as a Slurm job array of N shards, and the merge of
# their tables as a job that waits for the whole array to succeed (afterok).
#
#   examples/slurm/submit-repro.sh N OUTDIR [REPRO OPTIONS...]
#   # e.g. submit-repro.sh 16 repro-out --cycles 2000000 --workloads all --smil-grid
#
# Prints "ARRAY_JOB_ID MERGE_JOB_ID". The merged table is OUTDIR/repro.csv (the bytes of an
# unsharded `--csv`); logs are OUTDIR/slurm-*.out. Export SMRTL_CACHE_DIR (a shared directory)
# so the report can then be printed from the cache, and SMRTL if smrtl is not on PATH.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
n=${1:?usage: submit-repro.sh N OUTDIR [REPRO OPTIONS...]}
out=$(realpath -m "${2:?usage: submit-repro.sh N OUTDIR [REPRO OPTIONS...]}")
shift 2
mkdir -p "$out"
if [ -n "${SMRTL:-}" ]; then
    SMRTL=$(realpath "$SMRTL")
    export SMRTL
fi

array=$(sbatch --parsable --array="0-$((n - 1))" --chdir="$out" \
    "$here/repro.sbatch" "$out" "$@")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes \
    --chdir="$out" "$here/merge.sbatch" "$out" "$n" repro.csv)
merge=${merge%%;*}
echo "$array $merge"

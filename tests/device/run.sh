#!/bin/sh
# run.sh DIR: on the GPU machine, run gemm_check over DIR/manifest.txt (built and exported here,
# carried there) and keep the full results in $OUT when the device tool provides it.
set -u
DIR=${1:-out/device}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>&1
tsv=${OUT:-$DIR}/gemm_check.tsv
"$DIR/gemm_check" "$DIR/export/manifest.txt" --tsv "$tsv" > "${OUT:-$DIR}/gemm_check.log" 2>&1
rc=$?
grep -c '^ok' "${OUT:-$DIR}/gemm_check.log" | sed 's/^/ok lines: /'
grep -v '^ok' "${OUT:-$DIR}/gemm_check.log" | head -40
exit $rc

#!/bin/sh
# Tenth session, device call 4, on call 2's database (code restored): the prefill bench's own keys
# swept (4K and 32K tokens, one sequence, the four geometries; every candidate verified first), the
# database returned, then the prefill grid on those picks: the template's split-KV and row-group
# changes against the sixth/seventh sessions' ratios to flash.
set -u
ROOT=$(pwd)
t0=$(date +%s)
export LD_LIBRARY_PATH="$ROOT/out/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$ROOT/out/device/bin:$PATH"
export PYTHONUNBUFFERED=1
DB=out/device/ktune.ktdb
R=$OUT/res
mkdir -p $R
./tune --modelpath models/llama-3.1-8b --tp 1 --target sm_90a --db $DB --no-build --resume --only attn_prefill \
  --shapes bench/results/2026-12-02-h200-s10/prefill_bench_keys.json --budget-min ${PF_MIN:-4.5} > $R/prefill-sweep.log 2>&1
echo "sweep rc=$? $(( $(date +%s) - t0 )) s: $(tail -n 1 $R/prefill-sweep.log)"
sh tests/device/return_db.sh $DB $OUT > $R/return.log 2>&1; echo "return rc=$? $(( $(date +%s) - t0 )) s"
OUT=$R timeout 150 python3 tests/device/bench_prefill.py --db $DB > $R/prefill.log 2>&1; echo "bench rc=$? $(( $(date +%s) - t0 )) s"
tail -12 $R/prefill.log
tar czf $OUT/results.tgz -C $OUT res && rm -rf $R
echo "done $(( $(date +%s) - t0 )) s"

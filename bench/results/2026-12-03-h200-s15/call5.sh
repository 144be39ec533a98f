#!/bin/sh
# Fifteenth session, device call 5: the speculative rows swept (q 4 and 8, bf16 16/2/256 and
# 6/1/256: spec_shapes.json, 96 keys), the first sweep of q 4 / 8 with OB kernels (the law's
# row-blocks key) and q 8's tuned pick; then 16/2/256 batch 8 32K at q 1, 4, 8 (lens equal, cold,
# cuDNN and flash in the run); the database returned.
set -u
ROOT=$(pwd)
t0=$(date +%s)
export LD_LIBRARY_PATH="$ROOT/out/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$ROOT/out/device/bin:$PATH"
export PYTHONUNBUFFERED=1
el() { echo "$(( $(date +%s) - t0 )) s"; }
S=bench/results/2026-12-03-h200-s15
DB=out/ab/c5.ktdb
xz -dkf $DB.xz
R=$OUT/c5; mkdir -p $R
./tune --modelpath models/llama-3.1-8b --tp 1 --target sm_90a --db $DB --no-build --resume --only attn_decode \
    --shapes $S/spec_shapes.json --budget-min 4.0 > $R/sweep.log 2>&1; echo "sweep rc=$? $(el)"
tail -n 2 $R/sweep.log
B="timeout 100 python3 tests/device/bench_attn.py --db $DB --lens equal --rounds 11"
OUT=$R $B --tsv g-16-2-256.tsv --dtype bf16 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 8 --ctx 32768 > $R/g-16-2-256.log 2>&1; echo "16/2/256 rc=$? $(el)"
grep -h "|" $R/g-*.log | grep -E "^(bf16|fp16)" | cut -c1-150
sh tests/device/return_db.sh $DB $OUT > $R/return.log 2>&1; echo "return rc=$? $(el)"
tar czf $OUT/c5.tgz -C $OUT c5 && rm -rf $R
echo "done $(el)"

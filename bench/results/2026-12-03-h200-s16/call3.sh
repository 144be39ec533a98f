#!/bin/sh
# Sixteenth session, device call 3: a fresh database of the landed kernels (decode.hip and
# prefill.hip, bf16 and bf16_e4m3, d128 and d256, built here) swept on sweep_shapes.json: the
# bars' q 1 keys at 128K (never tuned: their rows ran on the 32K buckets' picks), the same at 32K
# (fp8 last tuned before KR), q 4 and q 8 at 16/2/256 batch 8 32K. The database stays on the
# machine for call 4's rows and comes back without code.
set -u
. tests/device/env.sh
S=bench/results/2026-12-03-h200-s16
DB=out/ab3/c3.ktdb
xz -dkf $DB.xz
R=$OUT/c3; mkdir -p $R
./tune --modelpath models/llama-3.1-8b --tp 1 --target sm_90a --db $DB --no-build --resume --only attn_decode \
    --shapes $S/sweep_shapes.json --budget-min 5.5 > $R/sweep.log 2>&1; echo "sweep rc=$? $(el)"
grep -E "^\[" $R/sweep.log | cut -c1-220
tail -n 3 $R/sweep.log
sh tests/device/return_db.sh $DB $OUT > $R/return.log 2>&1; echo "return rc=$? $(el)"
tar czf $OUT/c3.tgz -C $OUT c3 && rm -rf $R
echo "done $(el)"

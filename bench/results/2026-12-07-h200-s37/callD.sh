#!/bin/sh
# Thirty-seventh session, device call D (~5 minutes): the prefill parts law's regret on rows the
# bench's defaults do not hold (out/s40b/x.ktdb.xz, the narrow build of call B): one sequence of 8K,
# 12,000 (not a power of two) and 32K tokens at 8 value heads, 16K at 4 (32 state blocks), two of 8K
# at 8 (128 state blocks: the law keeps one part). Each row: the law's plan against 1 part and
# against 4 parts (KT_GDNP_PARTS), the same kernels in the same rounds. Carry out/bin out/lib
# out/device out/s40b. $OUT/d1.tgz.
set -u
. tests/device/env.sh
call_begin ${N:-d1}
nvidia-smi --query-gpu=name --format=csv,noheader
xz -dc out/s40b/x.ktdb.xz > $W/x.ktdb
ROWS=1x8192/8,1x12000/8,1x32768/8,1x16384/4,2x8192/8
for p in 1 4; do
    timeout 200 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/x.ktdb --ab-parts $p --rounds 5 --rows $ROWS \
        > $R/bench-p$p.log 2>&1
    echo "bench law / $p parts rc=$? $(el)"; grep -E "^[0-9]+x|--ab" $R/bench-p$p.log | cut -c1-120
done
call_end ${N:-d1}

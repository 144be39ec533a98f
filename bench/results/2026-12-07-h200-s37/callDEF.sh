#!/bin/sh
# Thirty-seventh session, device calls D, E and F in one (~6 minutes; callD.sh and callE.sh are the
# first two, as written): D the prefill parts law's regret on held-out rows, E Nsight on _wy, F the
# K-last batch-128 step (bv64 nw4 kpt16 mt1, the sweep's pick) with and without the gated norm:
# whether the split norm's hand-off (a fence, a count and the last block's rows) is what keeps the
# step under 90% of copy. Carry out/bin out/lib out/device out/s40b. $OUT/d1.tgz, e1.tgz, f1.tgz.
set -u
sh bench/results/2026-12-07-h200-s37/callD.sh
sh bench/results/2026-12-07-h200-s37/callE.sh
. tests/device/env.sh
call_begin ${N:-f1}
xz -dc out/s40b/x.ktdb.xz > $W/x.ktdb
python3 tests/device/keep.py $W/x.ktdb $W/one.ktdb gdn_decode VK=1 BV=64 NW=4 KPT=16 MT=1 > /dev/null || echo "keep failed"
for nm in 1 0; do
    OUT=$R timeout 150 python3 tests/device/bench_gdn.py --lib $L --db $W/one.ktdb --vk 1 --hv 32 --batch 128 --tokens 1 \
        --regime cold,hot --rounds 9 --norm $nm > $R/bench-norm$nm.log 2>&1
    echo "bench norm $nm rc=$? $(el)"; grep -E "^ +[0-9]|ceilings" $R/bench-norm$nm.log | cut -c1-150
done
call_end ${N:-f1}

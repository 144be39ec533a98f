#!/bin/sh
# Thirty-seventh session, the device time left (~4 minutes): call F (the batch-128 K-last step with
# and without its gated norm) first, then call D's first half (the law's parts against one part on
# the held-out rows). Carry out/bin out/lib out/device out/s40b. $OUT/f1.tgz, d1.tgz.
set -u
. tests/device/env.sh
call_begin f1
nvidia-smi --query-gpu=name --format=csv,noheader
xz -dc out/s40b/x.ktdb.xz > $W/x.ktdb
python3 tests/device/keep.py $W/x.ktdb $W/one.ktdb gdn_decode VK=1 BV=64 NW=4 KPT=16 MT=1 > /dev/null || echo "keep failed"
for nm in 1 0; do
    OUT=$R timeout 100 python3 tests/device/bench_gdn.py --lib $L --db $W/one.ktdb --vk 1 --hv 32 --batch 128 --tokens 1 \
        --regime cold,hot --rounds 9 --norm $nm > $R/bench-norm$nm.log 2>&1
    echo "bench norm $nm rc=$? $(el)"; grep -E "^ +[0-9]|ceilings" $R/bench-norm$nm.log | cut -c1-150
done
call_end f1
call_begin d1
xz -dc out/s40b/x.ktdb.xz > $W/x.ktdb
timeout 150 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/x.ktdb --ab-parts 1 --rounds 5 \
    --rows 1x8192/8,1x12000/8,1x32768/8,1x16384/4,2x8192/8 > $R/bench-p1.log 2>&1
echo "bench law / 1 part rc=$? $(el)"; grep -E "^[0-9]+x|--ab" $R/bench-p1.log | cut -c1-120
call_end d1

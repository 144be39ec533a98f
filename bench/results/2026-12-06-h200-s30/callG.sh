#!/bin/sh
# Thirtieth session, device call G (~3 minutes): which decode form serves batch 32 / 128 x hv 32
# best (1 and 4 tokens, hot), each form alone in a database (out/d2's forms), against the law's pick
# in the same rounds: does the law leave the batch-128 and speculative bars on the table?
# Carry out/lib out/d2. $OUT/g1.tgz.
set -u
. tests/device/env.sh
call_begin g1
K=tests/device/keep.py
unpack d2
for f in "a BV=128 NW=8 KPT=16" "b BV=128 NW=8 KPT=8" "c BV=64 NW=4 KPT=8" "d BV=64 NW=4 KPT=16" "e BV=64 NW=8 KPT=8" \
         "f BV=64 NW=8 KPT=4" "g BV=32 NW=4 KPT=4" "h BV=32 NW=8 KPT=4"; do
    n=${f%% *}
    python3 $K $W/d2.ktdb $W/$n.ktdb gdn_decode VK=0 ${f#* } > /dev/null || { echo "keep $f failed"; continue; }
    timeout 60 python3 tests/device/bench_gdn.py --lib $L --db $W/$n.ktdb --ab $W/d2.ktdb --rounds 5 --hv 32 --batch 32,128 \
        --tokens 1,4 --regime hot > $R/form-$n.log 2>&1
    echo "form $f rc=$? $(el)"; grep -E "^ 32|--ab" $R/form-$n.log | cut -c1-120
done
call_end g1

#!/bin/sh
# Thirtieth session, device call K (~1 minute): the review's mends (the split norm's release now
# the barrier, then thread 0's fence and count; gfx90a's log2) on every sm_90a decode form
# (out/d7) checked, and the rows timed against out/d5 (call J's) in the same rounds.
# Carry out/lib out/d5 out/d7. $OUT/k1.tgz.
set -u
. tests/device/env.sh
call_begin k1
unpack d5; unpack d7
K=tests/device/keep.py
python3 $K $W/d7.ktdb $W/d7bv32.ktdb gdn_decode BV=32 > /dev/null || echo "keep bv32 failed"
for x in d7 d7bv32; do
    timeout 60 python3 tests/device/gdn_check.py --lib $L --db $W/$x.ktdb > $R/check-$x.log 2>&1; echo "check $x rc=$? $(el)"
    grep -E "gdn_check:|WRONG|FAIL|fail" $R/check-$x.log | head -4 | cut -c1-200
done
OUT=$R timeout 60 python3 tests/device/bench_gdn.py --lib $L --db $W/d7.ktdb --ab $W/d5.ktdb --rounds 7 \
    --hv 8,32 --batch 1,32,128 --tokens 1,4 --regime hot > $R/bench.log 2>&1
echo "bench rc=$? $(el)"; grep -E "^ +[0-9]|--ab" $R/bench.log | cut -c1-120
call_end k1

#!/bin/sh
# Thirtieth session, device call H (~4 minutes): out/d3 (every sm_90a decode form, the gates late
# at OB 2) checked and timed against out/d2 in the same rounds (hot; batch 128 cold too); out/p3
# (prefill's BT 64 forms after gdn_ops.h's fast gates and shared rounding) checked and timed
# against c43's (out/d3 holds both). Carry out/lib out/d2 out/d3 out/c43. $OUT/h1.tgz.
set -u
. tests/device/env.sh
call_begin h1
K=tests/device/keep.py
unpack d2; unpack d3; unpack c43
python3 $K $W/d3.ktdb $W/d3bv32.ktdb gdn_decode BV=32 > /dev/null || echo "keep bv32 failed"
python3 $K $W/d3.ktdb $W/d3bv128.ktdb gdn_decode BV=128 > /dev/null || echo "keep bv128 failed"
for x in d3 d3bv32 d3bv128; do
    timeout 60 python3 tests/device/gdn_check.py --lib $L --db $W/$x.ktdb > $R/check-$x.log 2>&1; echo "check $x rc=$? $(el)"
    grep -E "gdn_check:|WRONG|FAIL|fail" $R/check-$x.log | head -4 | cut -c1-200
done
prefill_check d3
OUT=$R timeout 150 python3 tests/device/bench_gdn.py --lib $L --db $W/d3.ktdb --ab $W/d2.ktdb --rounds 7 \
    --hv 8,32 --batch 1,32,128 --tokens 1,4 --regime hot --profile > $R/bench.log 2>&1
echo "bench rc=$? $(el)"; grep -E "^ +[0-9]|--ab" $R/bench.log | cut -c1-120
timeout 60 python3 tests/device/bench_gdn.py --lib $L --db $W/d3.ktdb --ab $W/d2.ktdb --rounds 7 \
    --hv 32 --batch 128 --tokens 1 --regime cold > $R/bench-cold.log 2>&1
echo "bench cold rc=$? $(el)"; grep -E "^ +[0-9]|--ab" $R/bench-cold.log | cut -c1-120
prefill_ab d3 c43 1x16384/8,1x16384/16
call_end h1

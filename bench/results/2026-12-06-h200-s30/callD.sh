#!/bin/sh
# Thirtieth session, device call D (~4 minutes): the decode step's loads all issued before any use,
# fast exp / rsqrt / SiLU, the split norm's lean hand-off (out/d1, every sm_90a decode form):
# gdn_check's chains on the law's picks and on the BV 32 and BV 128 forms alone, then the issue's
# decode rows against c43 in the same rounds, then Nsight's SASS samples of the batch-1 form at the
# finest sampling interval. Carry out/lib out/c43 out/d1. $OUT/d1.tgz.
set -u
. tests/device/env.sh
call_begin d1
K=tests/device/keep.py
unpack c43; unpack d1
python3 $K $W/d1.ktdb $W/d1bv32.ktdb gdn_decode BV=32 > /dev/null || echo "keep bv32 failed"
python3 $K $W/d1.ktdb $W/d1bv128.ktdb gdn_decode BV=128 > /dev/null || echo "keep bv128 failed"
for x in d1 d1bv32 d1bv128; do
    timeout 60 python3 tests/device/gdn_check.py --lib $L --db $W/$x.ktdb > $R/check-$x.log 2>&1; echo "check $x rc=$? $(el)"
    grep -E "gdn_check:|WRONG|FAIL|fail" $R/check-$x.log | head -4 | cut -c1-200
done
OUT=$R timeout 200 python3 tests/device/bench_gdn.py --lib $L --db $W/d1.ktdb --ab $W/c43.ktdb --rounds 7 \
    --hv 8,32 --batch 1,8,32,128 --tokens 1,4 --regime hot --profile > $R/bench.log 2>&1
echo "bench rc=$? $(el)"; grep -vE "Warn|warn" $R/bench.log | cut -c1-150 | head -60
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
B="python3 tests/device/bench_gdn.py --lib $L --db $W/d1.ktdb --hv 8 --batch 1 --tokens 1 --regime hot --rounds 1 --launches 1"
timeout 100 $NCU --clock-control none --sampling-interval 0 --section SourceCounters --page source --print-source sass \
    -k regex:kt_gdn_decode --launch-skip 4 -c 1 $B > $R/ncu-sass-d1-8-1.txt 2>&1; echo "sass rc=$? $(el)"
gzip -9 $R/*.txt
call_end d1

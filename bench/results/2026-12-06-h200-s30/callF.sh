#!/bin/sh
# Thirtieth session, device call F (~4 minutes): out/d2 (every sm_90a decode form after the
# hand-off's changes) checked (gdn_check on the law's picks, BV 32 alone, BV 128 alone) and timed
# against out/d1 in the same rounds at the decode rows; then the trace build (out/tr).
# Carry out/lib out/d1 out/d2 out/tr. $OUT/f1.tgz.
set -u
. tests/device/env.sh
call_begin f1
K=tests/device/keep.py
unpack d1; unpack d2
python3 $K $W/d2.ktdb $W/d2bv32.ktdb gdn_decode BV=32 > /dev/null || echo "keep bv32 failed"
python3 $K $W/d2.ktdb $W/d2bv128.ktdb gdn_decode BV=128 > /dev/null || echo "keep bv128 failed"
for x in d2 d2bv32 d2bv128; do
    timeout 60 python3 tests/device/gdn_check.py --lib $L --db $W/$x.ktdb > $R/check-$x.log 2>&1; echo "check $x rc=$? $(el)"
    grep -E "gdn_check:|WRONG|FAIL|fail" $R/check-$x.log | head -4 | cut -c1-200
done
OUT=$R timeout 200 python3 tests/device/bench_gdn.py --lib $L --db $W/d2.ktdb --ab $W/d1.ktdb --rounds 7 \
    --hv 8,32 --batch 1,8,32,128 --tokens 1,4 --regime hot --profile > $R/bench.log 2>&1
echo "bench rc=$? $(el)"; grep -vE "Warn|warn" $R/bench.log | cut -c1-150 | head -60
T=tests/device/trace_gdn.py   # at bench/results/2026-12-06-h200-s30/ when these calls ran
python3 $K out/tr/tr.ktdb $W/trbv32.ktdb gdn_decode BV=32 KPT=4 > /dev/null || echo "keep trbv32 failed"
timeout 60 python3 $T $L $W/trbv32.ktdb 8 1 2>&1 | tee $R/trace.log | cut -c1-140
call_end f1

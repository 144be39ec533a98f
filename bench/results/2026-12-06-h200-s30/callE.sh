#!/bin/sh
# Thirtieth session, device call E (~2 minutes): Nsight's SASS samples at the finest interval (one
# every 32 cycles a scheduler) of the batch-1 forms as built now (out/nt: the trace recipe's forms,
# no trace), and each one's device time. Carry out/lib out/nt. $OUT/e1.tgz.
set -u
. tests/device/env.sh
call_begin e1
K=tests/device/keep.py
python3 $K out/nt/nt.ktdb $W/bv32.ktdb gdn_decode BV=32 KPT=4 > /dev/null || echo "keep bv32 failed"
python3 $K out/nt/nt.ktdb $W/bv128.ktdb gdn_decode BV=128 KPT=16 OB=0 > /dev/null || echo "keep bv128 failed"
timeout 60 python3 tests/device/bench_gdn.py --lib $L --db $W/bv32.ktdb --ab $W/bv128.ktdb --hv 8,32 --batch 1 --tokens 1 \
    --regime hot --rounds 7 --profile > $R/bench.log 2>&1; echo "bench rc=$? $(el)"; grep -vE "Warn|warn" $R/bench.log | cut -c1-150
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for db in bv32 bv128; do
    B="python3 tests/device/bench_gdn.py --lib $L --db $W/$db.ktdb --hv 8 --batch 1 --tokens 1 --regime hot --rounds 1 --launches 1"
    timeout 100 $NCU --clock-control none --warp-sampling-interval 0 --section SourceCounters --section WarpStateStats \
        --page source --print-source sass -k regex:kt_gdn_decode --launch-skip 4 -c 1 $B > $R/ncu-sass-$db.txt 2>&1
    echo "sass $db rc=$? $(el)"
done
gzip -9 $R/*.txt
call_end e1

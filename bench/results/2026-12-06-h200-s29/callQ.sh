#!/bin/sh
# Twenty-ninth session, device call Q (~5.5 minutes): out/c40 (BT 64 forms PF 1, 3, 4, _wy's inverse
# a (row, 4 columns) a thread) against out/c39 (the same from 7f422aa): the law's pick (PF 4) on c40
# checked through libktrt; c39 / c40 in the same rounds (--ab) at 16K hv 8 and 8 x 2K; the issue's
# rows on c40 against fla and torch; Nsight's SASS samples of c40's _wy and _out.
# Carry out/lib out/c39 out/c40 out/fla. $OUT/q1.tgz.
set -u
. tests/device/env.sh
call_begin q1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
xz -dc out/c39/gdn_all.ktdb.xz > $W/c39.ktdb
xz -dc out/c40/gdn_all.ktdb.xz > $W/c40.ktdb
timeout 45 python3 tests/device/gdn_prefill_check.py --lib $L --db $W/c40.ktdb > $R/check.log 2>&1
echo "prefill check (c40 law) rc=$? $(el)"; grep -E "gdn_prefill_check:|FAIL|WRONG" $R/check.log | head -4 | cut -c1-200
timeout 90 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/c39.ktdb --ab $W/c40.ktdb --profile --rounds 7 \
    --rows 1x16384/8,8x2048/8 > $R/ab.log 2>&1; echo "c39/c40 rc=$? $(el)"
grep -E "^[0-9]+x|--ab" $R/ab.log | cut -c1-110; grep -E "kernel" $R/ab.log | sed 's/kt_gdn_prefill_bf16_vk0_dk128_dv128_bt64_//' | cut -c1-90
OUT=$R timeout 200 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/c40.ktdb --fla out/fla --rounds 5 --profile \
    --rows 1x16384/8,1x4096/8,1x65536/8,1x16384/16,8x2048/8 > $R/rows.log 2>&1
echo "rows rc=$? $(el)"; grep -E "^[0-9]+x|fla " $R/rows.log | cut -c1-130
grep -E "kernel" $R/rows.log | sed 's/kt_gdn_prefill_bf16_vk0_dk128_dv128_bt64_//' | cut -c1-90
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
B="python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/c40.ktdb --rows 1x16384/8 --rounds 1 --launches 1"
timeout 60 $NCU --clock-control none --section SourceCounters --section WarpStateStats --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section Occupancy --page details -k regex:"_wy\$|_out\$" -c 2 $B > $R/ncu.txt 2>&1
echo "ncu rc=$? $(el)"
for k in wy out; do
    timeout 50 $NCU --clock-control none --section SourceCounters --page source --print-source sass -k regex:"_$k\$" -c 1 \
        $B > $R/ncu-sass-$k.txt 2>&1; echo "ncu sass $k rc=$? $(el)"
done
grep -E "^  kt_|Duration|Warp Cycles Per Issued|L1/TEX Cache Through|Compute \(SM\)" $R/ncu.txt | cut -c1-100 | head -12
gzip -9 $R/*.txt
call_end q1

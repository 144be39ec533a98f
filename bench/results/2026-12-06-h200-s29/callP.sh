#!/bin/sh
# Twenty-ninth session, device call P (~4.5 minutes): out/c39 (BT 64 forms PF 1, 3, 4 from 7f422aa):
# the law's pick (PF 4) checked through libktrt, the prefill rows against fla and torch in
# the same rounds with each launch's time; Nsight's SASS samples of _wy and _out (the chunk-parallel
# launches, now the larger part of a row). Carry out/lib out/c39 out/fla. $OUT/p1.tgz.
set -u
. tests/device/env.sh
call_begin p1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
xz -dc out/c39/gdn_all.ktdb.xz > $W/c39.ktdb
timeout 45 python3 tests/device/gdn_prefill_check.py --lib $L --db $W/c39.ktdb > $R/check.log 2>&1
echo "prefill check (law) rc=$? $(el)"; grep -E "gdn_prefill_check:|FAIL|WRONG|kernel" $R/check.log | head -4 | cut -c1-200
OUT=$R timeout 240 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/c39.ktdb --fla out/fla --rounds 5 --profile \
    --rows 1x16384/8,1x4096/8,1x65536/8,1x16384/16,8x2048/8 > $R/rows.log 2>&1
echo "rows rc=$? $(el)"; grep -E "^[0-9]+x|fla " $R/rows.log | cut -c1-130
grep -E "kernel" $R/rows.log | sed 's/kt_gdn_prefill_bf16_vk0_dk128_dv128_bt64_//' | cut -c1-90
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for k in wy out; do
    timeout 100 $NCU --clock-control none --section SourceCounters --section WarpStateStats --section SpeedOfLight \
        --section MemoryWorkloadAnalysis --section Occupancy --page details -k regex:"_$k\$" -c 1 \
        python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/c39.ktdb --rows 1x16384/8 --rounds 1 --launches 1 \
        > $R/ncu-$k.txt 2>&1; echo "ncu $k rc=$? $(el)"
    timeout 100 $NCU --clock-control none --section SourceCounters --page source --print-source sass -k regex:"_$k\$" -c 1 \
        python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/c39.ktdb --rows 1x16384/8 --rounds 1 --launches 1 \
        > $R/ncu-sass-$k.txt 2>&1; echo "ncu sass $k rc=$? $(el)"
done
grep -E "Duration|Warp Cycles Per Issued|L1/TEX Cache Through|Compute \(SM\)" $R/ncu-wy.txt $R/ncu-out.txt | head -12
gzip -9 $R/*.txt
call_end p1

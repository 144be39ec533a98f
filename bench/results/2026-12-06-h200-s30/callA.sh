#!/bin/sh
# Thirtieth session, device call A (~4 minutes): the decode step as it stands (c43's kernels): the
# issue's decode rows hot with each launch's device time, then Nsight Compute on batch 1 x hv 8
# (the law's split-norm BV 32 form and the one-block-a-head BV 128 form) and batch 128 x hv 32:
# where a batch-1 step's 5.7 us beyond the launch floor go. Carry out/lib out/c43. $OUT/a1.tgz.
set -u
. tests/device/env.sh
call_begin a1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
K=tests/device/keep.py
unpack c43
python3 $K $W/c43.ktdb $W/bv128.ktdb gdn_decode BV=128 > /dev/null || echo "keep bv128 failed"
OUT=$R timeout 150 python3 tests/device/bench_gdn.py --lib $L --db $W/c43.ktdb --ab $W/bv128.ktdb --rounds 7 \
    --hv 8,32 --batch 1,8,128 --tokens 1,4 --regime hot --profile > $R/bench.log 2>&1
echo "bench rc=$? $(el)"; cut -c1-150 $R/bench.log | head -40
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
S="--section SourceCounters --section WarpStateStats --section Occupancy --section SpeedOfLight --section LaunchStats --section MemoryWorkloadAnalysis --section SchedulerStats"
for x in c43:8:1 bv128:8:1 c43:32:128; do
    db=${x%%:*}; r=${x#*:}; hv=${r%%:*}; b=${r#*:}
    B="python3 tests/device/bench_gdn.py --lib $L --db $W/$db.ktdb --hv $hv --batch $b --tokens 1 --regime hot --rounds 1 --launches 1"
    timeout 100 $NCU --clock-control none $S --page details -k regex:kt_gdn_decode --launch-skip 2 -c 1 $B > $R/ncu-$db-$hv-$b.txt 2>&1
    echo "ncu $x rc=$? $(el)"
    grep -E "Duration|Registers Per|Achieved Occ|Warp Cycles Per Issued|Issued Ipc|DRAM Through|Memory Through" $R/ncu-$db-$hv-$b.txt | head -10
    timeout 100 $NCU --clock-control none --section SourceCounters --page source --print-source sass -k regex:kt_gdn_decode \
        --launch-skip 2 -c 1 $B > $R/ncu-sass-$db-$hv-$b.txt 2>&1; echo "sass $x rc=$? $(el)"
done
gzip -9 $R/*.txt
call_end a1

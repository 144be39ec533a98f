#!/bin/sh
# Thirty-sixth session, device call P (~3 minutes): why the prefill's key-unsplit state pass (BV 64
# NW 4: a warp 16 value columns x all 128 keys, no exchange) takes ~3 us a chunk where its tensor
# work is ~0.6 us. On out/s33/all.ktdb.xz's [.., K, V] prefill forms at BT 64: a = the law's BV 16
# NW 8 PF 4 (key split 8), b = BV 64 NW 4 PF 0, c = BV 64 NW 4 PF 1. Each kernel's device time at
# 1 x 16384 / 8 (b and c against a in the same rounds); then Nsight Compute on a's and b's state
# pass (speed of light, warp states, scheduler, instruction mix, source counters) and b's SASS with
# its stall samples. Carry out/lib out/device out/s33. $OUT/p1.tgz.
set -u
. tests/device/env.sh
call_begin ${N:-p1}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
K=tests/device/keep.py
xz -dc out/s33/all.ktdb.xz > $W/s33.ktdb
for s in "a BV=16 NW=8 PF=4" "b BV=64 NW=4 PF=0" "c BV=64 NW=4 PF=1"; do
    set -- $s; python3 $K $W/s33.ktdb $W/$1.ktdb gdn_prefill BT=64 $2 $3 $4 > /dev/null || echo "keep $s failed"
done
for x in b c; do
    timeout 60 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/a.ktdb --ab $W/$x.ktdb --profile --rounds 3 \
        --rows 1x16384/8 > $R/ab-a-$x.log 2>&1; echo "a/$x rc=$? $(el)"
    grep -E "^[0-9]+x|--ab|kernel" $R/ab-a-$x.log | cut -c1-140
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for x in a b; do
    timeout 90 $NCU --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
        --section InstructionStats --section Occupancy --section SourceCounters --section MemoryWorkloadAnalysis \
        --page details -k regex:"pf[04]\$" -c 1 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/$x.ktdb \
        --rows 1x16384/8 --rounds 1 --launches 1 > $R/ncu-$x.txt 2>&1; echo "ncu $x rc=$? $(el)"
    grep -E "Duration|Executed Ipc A|Issue Slots Busy|Warp Cycles Per Issued|Executed Instructions  |Registers Per|Achieved Occ|No Eligible|Shared Memory  |L1/TEX Hit" $R/ncu-$x.txt | head -14
done
timeout 90 $NCU --clock-control none --section SourceCounters --page source --print-source sass -k regex:"pf0\$" -c 1 \
    python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/b.ktdb --rows 1x16384/8 --rounds 1 --launches 1 \
    > $R/ncu-sass-b.txt 2>&1; echo "ncu sass b rc=$? $(el)"
gzip -9 $R/*.txt
call_end ${N:-p1}

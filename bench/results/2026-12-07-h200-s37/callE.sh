#!/bin/sh
# Thirty-seventh session, device call E (~2 minutes): where _wy's time goes (186 us at 16K hv 8, now
# on the prefill's critical path with the state pass): Nsight Compute on the law's form
# (bt64 bv16 nw8 pf4, out/s40b/x.ktdb.xz) at 1 x 16384 / 8: speed of light, memory and L1 tables,
# warp states, scheduler, occupancy, then its SASS with stall samples. Carry out/lib out/device
# out/s40b. $OUT/e1.tgz.
set -u
. tests/device/env.sh
call_begin ${N:-e1}
nvidia-smi --query-gpu=name --format=csv,noheader
xz -dc out/s40b/x.ktdb.xz > $W/x.ktdb
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
export KT_GDNP_PARTS=1
timeout 120 $NCU --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section InstructionStats --section Occupancy --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
    --section SourceCounters --page details -k regex:"_wy\$" -c 1 python3 tests/device/bench_gdn_prefill.py --lib $L \
    --db $W/x.ktdb --rows 1x16384/8 --rounds 1 --launches 1 > $R/ncu-wy.txt 2>&1; echo "ncu wy rc=$? $(el)"
grep -E "Duration|Executed Ipc A|Issue Slots Busy|Warp Cycles Per Issued|Registers Per|Achieved Occ|No Eligible|L1/TEX Hit|Shared Memory|Bank|Stall" $R/ncu-wy.txt | head -24
timeout 120 $NCU --clock-control none --section SourceCounters --page source --print-source sass -k regex:"_wy\$" -c 1 \
    python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/x.ktdb --rows 1x16384/8 --rounds 1 --launches 1 \
    > $R/ncu-sass-wy.txt 2>&1; echo "ncu sass wy rc=$? $(el)"
gzip -9 $R/*.txt
call_end ${N:-e1}

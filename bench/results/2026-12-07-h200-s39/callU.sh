#!/bin/sh
# Thirty-ninth session, device call U (~3 minutes, any card): PF 5 with its two chains as four
# interleaved sums (out/s39/x39h.ktdb.xz) against call T's PF 5 (x39f) and main's PF 4 (x38g), the
# same rounds; then Nsight on x39h's state pass and _wy (warp states, the state pass's SASS with
# stall samples). Carry out/lib out/device out/s39. $OUT/u1.tgz.
set -u
. tests/device/env.sh
call_begin ${N:-u1}
nvidia-smi --query-gpu=name --format=csv,noheader
for d in x39h x39f x38g; do xz -dc out/s39/$d.ktdb.xz > $W/$d.ktdb; done
prefill_ab x39h x38g "1x16384/8,1x16384/16"
prefill_ab x39h x39f "1x16384/8"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
export KT_GDNP_PARTS=1
B="python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/x39h.ktdb --rows 1x16384/8 --rounds 1 --launches 1"
for k in pf5 _wy; do
    timeout 60 $NCU --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
        --section InstructionStats --section Occupancy --section MemoryWorkloadAnalysis --section LaunchStats \
        --page details -k regex:"$k\$" -c 1 $B > $R/ncu$k.txt 2>&1; echo "ncu $k rc=$? $(el)"
    grep -E "Duration|Executed Ipc A|Warp Cycles Per Issued|Achieved Occ|L1/TEX Hit|Memory Throughput|DRAM Throughput|Stall" $R/ncu$k.txt | head -12
done
timeout 60 $NCU --clock-control none --section SourceCounters --page source --print-source sass -k regex:"pf5\$" -c 1 $B \
    > $R/ncu-sasspf5.txt 2>&1; echo "ncu sass pf5 rc=$? $(el)"
gzip -9 $R/*.txt
call_end ${N:-u1}

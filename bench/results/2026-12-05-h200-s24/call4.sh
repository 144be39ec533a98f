#!/bin/sh
# Twenty-fourth session, device call 4 (bench/NOTES.md, "where the time goes"): Nsight Compute on
# the decode step at batch 1 x hv 8 (the law's kernel: 6.78 us of device time in call 2 where the
# round trips predict 2-3) and on the prefill's four launches at one 16K sequence, hv 8: warp
# stall reasons, scheduler issue rates, memory and the source lines the stalls sit on.
# Carry out/lib out/c24. Results: $OUT/n1.tgz.
set -u
. tests/device/env.sh
R=$OUT/n1; mkdir -p $R
W=$(mktemp -d)
L=out/lib/libktrt.so
DB=$W/gdn_all.ktdb
xz -dc out/c24/gdn_all.ktdb.xz > $DB
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: ${NCU:-none}"; [ -n "$NCU" ] || { ls /usr/local/cuda/bin | head -50; exit 0; }
S="--section SpeedOfLight --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section MemoryWorkloadAnalysis"
timeout 150 $NCU $S --section SourceCounters -k regex:kt_gdn_decode -c 2 python3 tests/device/bench_gdn.py --lib $L --db $DB \
    --hv 8 --batch 1 --tokens 1 --regime hot --rounds 1 --launches 1 > $R/ncu-decode.txt 2>&1; echo "ncu decode rc=$? $(el)"
grep -E "Duration|Warp Cycles Per Issued|Issued Warp|Stall|stall|Registers|Achieved Occupancy|Block Limit" $R/ncu-decode.txt | head -40 | cut -c1-160
timeout 200 $NCU $S -k regex:kt_gdn_prefill -c 4 python3 tests/device/bench_gdn_prefill.py --lib $L --db $DB \
    --rows 1x16384/8 --rounds 1 --launches 1 > $R/ncu-prefill.txt 2>&1; echo "ncu prefill rc=$? $(el)"
grep -E "kt_gdn_prefill|Duration|Warp Cycles Per Issued|Achieved Occupancy|Memory Throughput|Compute \(SM\)" $R/ncu-prefill.txt | head -40 | cut -c1-160
rm -rf $W
tar czf $OUT/n1.tgz -C $OUT n1 && rm -rf $R
echo "done $(el)"

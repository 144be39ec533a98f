#!/bin/sh
# Twenty-fifth session, device call 2: where the rewritten state pass waits. Call 1 measured it at
# 683 us (1 x 16384, hv 8: 2.7 us a chunk, as the old one), 2.3x slower without the prefetch (PF 0)
# and 1.6-2.4x slower at 8 warps than at 4: neither its products nor its operand copies explain
# that. Nsight Compute: the four launches' sections, then the per-instruction (SASS) stall samples
# of the state pass and of _wy. Carry out/lib out/c25. Results: $OUT/n3.tgz.
set -u
. tests/device/env.sh
R=$OUT/n3; mkdir -p $R
W=$(mktemp -d)
L=out/lib/libktrt.so
xz -dc out/c25/gdn_all.ktdb.xz > $W/all.ktdb
python3 bench/results/2026-12-05-h200-s25/pick.py $W/all.ktdb $W/v.ktdb 64 16 4 1
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
B="python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/v.ktdb --rows 1x16384/8 --rounds 1 --launches 1"
timeout 200 $NCU --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \
    --section LaunchStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
    -k regex:kt_gdn_prefill -c 4 $B > $R/ncu-sections.txt 2>&1; echo "ncu sections rc=$? $(el)"
grep -E "kt_gdn_prefill|Duration|Issued Ipc|Warp Cycles Per Issued|Achieved Occupancy|Registers Per|L2 Hit|Mem Busy|DRAM Throughput" $R/ncu-sections.txt | cut -c1-150
timeout 200 $NCU --section SourceCounters --section WarpStateStats --page source --print-source sass \
    -k regex:'_wy$|pf1$' -c 2 $B > $R/ncu-sass.txt 2>&1; echo "ncu sass rc=$? $(el)"
wc -l $R/ncu-sass.txt
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
python3 - $W/v.ktdb $W/k.cubin <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
row = db.execute("SELECT code FROM kernel WHERE ops='gdn_prefill' AND status='ok' AND params LIKE '%\"VK\":0%' AND params LIKE '%bf16%'").fetchone()
open(sys.argv[2], "wb").write(row[0])
PY
[ -n "$CUOBJ" ] && $CUOBJ -sass $W/k.cubin > $R/sass.txt 2>&1; echo "cuobjdump rc=$? $(wc -l < $R/sass.txt)"
rm -rf $W
tar czf $OUT/n3.tgz -C $OUT n3 && rm -rf $R
echo "done $(el)"

#!/bin/sh
# Thirty-ninth session, device call U (~4 minutes, any card; not run: the session's device time ran
# out). Three databases, each bf16 VK 0 BT 64 BV 16 NW 8, xz'd into out/s39, built here first:
#   x39k  PF 5 at 7935277 or later (vn made by out, -C staged): `PFS=5 sh bench/narrow_prefill.sh`
#   x39m  PF 4 at the same commit (w^T's fragments staged):     `PFS=4 sh bench/narrow_prefill.sh`
#   x39n  PF 4 at 7e7c837 (w^T stored 2 bytes an element): the same from a worktree at 7e7c837
#         (git worktree add /tmp/w 7e7c837; make -C /tmp/w -j2; PFS=4 sh /tmp/w/bench/narrow_prefill.sh)
# Then: the staged stores (x39m against x39n), PF 5 against PF 4 (x39k against x39m), each
# launch's time, the same rounds; Nsight on PF 5's state pass, _wy and _out (warp states; the state
# pass's SASS with stall samples). Carry out/lib out/device out/s39. $OUT/u1.tgz.
set -u
. tests/device/env.sh
call_begin ${N:-u1}
nvidia-smi --query-gpu=name --format=csv,noheader
for d in x39k x39m x39n; do xz -dc out/s39/$d.ktdb.xz > $W/$d.ktdb; done
prefill_ab x39m x39n "1x16384/8,1x65536/8,1x16384/16"
prefill_ab x39k x39m "${ROWS:-1x16384/8,1x65536/8,1x16384/16,8x2048/8}"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
export KT_GDNP_PARTS=1
B="python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/x39k.ktdb --rows 1x16384/8 --rounds 1 --launches 1"
for k in pf5 _wy _out; do
    timeout 60 $NCU --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
        --section InstructionStats --section Occupancy --section MemoryWorkloadAnalysis --section LaunchStats \
        --page details -k regex:"$k\$" -c 1 $B > $R/ncu$k.txt 2>&1; echo "ncu $k rc=$? $(el)"
    grep -E "Duration|Executed Ipc A|Warp Cycles Per Issued|Achieved Occ|L1/TEX Hit|Memory Throughput|DRAM Throughput|Stall" $R/ncu$k.txt | head -12
done
timeout 60 $NCU --clock-control none --section SourceCounters --page source --print-source sass -k regex:"pf5\$" -c 1 $B \
    > $R/ncu-sasspf5.txt 2>&1; echo "ncu sass pf5 rc=$? $(el)"
gzip -9 $R/*.txt
call_end ${N:-u1}

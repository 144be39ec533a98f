#!/bin/sh
# Sixteenth session, device call 8: what the fp8 d128 register form (KR, BN64 NW4, the tuned pick)
# issues, for the next session: its SASS and the bf16 KD pick's (cuobjdump), and ncu's warp states,
# instruction statistics and source counters of one launch each at 32/8/128 batch 8 32K.
set -u
. tests/device/env.sh
R=$OUT/c8; mkdir -p $R
for f in out/ab5/*.cubin; do cuobjdump -sass $f > $R/$(basename $f .cubin).sass 2>&1; done
NC="ncu --section WarpStateStats --section SchedulerStats --section SpeedOfLight --section InstructionStats --section SourceCounters --print-details all"
timeout 200 $NC --kernel-name regex:'^kt_attn_decode.*_f80$' --launch-count 2 python3 tests/device/bench_attn.py --db out/ab5/fb64.ktdb \
  --check-only --dtype bf16_e4m3,bf16 --d 128 --g 4 --hkv 8 --q 1 --batch 8 --ctx 32768 > $R/ncu.txt 2>&1; echo "ncu rc=$? $(el)"
grep -E "^  kt_|Duration|Issue Slots Busy|Eligible Warps Per|Warp Cycles Per Issued|Executed Ipc A|Stall (Short|Wait|MIO|Long|Math|Barrier|Not Sel|Dispatch|No Inst|LG)" $R/ncu.txt | cut -c1-110
tar cJf $OUT/c8.tar.xz -C $OUT c8 && rm -rf $R
echo "done $(el)"

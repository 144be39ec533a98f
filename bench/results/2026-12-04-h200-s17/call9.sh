#!/bin/sh
# Seventeenth session, device call 9: for the next fp8 attempt, what the fp8 d128 ring e spends its
# issue on (32/8/128 batch 8 32K, one launch under ncu): executed instructions by opcode, pipe
# utilisation, warp states.
set -u
. tests/device/env.sh
R=$OUT/c9; mkdir -p $R
L=out/lib/libktrt.so
C="python3 tests/device/bench_attn.py --lib $L --db out/ab7/e.ktdb --check-only --q 1 --lens equal --dtype bf16_e4m3 --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768"
timeout 120 ncu --kernel-name regex:'^kt_attn_decode.*_f80$' --launch-count 1 --metrics sass__inst_executed_per_opcode --print-metric-instances values $C > $R/opcodes.txt 2>&1; echo "opcodes rc=$? $(el)"
timeout 150 ncu --kernel-name regex:'^kt_attn_decode.*_f80$' --launch-count 1 --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section InstructionStats $C > $R/sections.txt 2>&1; echo "sections rc=$? $(el)"
grep -E "sass__inst|Pipe|Issued|Eligible|Stall" $R/opcodes.txt $R/sections.txt | cut -c1-220 | head -60
tar czf $OUT/c9.tgz -C $OUT c9 && rm -rf $R
echo "done $(el)"

#!/bin/sh
# Thirtieth session, device call C (~1.5 minutes): the batch-1 decode step's warp stall reasons
# (Nsight Compute's PC-sample counts by reason, raw): is the 3,800-cycle load phase the instruction
# cache (no_instruction) or memory (long_scoreboard)? Carry out/lib out/c43.
set -u
. tests/device/env.sh
call_begin c1
K=tests/device/keep.py
unpack c43
python3 $K $W/c43.ktdb $W/bv128.ktdb gdn_decode BV=128 > /dev/null || echo "keep bv128 failed"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for x in c43:8:1 bv128:8:1 c43:32:128; do
    db=${x%%:*}; r=${x#*:}; hv=${r%%:*}; b=${r#*:}
    B="python3 tests/device/bench_gdn.py --lib $L --db $W/$db.ktdb --hv $hv --batch $b --tokens 1 --regime hot --rounds 1 --launches 1"
    timeout 100 $NCU --clock-control none --metrics regex:^smsp__pcsamp_warps_issue_stalled_,smsp__pcsamp_sample_count,sm__cycles_active.max,smsp__inst_executed.sum \
        --page raw -k regex:kt_gdn_decode --launch-skip 4 -c 1 $B > $R/stall-$db-$hv-$b.txt 2>&1
    echo "ncu $x rc=$? $(el)"
    grep -E "pcsamp|cycles_active|inst_executed" $R/stall-$db-$hv-$b.txt | awk '$NF+0 > 0' | sort -k3 -n -r | head -14
done
call_end c1

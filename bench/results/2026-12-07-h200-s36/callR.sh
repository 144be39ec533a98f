#!/bin/sh
# Thirty-sixth session, device call R (~2 minutes): a whole head in one state-pass block (BV 128,
# NW 16: 8 value tiles x a 2-way key split, four warps a scheduler), built from a trial recipe (not
# committed: out/s41/w.ktdb.xz holds BT 16 / 32 x PF 0 / 1, [.., K, V], sm_90a, no spills), against
# the law's BV 16 NW 8 PF 4 at BT 64 (out/s41/a.ktdb.xz, from s33): each kernel's device time at
# 1 x 16384 / 8 and 1 x 4096 / 8, ours held to torch's output (the bench's check), then
# gdn_prefill_check's float64 chains on BT 32 PF 1. The datum: SM-time a head-chunk (the CP plan's
# premise, bench/NOTES.md). Carry out/lib out/device out/s41. $OUT/r1.tgz.
set -u
. tests/device/env.sh
call_begin ${N:-r1}
nvidia-smi --query-gpu=name --format=csv,noheader
K=tests/device/keep.py
xz -dc out/s41/a.ktdb.xz > $W/a.ktdb
xz -dc out/s41/w.ktdb.xz > $W/w.ktdb
for s in "w32 BT=32 PF=1" "w16 BT=16 PF=1" "w32p0 BT=32 PF=0"; do
    set -- $s; python3 $K $W/w.ktdb $W/$1.ktdb gdn_prefill $2 $3 > /dev/null || echo "keep $s failed"
done
for x in w32 w16 w32p0; do
    timeout 60 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/a.ktdb --ab $W/$x.ktdb --profile --rounds 3 \
        --rows 1x16384/8,1x4096/8 > $R/ab-a-$x.log 2>&1; echo "a/$x rc=$? $(el)"
    grep -E "^ +[0-9]+x|^[0-9]+x|--ab|kernel" $R/ab-a-$x.log | grep -v "_wy \|_out " | cut -c1-150
done
prefill_check w32
call_end ${N:-r1}

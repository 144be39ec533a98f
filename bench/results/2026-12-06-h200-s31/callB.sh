#!/bin/sh
# Thirty-first session, device call B (~3 minutes): the persistent forms (PS 2: a grid of 2 blocks an
# SM stepping the work items, the next item's state copied into LDS by cp.async while this one
# computes; out/d9 = every bf16 sm_90a decode form of the template with the PS axis). Checked by
# gdn_check's 20 chains on the law's picks (d9) and on the PS forms alone (d9ps: the law has only
# them, so every chain a PS form serves runs on one); the decode rows timed against out/d8
# in the same rounds, hot and cold. Carry out/lib out/d8 out/d9. $OUT/b1.tgz.
set -u
. tests/device/env.sh
call_begin b1
unpack d8; unpack d9
python3 tests/device/keep.py $W/d9.ktdb $W/d9ps.ktdb gdn_decode PS=2/0 > /dev/null || echo "keep PS=2 failed"
decode_check d9
decode_check d9ps
grep -E "refused|kernel" $R/check-d9ps.log | sort | uniq -c | sort -rn | head -6 | cut -c1-160
OUT=$R timeout 150 python3 tests/device/bench_gdn.py --lib $L --db $W/d9.ktdb --ab $W/d8.ktdb --rounds 7 \
    --hv 8,32 --batch 1,32,128 --tokens 1,4 --regime hot,cold > $R/bench.log 2>&1
echo "bench rc=$? $(el)"; grep -E "^ +[0-9]|--ab" $R/bench.log | cut -c1-120
call_end b1

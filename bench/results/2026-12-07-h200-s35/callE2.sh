#!/bin/sh
# Thirty-fifth session, device call E2 (~3 minutes): the decode rows in the K-last layout
# vLLM serves (never timed before), the law's picks of out/s36 against out/s35's (the same forms
# built at 7728fa2: a control, expected within noise), hv 8 / 32 x batch 1 / 32 / 128 x 1 and 4
# tokens, hot and cold. Carry out/lib out/device out/s35 out/s36. $OUT/e2.tgz.
set -u
. tests/device/env.sh
call_begin e2
nvidia-smi --query-gpu=name --format=csv,noheader
xz -dc out/s36/dec.ktdb.xz > "$W/s36.ktdb"
xz -dc out/s35/dec.ktdb.xz > "$W/s35.ktdb"
OUT=$R timeout 150 python3 tests/device/bench_gdn.py --lib $L --db $W/s36.ktdb --ab $W/s35.ktdb --vk 1 --rounds 5 \
    --hv 8,32 --batch 1,32,128 --tokens 1,4 --regime hot,cold > $R/bench-klast.log 2>&1
echo "bench k-last rc=$? $(el)"; grep -E "^ +[0-9]|--ab|ceilings" $R/bench-klast.log | cut -c1-150
gzip -9 $R/*.txt 2>/dev/null
call_end e2

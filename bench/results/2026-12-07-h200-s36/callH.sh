#!/bin/sh
# Thirty-sixth session, device call H (~2.5 minutes): the K-last decode rows of issue 13's bars on
# the forms call G's sweep selected (out/s39/tuned.ktdb.xz: the database G returned, its tp 4 and
# tp 1 selections measured) against the refitted law's picks (out/s39/law.ktdb.xz: the same kernels
# without selections, the forms the recipe now refuses removed: libktrt's law path), in the same
# rounds: hv 8 and 32, batch 1 / 32 / 128, 1 and 4 tokens, cold and hot. First gdn_check on the
# tuned database. Carry out/bin out/lib out/device out/s39. $OUT/h1.tgz.
set -u
. tests/device/env.sh
call_begin ${N:-h1}
nvidia-smi --query-gpu=name --format=csv,noheader
xz -dc out/s39/tuned.ktdb.xz > "$W/tuned.ktdb"
xz -dc out/s39/law.ktdb.xz > "$W/law.ktdb"
decode_check tuned
OUT=$R timeout 200 python3 tests/device/bench_gdn.py --lib $L --db $W/tuned.ktdb --ab $W/law.ktdb --vk 1 --rounds 5 \
    --hv 8,32 --batch 1,32,128 --tokens 1,4 --regime cold,hot > $R/bench-klast.log 2>&1
echo "bench K-last rc=$? $(el)"; grep -E "^ +[0-9]|--ab|ceilings" $R/bench-klast.log | cut -c1-150
call_end ${N:-h1}

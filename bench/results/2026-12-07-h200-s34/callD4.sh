#!/bin/sh
# Thirty-fourth session, device call D4 (~1 minute, the 254 s of device time left): the prefetch's
# A/B at its bar's row only (batch 128 x hv 32, one token, [.., K, V], cold then hot), s35 against
# s33 in the same rounds. Carry out/lib out/device out/s33 out/s35. $OUT/d4.tgz.
set -u
. tests/device/env.sh
call_begin d4
nvidia-smi --query-gpu=name --format=csv,noheader
xz -dc out/s33/all.ktdb.xz > "$W/s33.ktdb"
xz -dc out/s35/dec.ktdb.xz > "$W/s35.ktdb"
OUT=$R timeout 60 python3 tests/device/bench_gdn.py --lib $L --db $W/s35.ktdb --ab $W/s33.ktdb --vk 0 --rounds 5 \
    --hv 32 --batch 128 --tokens 1 --regime cold,hot > $R/bench.log 2>&1
echo "bench rc=$? $(el)"; grep -E "^ +[0-9]|--ab|ceilings" $R/bench.log | cut -c1-150
call_end d4

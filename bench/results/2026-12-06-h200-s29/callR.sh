#!/bin/sh
# Twenty-ninth session, device call R (~4 minutes): out/c41 (_wy's conv 8 channels x 8 rows a thread,
# 16-byte loads, one round trip; _wy told of its 4 blocks an SM) against out/c40 in the same rounds
# (--ab) at 16K hv 8 / hv 16 and 8 x 2K; c41's law pick checked; the issue's rows on c41 against fla
# and torch. Carry out/lib out/c40 out/c41 out/fla. $OUT/r1.tgz.
set -u
. tests/device/env.sh
call_begin r1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
xz -dc out/c40/gdn_all.ktdb.xz > $W/c40.ktdb
xz -dc out/c41/gdn_all.ktdb.xz > $W/c41.ktdb
timeout 45 python3 tests/device/gdn_prefill_check.py --lib $L --db $W/c41.ktdb > $R/check.log 2>&1
echo "prefill check (c41 law) rc=$? $(el)"; grep -E "gdn_prefill_check:|FAIL|WRONG" $R/check.log | head -4 | cut -c1-200
timeout 100 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/c40.ktdb --ab $W/c41.ktdb --profile --rounds 7 \
    --rows 1x16384/8,8x2048/8,1x16384/16 > $R/ab.log 2>&1; echo "c40/c41 rc=$? $(el)"
grep -E "^[0-9]+x|--ab" $R/ab.log | cut -c1-110; grep -E "kernel" $R/ab.log | sed 's/kt_gdn_prefill_bf16_vk0_dk128_dv128_bt64_//' | cut -c1-90
OUT=$R timeout 200 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/c41.ktdb --fla out/fla --rounds 5 \
    --rows 1x16384/8,1x4096/8,1x65536/8,1x16384/16,8x2048/8 > $R/rows.log 2>&1
echo "rows rc=$? $(el)"; grep -E "^[0-9]+x|fla " $R/rows.log | cut -c1-130
call_end r1

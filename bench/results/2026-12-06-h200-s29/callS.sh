#!/bin/sh
# Twenty-ninth session, device call S (~2 minutes): out/c43 (w's transposed staging 8 rows x 8 keys a
# thread by 16-byte loads and stores) against out/c41 in the same rounds (--ab) at 16K hv 8 / hv 16
# and 8 x 2K; c43's law pick checked. Carry out/lib out/c41 out/c43. $OUT/s1.tgz.
set -u
. tests/device/env.sh
call_begin s1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
xz -dc out/c41/gdn_all.ktdb.xz > $W/c41.ktdb
xz -dc out/c43/gdn_all.ktdb.xz > $W/c43.ktdb
timeout 45 python3 tests/device/gdn_prefill_check.py --lib $L --db $W/c43.ktdb > $R/check.log 2>&1
echo "prefill check (c43 law) rc=$? $(el)"; grep -E "gdn_prefill_check:|FAIL|WRONG" $R/check.log | head -4 | cut -c1-200
timeout 100 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/c41.ktdb --ab $W/c43.ktdb --profile --rounds 7 \
    --rows 1x16384/8,8x2048/8,1x16384/16 > $R/ab.log 2>&1; echo "c41/c43 rc=$? $(el)"
grep -E "^[0-9]+x|--ab" $R/ab.log | cut -c1-110; grep -E "kernel" $R/ab.log | sed 's/kt_gdn_prefill_bf16_vk0_dk128_dv128_bt64_//' | cut -c1-90
call_end s1

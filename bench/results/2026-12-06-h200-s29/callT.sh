#!/bin/sh
# Twenty-ninth session, device call T (~2.5 minutes): the session's last prefill (out/c43, 962cc70's
# BT 64 forms) at the rows against fla and torch in the same rounds, each launch's time.
# Carry out/lib out/c43 out/fla. $OUT/t1.tgz.
set -u
. tests/device/env.sh
call_begin t1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
xz -dc out/c43/gdn_all.ktdb.xz > $W/c43.ktdb
OUT=$R timeout 220 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/c43.ktdb --fla out/fla --rounds 5 --profile \
    --rows 1x16384/8,1x4096/8,1x65536/8,1x16384/16,8x2048/8 > $R/rows.log 2>&1
echo "rows rc=$? $(el)"; grep -E "^[0-9]+x|fla " $R/rows.log | cut -c1-130
grep -E "kernel" $R/rows.log | sed 's/kt_gdn_prefill_bf16_vk0_dk128_dv128_bt64_//' | cut -c1-90
call_end t1

#!/bin/sh
# Thirty-seventh session, device call B (~5 minutes): the GDN prefill's plan in parts (out beside the
# state pass on a second lane). out/s40b/x.ktdb.xz: a narrow build at this session's tree (the
# prefill's BT 32 / 64 x BV 16 / 32 x NW 8 x PF 1 / 4 bf16 forms, fp16 BT 16, both layouts; decode
# BV 64 / 128 x NW 4 / 8 x KPT 16, OB 0). 1. gdn_prefill_check through libktrt with the law's plan,
# then with every prefill in 4 parts; 2. the sweep's worker verifying and timing 16K x hv 8 (the
# law's 8 parts, then KT_GDNP_PARTS=1); 3. bench_gdn_prefill every row, the law's parts against
# none (--ab-parts 1), kernel times; 4. 4 parts against the law's at 16K and 64K. Carry out/bin
# out/lib out/device out/s40b. $OUT/b1.tgz.
set -u
. tests/device/env.sh
call_begin ${N:-b1}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
xz -dc out/s40b/x.ktdb.xz > $W/x.ktdb
for parts in law 4; do
    if [ $parts = law ]; then unset KT_GDNP_PARTS; else export KT_GDNP_PARTS=$parts; fi
    timeout 90 python3 tests/device/gdn_prefill_check.py --lib $L --db $W/x.ktdb > $R/check-$parts.log 2>&1
    echo "check ($parts parts) rc=$? $(el)"; grep -E "gdn_prefill_check:|FAIL|WRONG" $R/check-$parts.log | head -4 | cut -c1-200
done
unset KT_GDNP_PARTS
for parts in law 1; do
    if [ $parts = law ]; then unset KT_GDNP_PARTS; else export KT_GDNP_PARTS=$parts; fi
    timeout 120 out/bin/kt worker --db $W/x.ktdb --target sm_90a < out/s40b/worker.in > $R/worker-$parts.log 2>&1
    echo "worker ($parts parts) rc=$? $(el)"; grep -E "^verified|^timed|^control|^fail" $R/worker-$parts.log | cut -c1-160
done
unset KT_GDNP_PARTS
OUT=$R timeout 240 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/x.ktdb --ab-parts 1 --profile --rounds 7 \
    > $R/bench-p1.log 2>&1
echo "bench law / 1 part rc=$? $(el)"; grep -E "^[0-9]+x|--ab" $R/bench-p1.log | cut -c1-150
timeout 120 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/x.ktdb --ab-parts 4 --rounds 7 \
    --rows 1x16384/8,1x65536/8 > $R/bench-p4.log 2>&1
echo "bench law / 4 parts rc=$? $(el)"; grep -E "^[0-9]+x|--ab" $R/bench-p4.log | cut -c1-150
call_end ${N:-b1}

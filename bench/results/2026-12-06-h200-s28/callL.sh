#!/bin/sh
# Twenty-eighth session, device call L (~80 seconds, the device time left): PF 3 (BV 16 NW 8)
# checked through libktrt, then PF 1 / PF 3 at 16K hv 8 alternating twice. Carry out/lib out/c36.
set -u
. tests/device/env.sh
call_begin l1
K=tests/device/keep.py
xz -dc out/c36/gdn_all.ktdb.xz > $W/c36.ktdb
python3 $K $W/c36.ktdb $W/a.ktdb gdn_prefill BT=64 BV=16 NW=8 PF=1 > /dev/null
python3 $K $W/c36.ktdb $W/b.ktdb gdn_prefill BT=64 BV=16 NW=8 PF=3 > /dev/null
timeout 40 python3 tests/device/gdn_prefill_check.py --lib $L --db $W/b.ktdb > $R/check-b.log 2>&1
echo "prefill check (b) rc=$? $(el)"; grep -E "gdn_prefill_check:|FAIL|WRONG" $R/check-b.log | head -3 | cut -c1-200
for i in 1 2; do for s in a b; do
    f=$R/$s$i.log; mkdir -p $R/o$s$i
    OUT=$R/o$s$i timeout 30 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/$s.ktdb --profile --rounds 5 \
        --rows 1x16384/8 > $f 2>&1; echo "$s $i rc=$? $(el)"
    grep -E "^1x" $f | cut -c1-100; grep -E "kernel" $f | sed 's/kt_gdn_prefill_bf16_vk0_dk128_dv128_bt64_//' | cut -c1-90
done; done
call_end l1

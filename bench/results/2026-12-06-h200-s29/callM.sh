#!/bin/sh
# Twenty-ninth session, device call M (~2.5 minutes; s28 callK.sh on PF 3 rebuilt at 3a810ff): PF 3
# (BV 16 NW 8) checked through libktrt, then PF 1 / PF 3 at BV 16 NW 8, PF 3 at NW 4 and at BV 32
# NW 8, 16K hv 8, alternating twice; PF 1 / PF 3 at hv 16 once. Carry out/lib out/c37. $OUT/m1.tgz.
set -u
. tests/device/env.sh
call_begin m1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
K=tests/device/keep.py
xz -dc out/c37/gdn_all.ktdb.xz > $W/c37.ktdb
for s in "a BV=16 NW=8 PF=1" "b BV=16 NW=8 PF=3" "c BV=16 NW=4 PF=3" "e BV=32 NW=8 PF=3"; do
    set -- $s; python3 $K $W/c37.ktdb $W/$1.ktdb gdn_prefill BT=64 $2 $3 $4 > /dev/null || echo "keep $s failed"
done
timeout 45 python3 tests/device/gdn_prefill_check.py --lib $L --db $W/b.ktdb > $R/check-b.log 2>&1
echo "prefill check (b) rc=$? $(el)"; grep -E "gdn_prefill_check:|FAIL|WRONG" $R/check-b.log | head -3 | cut -c1-200
run() {   # run DB ROWS TAG
    f=$R/$1-$3.log; mkdir -p $R/o$1$3
    OUT=$R/o$1$3 timeout 40 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/$1.ktdb --profile --rounds 5 \
        --rows $2 > $f 2>&1; echo "$1 $2 rc=$? $(el)"
    grep -E "^1x" $f | cut -c1-100; grep -E "kernel" $f | sed 's/kt_gdn_prefill_bf16_vk0_dm128_dv128_bt64_//' | cut -c1-90
}
for i in 1 2; do for s in a b c e; do run $s 1x16384/8 $i; done; done
run a 1x16384/16 3; run b 1x16384/16 3
call_end m1

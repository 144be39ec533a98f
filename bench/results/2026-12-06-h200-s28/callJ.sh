#!/bin/sh
# Twenty-eighth session, device call J (~4 minutes): PF 3 (w^T and k as the state pass's fragments,
# straight into registers: no operand LDS, two barriers a chunk) checked through libktrt, then
# timed against PF 1 at 16K hv 8 and 16, BT 64: BV 16 NW 8 / NW 4, BV 32 NW 8, runs alternating.
# Carry out/lib out/c36. Results: $OUT/j1.tgz.
set -u
. tests/device/env.sh
call_begin j1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
K=tests/device/keep.py
xz -dc out/c36/gdn_all.ktdb.xz > $W/c36.ktdb
for s in "a BV=16 NW=8 PF=1" "b BV=16 NW=8 PF=3" "c BV=16 NW=4 PF=3" "d BV=16 NW=4 PF=1" "e BV=32 NW=8 PF=3"; do
    set -- $s; python3 $K $W/c36.ktdb $W/$1.ktdb gdn_prefill BT=64 $2 $3 $4 > /dev/null || echo "keep $s failed"
done
for s in b c e; do
    timeout 45 python3 tests/device/gdn_prefill_check.py --lib $L --db $W/$s.ktdb > $R/check-$s.log 2>&1
    echo "prefill check ($s) rc=$? $(el)"; grep -E "gdn_prefill_check:|FAIL|WRONG" $R/check-$s.log | head -3 | cut -c1-200
done
for i in 1 2; do
    for s in a b c d e; do
        for rows in 1x16384/8 1x16384/16; do
            f=$R/$s$i-${rows#1x16384/}.log
            mkdir -p $R/o$s$i; OUT=$R/o$s$i timeout 40 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/$s.ktdb --profile \
                --rounds 5 --rows $rows > $f 2>&1; echo "$s $i $rows rc=$? $(el)"
            grep -E "^1x" $f | cut -c1-100; grep -E "kernel" $f | sed 's/kt_gdn_prefill_bf16_vk0_dk128_dv128_bt64_//' | cut -c1-90
        done
    done
done
call_end j1

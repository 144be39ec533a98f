#!/bin/sh
# Twenty-ninth session, device call O (~3.5 minutes): PF 3 with the next chunk's set loaded at the
# chunk's top (out/c38): device checks of PF 3 BV 16 NW 8 and NW 4; PF 1 against each in the same
# rounds (--ab) at 16K hv 8 / hv 16, 64K hv 8 and 8 x 2K; Nsight's SASS samples of the new state
# pass. Carry out/lib out/c38. $OUT/o1.tgz.
set -u
. tests/device/env.sh
call_begin o1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
K=tests/device/keep.py
xz -dc out/c38/gdn_all.ktdb.xz > $W/c38.ktdb
for s in "a BV=16 NW=8 PF=1" "b BV=16 NW=8 PF=3" "c BV=16 NW=4 PF=3"; do
    set -- $s; python3 $K $W/c38.ktdb $W/$1.ktdb gdn_prefill BT=64 $2 $3 $4 > /dev/null || echo "keep $s failed"
done
for x in b c; do
    timeout 45 python3 tests/device/gdn_prefill_check.py --lib $L --db $W/$x.ktdb > $R/check-$x.log 2>&1
    echo "prefill check ($x) rc=$? $(el)"; grep -E "gdn_prefill_check:|FAIL|WRONG" $R/check-$x.log | head -3 | cut -c1-200
done
ab() {   # ab DB_B ROWS TAG
    f=$R/ab-$1-$3.log
    timeout 90 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/a.ktdb --ab $W/$1.ktdb --profile --rounds 7 \
        --rows $2 > $f 2>&1; echo "a/$1 $2 rc=$? $(el)"
    grep -E "^[0-9]+x|--ab" $f | cut -c1-110; grep -E "kernel" $f | sed 's/kt_gdn_prefill_bf16_vk0_dk128_dv128_bt64_//' | cut -c1-90
}
ab b 1x16384/8,1x16384/16 1
ab c 1x16384/8 1
ab b 1x65536/8,8x2048/8 2
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
timeout 100 $NCU --clock-control none --section SourceCounters --section WarpStateStats --section SpeedOfLight \
    --page details -k regex:"pf3\$" -c 1 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/b.ktdb \
    --rows 1x16384/8 --rounds 1 --launches 1 > $R/ncu-b.txt 2>&1; echo "ncu rc=$? $(el)"
timeout 100 $NCU --clock-control none --section SourceCounters --page source --print-source sass -k regex:"pf3\$" -c 1 \
    python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/b.ktdb --rows 1x16384/8 --rounds 1 --launches 1 \
    > $R/ncu-sass-b.txt 2>&1; echo "ncu sass rc=$? $(el)"
grep -E "Duration|L1/TEX Cache Through|Warp Cycles Per Issued" $R/ncu-b.txt | head
gzip -9 $R/*.txt
call_end o1

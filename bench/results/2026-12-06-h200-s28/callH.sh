#!/bin/sh
# Twenty-eighth session, device call H (~4 minutes, where device time is too short for callG.sh):
# the prefill's device check on PF 2 and ST 2; PF 2, ST 2 and both against PF 1 ST 1 at 16K hv 8;
# decode batch 1 (the split norm's BV 32 against BV 128, hot).
# Carry out/lib out/c35. Results: $OUT/h1.tgz.
set -u
. tests/device/env.sh
call_begin h1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
K=tests/device/keep.py
xz -dc out/c35/gdn_all.ktdb.xz > $W/c35.ktdb
P="gdn_prefill BT=64 BV=16 NW=8"
python3 $K $W/c35.ktdb $W/new.ktdb $P PF=1 ST=1 && python3 $K $W/c35.ktdb $W/pf2.ktdb $P PF=2 ST=1
python3 $K $W/c35.ktdb $W/st2.ktdb $P PF=1 ST=2 && python3 $K $W/c35.ktdb $W/both.ktdb $P PF=2 ST=2
for s in st2 both; do
    timeout 45 python3 tests/device/gdn_prefill_check.py --lib $L --db $W/$s.ktdb > $R/prefill-check-$s.log 2>&1
    echo "prefill check ($s) rc=$? $(el)"
    grep -E "gdn_prefill_check:|FAIL|WRONG" $R/prefill-check-$s.log | head -4 | cut -c1-200
done
for s in pf2 st2 both; do
    mkdir -p $R/ab-$s
    OUT=$R/ab-$s timeout 45 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/new.ktdb --ab $W/$s.ktdb --profile \
        --rounds 5 --rows 1x16384/8 > $R/prefill-$s.log 2>&1; echo "prefill new vs $s rc=$? $(el)"
    grep -v "^  " $R/prefill-$s.log | cut -c1-200; grep -E "_pair|st[12] " $R/prefill-$s.log | cut -c1-150
done
python3 $K $W/c35.ktdb $W/bv128.ktdb gdn_decode BV=128
OUT=$R timeout 50 python3 tests/device/bench_gdn.py --lib $L --db $W/c35.ktdb --ab $W/bv128.ktdb --rounds 5 \
    --hv 8,32 --batch 1 --tokens 1 --regime hot > $R/bench.log 2>&1; echo "decode bench rc=$? $(el)"
grep -v "kernel " $R/bench.log | cut -c1-200
gzip -9 $R/*.txt 2>/dev/null
call_end h1

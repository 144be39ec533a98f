#!/bin/sh
# Fourteenth session, device call 6 (bench/NOTES.md, "The softmax's max and P's rounding"): A/B at
# fixed picks (call 2's selections, HEAD's code as base) of decode.hip's softmax taking its maxima
# in one instruction and rounding P two at a time (n4), one libktrt, ab_attn.py; then n4's check
# grids (bf16 and fp8, masks, soft-cap, sinks, windows, graphs replayed).
set -u
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
R=$OUT/c6; mkdir -p $R
export PYTHONUNBUFFERED=1
for x in base n4; do gunzip -kf out/ab/$x.ktdb.gz; done
L=out/lib/libktrt.so
AB="timeout 170 python3 tests/device/ab_attn.py --config base=$L:out/ab/base.ktdb --config n4=$L:out/ab/n4.ktdb --rounds 12"
$AB --dtype bf16_e4m3,bf16 --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 > $R/ab-16-2-256.log 2>&1; echo "ab 16/2/256 rc=$? $(el) s"
$AB --dtype bf16_e4m3,bf16 --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768 > $R/ab-32-8-128.log 2>&1; echo "ab 32/8/128 rc=$? $(el) s"
$AB --d 256 --g 6 --hkv 1 --batch 1,8 --ctx 32768 > $R/ab-6-1-256.log 2>&1; echo "ab 6/1/256 rc=$? $(el) s"
$AB --d 256 --g 2 --hkv 4 --batch 8 --ctx 32768 --no-peers > $R/ab-8-4-256.log 2>&1; echo "ab 8/4/256 rc=$? $(el) s"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/ab-*.log
C="python3 tests/device/bench_attn.py --lib $L --db out/ab/n4.ktdb --check-only"
timeout 60 $C --dtype bf16,bf16_e4m3 --d 128 --g 4 --hkv 2 --q 1 --batch 1,5,40 --ctx 100,1500 --window 0,40,64 --softcap 0,30 --sinks 0,1 > $R/check1.log 2>&1; echo "check1 rc=$? $(el) s"
timeout 60 $C --bs 64 --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1 --batch 1,4,9,33 --ctx 3000,40000 --window 0,1000 --sinks 0,1 > $R/check2.log 2>&1; echo "check2 rc=$? $(el) s"
timeout 60 $C --replay-lengths --dtype bf16,bf16_e4m3 --d 256 --g 6 --hkv 1 --q 1 --batch 1,3,24,96 --ctx 40000 --lens mixed --sinks 0,1 > $R/check3.log 2>&1; echo "check3 rc=$? $(el) s"
tail -qn 1 $R/check*.log
grep -h "WRONG" $R/check*.log | head
tar czf $OUT/c6.tgz -C $OUT c6 && rm -rf $R
echo "done $(el) s"

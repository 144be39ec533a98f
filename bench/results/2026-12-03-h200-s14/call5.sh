#!/bin/sh
# Fourteenth session, device call 5 (bench/NOTES.md, "A word's two e4m3 pairs without a shift"):
# A/B at fixed picks (call 2's selections) of HEAD's fp8 kernels (base) against the conversion that
# takes a word's upper pair where it lies (n1), one libktrt, ab_attn.py; then n1's fp8 check grids.
set -u
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
R=$OUT/c5; mkdir -p $R
export PYTHONUNBUFFERED=1
for x in base n1; do gunzip -kf out/ab/$x.ktdb.gz; done
L=out/lib/libktrt.so
AB="timeout 170 python3 tests/device/ab_attn.py --config base=$L:out/ab/base.ktdb --config n1=$L:out/ab/n1.ktdb --rounds 12"
$AB --dtype bf16_e4m3,bf16 --d 256 --g 8 --hkv 2 --batch 8,32 --ctx 32768 > $R/ab-16-2-256.log 2>&1; echo "ab 16/2/256 rc=$? $(el) s"
$AB --dtype bf16_e4m3 --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768 > $R/ab-32-8-128.log 2>&1; echo "ab 32/8/128 rc=$? $(el) s"
$AB --dtype bf16_e4m3 --d 256 --g 8 --hkv 2 --batch 1,8 --ctx 32768 --lens mixed --no-peers > $R/ab-mixed.log 2>&1; echo "ab mixed rc=$? $(el) s"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/ab-*.log
C="python3 tests/device/bench_attn.py --lib $L --db out/ab/n1.ktdb --check-only"
timeout 60 $C --bs 64 --dtype bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1 --batch 1,4,9,33 --ctx 3000,40000 --window 0,1000 --sinks 0,1 > $R/check1.log 2>&1; echo "check1 rc=$? $(el) s"
timeout 60 $C --replay-lengths --dtype bf16_e4m3 --d 128 --g 4 --hkv 8 --q 1 --batch 1,2,8,32 --ctx 1000,131072 --lens mixed --softcap 0,30 > $R/check2.log 2>&1; echo "check2 rc=$? $(el) s"
tail -qn 1 $R/check*.log
grep -h "WRONG" $R/check*.log | head
tar czf $OUT/c5.tgz -C $OUT c5 && rm -rf $R
echo "done $(el) s"

#!/bin/sh
# Fifteenth session, device call 7 (bench/NOTES.md, "V's fp8 bytes read raw too"):
# A/B at call 4's picks of the fp8 register form with KR and V raw (new2) against KR alone (new), one
# libktrt, ab_attn.py (one process, cuDNN beside, 12 rounds rotated, cache flushed); then the check
# grids on a database whose fp8 decode kernels are new2's register form alone.
set -u
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
R=$OUT/c7; mkdir -p $R
export PYTHONUNBUFFERED=1
for x in new new2 chk2; do xz -dkf out/ab/$x.ktdb.xz; done
L=out/lib/libktrt.so
AB="timeout 150 python3 tests/device/ab_attn.py --config new=$L:out/ab/new.ktdb --config new2=$L:out/ab/new2.ktdb --rounds 12"
$AB --dtype bf16_e4m3,bf16 --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 > $R/ab-16-2-256.log 2>&1; echo "ab 16/2/256 rc=$? $(el) s"
$AB --dtype bf16_e4m3,bf16 --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768 > $R/ab-32-8-128.log 2>&1; echo "ab 32/8/128 rc=$? $(el) s"
$AB --dtype bf16_e4m3 --d 256 --g 8 --hkv 2 --batch 32 --ctx 32768 --no-peers > $R/ab-b32.log 2>&1; echo "ab b32 rc=$? $(el) s"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/ab-*.log
C="python3 tests/device/bench_attn.py --lib $L --db out/ab/chk2.ktdb --check-only"
timeout 60 $C --dtype bf16_e4m3 --d 128 --g 4 --hkv 2 --q 1,3 --batch 1,5,40 --ctx 100,1500 --window 0,40,64 --softcap 0,30 --sinks 0,1 > $R/check1.log 2>&1; echo "check1 rc=$? $(el) s"
timeout 60 $C --bs 64 --dtype bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4 --batch 1,4,33 --ctx 3000,40000 --window 0,1000 --sinks 0,1 > $R/check2.log 2>&1; echo "check2 rc=$? $(el) s"
timeout 60 $C --replay-lengths --dtype bf16_e4m3 --d 256 --g 6 --hkv 1 --q 1 --batch 1,3,24,96 --ctx 40000 --lens mixed --sinks 0,1 > $R/check3.log 2>&1; echo "check3 rc=$? $(el) s"
timeout 60 $C --replay-lengths --dtype bf16_e4m3 --d 128 --g 4 --hkv 8 --q 1 --batch 1,2,8,32 --ctx 1000,131072 --lens mixed > $R/check4.log 2>&1; echo "check4 rc=$? $(el) s"
tail -qn 1 $R/check*.log
grep -h "WRONG" $R/check*.log | head
tar czf $OUT/c7.tgz -C $OUT c7 && rm -rf $R
echo "done $(el) s"

#!/bin/sh
# Fifteenth session, device call 6 (bench/NOTES.md, "K's fp8 bytes read raw into S's fragments"):
# A/B at call 4's picks of the fp8 register form with KR (new) against the landed code (base), one
# libktrt, ab_attn.py (one process, cuDNN beside, 12 rounds rotated, cache flushed); then KR's
# check grids on a database whose fp8 decode kernels are KR's register form alone.
set -u
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
R=$OUT/c6; mkdir -p $R
export PYTHONUNBUFFERED=1
for x in base new chk; do xz -dkf out/ab/$x.ktdb.xz; done
L=out/lib/libktrt.so
AB="timeout 150 python3 tests/device/ab_attn.py --config base=$L:out/ab/base.ktdb --config new=$L:out/ab/new.ktdb --rounds 12"
$AB --dtype bf16_e4m3,bf16 --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 > $R/ab-16-2-256.log 2>&1; echo "ab 16/2/256 rc=$? $(el) s"
$AB --dtype bf16_e4m3,bf16 --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768 > $R/ab-32-8-128.log 2>&1; echo "ab 32/8/128 rc=$? $(el) s"
$AB --dtype bf16_e4m3 --d 256 --g 8 --hkv 2 --batch 32 --ctx 32768 --no-peers > $R/ab-b32.log 2>&1; echo "ab b32 rc=$? $(el) s"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/ab-*.log
C="python3 tests/device/bench_attn.py --lib $L --db out/ab/chk.ktdb --check-only"
timeout 60 $C --dtype bf16_e4m3 --d 128 --g 4 --hkv 2 --q 1,3 --batch 1,5,40 --ctx 100,1500 --window 0,40,64 --softcap 0,30 --sinks 0,1 > $R/check1.log 2>&1; echo "check1 rc=$? $(el) s"
timeout 60 $C --bs 64 --dtype bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4 --batch 1,4,33 --ctx 3000,40000 --window 0,1000 --sinks 0,1 > $R/check2.log 2>&1; echo "check2 rc=$? $(el) s"
timeout 60 $C --replay-lengths --dtype bf16_e4m3 --d 256 --g 6 --hkv 1 --q 1 --batch 1,3,24,96 --ctx 40000 --lens mixed --sinks 0,1 > $R/check3.log 2>&1; echo "check3 rc=$? $(el) s"
timeout 60 $C --replay-lengths --dtype bf16_e4m3 --d 128 --g 4 --hkv 8 --q 1 --batch 1,2,8,32 --ctx 1000,131072 --lens mixed > $R/check4.log 2>&1; echo "check4 rc=$? $(el) s"
tail -qn 1 $R/check*.log
grep -h "WRONG" $R/check*.log | head
tar czf $OUT/c6.tgz -C $OUT c6 && rm -rf $R
echo "done $(el) s"

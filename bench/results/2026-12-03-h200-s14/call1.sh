#!/bin/sh
# Fourteenth session, device call 1 (bench/NOTES.md, "Two levers the sweeps never had"): A/B at
# fixed picks of base (HEAD's code, OB 0), ob (picks whose OB build holds more warps an SM) and
# fp8w (fp8's register form at 64 / 128 keys), one libktrt, ab_attn.py (one process, cuDNN beside,
# 12 rounds rotated, cache flushed); then the ob and fp8w databases' correctness grids.
set -u
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
R=$OUT/c1; mkdir -p $R
export PYTHONUNBUFFERED=1
for x in base ob fp8w; do gunzip -kf out/ab/$x.ktdb.gz; done
L=out/lib/libktrt.so
AB="timeout 170 python3 tests/device/ab_attn.py --config base=$L:out/ab/base.ktdb --config ob=$L:out/ab/ob.ktdb --config fp8w=$L:out/ab/fp8w.ktdb --rounds 12"
$AB --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --batch 8,32 --ctx 32768 > $R/ab-16-2-256.log 2>&1; echo "ab 16/2/256 rc=$? $(el) s"
$AB --d 256 --g 6 --hkv 1 --batch 8 --ctx 32768,131072 > $R/ab-6-1-256.log 2>&1; echo "ab 6/1/256 rc=$? $(el) s"
$AB --d 256 --g 2 --hkv 4 --batch 8 --ctx 32768 > $R/ab-8-4-256.log 2>&1; echo "ab 8/4/256 rc=$? $(el) s"
$AB --dtype bf16,bf16_e4m3 --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768 > $R/ab-32-8-128.log 2>&1; echo "ab 32/8/128 rc=$? $(el) s"
$AB --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 --lens mixed --no-peers > $R/ab-mixed.log 2>&1; echo "ab mixed rc=$? $(el) s"
$AB --dtype bf16_e4m3 --d 256 --g 8 --hkv 2 --q 4,8 --batch 8 --ctx 32768 --no-peers > $R/ab-q.log 2>&1; echo "ab q rc=$? $(el) s"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/ab-*.log
for x in ob fp8w; do
C="python3 tests/device/bench_attn.py --lib $L --db out/ab/$x.ktdb --check-only"
timeout 60 $C --dtype bf16,bf16_e4m3 --d 128 --g 4 --hkv 2 --q 1,3 --batch 1,5,40 --ctx 100,1500 --window 0,40,64 --softcap 0,30 --sinks 0,1 > $R/check1-$x.log 2>&1; echo "check1 $x rc=$? $(el) s"
timeout 60 $C --bs 64 --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 1,4,9,33 --ctx 3000,40000 --window 0,1000 --sinks 0,1 > $R/check2-$x.log 2>&1; echo "check2 $x rc=$? $(el) s"
timeout 60 $C --replay-lengths --dtype bf16,bf16_e4m3 --d 256 --g 6 --hkv 1 --q 1,4 --batch 1,3,24,96 --ctx 40000 --lens mixed --sinks 0,1 > $R/check3-$x.log 2>&1; echo "check3 $x rc=$? $(el) s"
timeout 60 $C --replay-lengths --dtype bf16,bf16_e4m3 --d 128 --g 4 --hkv 8 --q 1 --batch 1,2,8,32 --ctx 1000,131072 --lens mixed > $R/check4-$x.log 2>&1; echo "check4 $x rc=$? $(el) s"
done
tail -qn 1 $R/check*.log
grep -h "WRONG" $R/check*.log | head
tar czf $OUT/c1.tgz -C $OUT c1 && rm -rf $R
echo "done $(el) s"

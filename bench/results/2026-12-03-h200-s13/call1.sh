#!/bin/sh
# Thirteenth session, device call 1 (bench/NOTES.md, "The merge in the launch"): A/B at fixed picks
# of the split launch merging its own segments (MG 1) against the reduce kernel (MG 0, the same new
# code) and the landed kernels (old: HEAD's code), one libktrt (the new one: it runs MG 0 kernels
# and HEAD's with the reduce kernel), ab_attn.py (one process, cuDNN beside, 12 rounds rotated,
# cache flushed); then the MG 1 database's correctness grids through libktrt.
set -u
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
R=$OUT/c1; mkdir -p $R
export PYTHONUNBUFFERED=1
for x in old mg0 mg1; do gunzip -kf out/ab/$x-t.ktdb.gz; done
L=out/lib/libktrt.so
AB="timeout 150 python3 tests/device/ab_attn.py --config old=$L:out/ab/old-t.ktdb --config mg0=$L:out/ab/mg0-t.ktdb --config mg1=$L:out/ab/mg1-t.ktdb --rounds 12"
$AB --d 256 --g 6 --hkv 1 --batch 1 --ctx 4096,32768,131072 > $R/ab-b1.log 2>&1; echo "ab b1 rc=$? $(el) s"
$AB --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 8 --ctx 32768 > $R/ab-16-2-256.log 2>&1; echo "ab 16/2/256 rc=$? $(el) s"
$AB --d 256 --g 6 --hkv 1 --batch 8 --ctx 32768 > $R/ab-6-1-256.log 2>&1; echo "ab 6/1/256 rc=$? $(el) s"
$AB --d 256 --g 2 --hkv 4 --batch 8 --ctx 32768 > $R/ab-8-4-256.log 2>&1; echo "ab 8/4/256 rc=$? $(el) s"
$AB --dtype bf16,bf16_e4m3 --d 128 --g 4 --hkv 8 --batch 8,32 --ctx 32768 > $R/ab-32-8-128.log 2>&1; echo "ab 32/8/128 rc=$? $(el) s"
$AB --d 256 --g 8 --hkv 2 --batch 8,32 --ctx 32768 --lens mixed --no-peers > $R/ab-mixed.log 2>&1; echo "ab mixed rc=$? $(el) s"
$AB --d 256 --g 8 --hkv 2 --batch 8 --ctx 4096,131072 --window 4096 --no-peers > $R/ab-window.log 2>&1; echo "ab window rc=$? $(el) s"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/ab-*.log
C="python3 tests/device/bench_attn.py --lib $L --db out/ab/mg1-t.ktdb --check-only"
timeout 60 $C --dtype bf16,bf16_e4m3 --d 128 --g 4 --hkv 2 --q 1,3 --batch 1,5,40 --ctx 100,1500 --window 0,40,64 --softcap 0,30 --sinks 0,1 > $R/check1.log 2>&1; echo "check1 rc=$? $(el) s"
timeout 60 $C --bs 64 --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 1,4,9,33 --ctx 3000,40000 --window 0,1000 --sinks 0,1 > $R/check2.log 2>&1; echo "check2 rc=$? $(el) s"
timeout 60 $C --replay-lengths --dtype bf16,bf16_e4m3 --d 256 --g 6 --hkv 1 --q 1,4 --batch 1,3,24,96 --ctx 40000 --lens mixed --sinks 0,1 > $R/check3.log 2>&1; echo "check3 rc=$? $(el) s"
timeout 60 $C --replay-lengths --dtype bf16 --d 128 --g 4 --hkv 8 --q 1 --batch 1,2,8,32 --ctx 1000,131072 --lens mixed > $R/check4.log 2>&1; echo "check4 rc=$? $(el) s"
tail -qn 1 $R/check*.log
grep -h "WRONG" $R/check*.log | head
tar czf $OUT/c1.tgz -C $OUT c1 && rm -rf $R
echo "done $(el) s"

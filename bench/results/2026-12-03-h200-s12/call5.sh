#!/bin/sh
# Twelfth session, device call 5: A/B of kt_store_rows' fp8 halves addressed as 16-byte elements
# (NVVM had split the first chunk's two 16-byte LDS stores into eight of 4 bytes), the same kernels
# and picks (call 4's database: old code; the same with the e4m3 kernels rebuilt: new), ab_attn.py
# in one process with cuDNN beside; then the fp8 correctness grids through libktrt.
set -u
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
R=$OUT/c5; mkdir -p $R
export PYTHONUNBUFFERED=1
for x in old newcode; do [ -f out/ab/$x.ktdb ] || gunzip -k out/ab/$x.ktdb.gz; done
python3 bench/results/2026-12-03-h200-s12/swap_code.py out/ab/old.ktdb out/ab/newcode.ktdb out/ab/new.ktdb
L=out/lib/libktrt.so
AB="timeout 150 python3 tests/device/ab_attn.py --config old=$L:out/ab/old.ktdb --config new=$L:out/ab/new.ktdb --rounds 12"
$AB --dtype bf16_e4m3,bf16 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 8 --ctx 32768 > $R/ab-16-2-256.log 2>&1; echo "ab 16/2/256 rc=$? $(el) s"
$AB --dtype bf16_e4m3 --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768 > $R/ab-32-8-128.log 2>&1; echo "ab 32/8/128 rc=$? $(el) s"
$AB --dtype bf16_e4m3 --d 256 --g 8 --hkv 2 --batch 1 --ctx 32768 --no-peers > $R/ab-b1.log 2>&1; echo "ab b1 rc=$? $(el) s"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/ab-*.log
C="python3 tests/device/bench_attn.py --lib $L --db out/ab/new.ktdb --check-only"
timeout 60 $C --dtype bf16_e4m3 --d 128 --g 4 --hkv 2 --q 1,3 --batch 1,5,40 --ctx 100,1500 --window 0,40,64 --softcap 0,30 --sinks 0,1 > $R/check1.log 2>&1; echo "check1 rc=$? $(el) s"
timeout 60 $C --bs 64 --dtype bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 1,4,9,33 --ctx 3000,40000 --window 0,1000 --sinks 0,1 > $R/check2.log 2>&1; echo "check2 rc=$? $(el) s"
timeout 60 $C --replay-lengths --dtype bf16_e4m3 --d 256 --g 6 --hkv 1 --q 1,4 --batch 1,3,24,96 --ctx 40000 --lens mixed --sinks 0,1 > $R/check3.log 2>&1; echo "check3 rc=$? $(el) s"
timeout 50 python3 tests/device/bench_prefill.py --lib $L --db out/ab/new.ktdb --check-only --dtype bf16_e4m3 --geom 16/2/256,6/1/256 --tokens 16,200 --prefix 0,32752 > $R/check4.log 2>&1; echo "check4 rc=$? $(el) s"
tail -qn 1 $R/check*.log
grep -h "WRONG" $R/check*.log | head
tar czf $OUT/c5.tgz -C $OUT c5 && rm -rf $R
echo "done $(el) s"

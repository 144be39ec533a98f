#!/bin/sh
# Sixteenth session, device call 1 (bench/NOTES.md, "P V deferred a tile (DF)"): prefill.hip's eager
# form against DF, one libktrt. Prefill: bench_prefill.py on pe (the landed picks: d256 BM128 BN64
# NW8 DF 0, d128 BM128 BN64 NW4 ST2) with --ab d64 (d256 / d128 BM128 BN64 NW8 DF 1), d32 (BM128
# BN32 NW8 DF 1), q32 (BM64 NW4 DF 1: d256 BN32, d128 BN64) in the same rounds, flash and cuDNN
# beside. q 8 decode at 16/2/256 batch 8 32K: ab_attn.py, e (BM64 BN64 NW4 DF 0, q 8's pick) against
# DF 1 at BN64 and BN32, each database also holding q 1's pick (KD BN16 NW4 OB4), rows q 1 and 8.
# Then the check grids on chk (every prefill kernel DF 1: bf16 and bf16_e4m3, d128 and d256).
set -u
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
R=$OUT/c1; mkdir -p $R
export PYTHONUNBUFFERED=1
A=out/ab1
L=out/lib/libktrt.so
P="timeout 200 python3 tests/device/bench_prefill.py --lib $L --rounds 7 --db $A/pe.ktdb --ab d64=$A/pd64.ktdb --ab d32=$A/pd32.ktdb --ab q32=$A/pdq.ktdb"
OUT=$R $P --tsv pf.tsv --geom 6/1/256,16/2/256,8/4/256,32/8/128 --tokens 32768,4096 > $R/pf.log 2>&1; echo "prefill A/B rc=$? $(el) s"
grep -hE "^bf16 |^   (ours|d64|d32|q32|cudnn|flash)" $R/pf.log | cut -c1-130
AB="timeout 100 python3 tests/device/ab_attn.py --config e=$L:$A/qe.ktdb --config d64=$L:$A/qd64.ktdb --config d32=$L:$A/qd32.ktdb --rounds 12"
$AB --dtype bf16 --d 256 --g 8 --hkv 2 --q 8,1 --batch 8 --ctx 32768 > $R/ab-q8.log 2>&1; echo "ab q8 rc=$? $(el) s"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/ab-q8.log
C="python3 tests/device/bench_prefill.py --lib $L --check-only --db $A/chk.ktdb"
timeout 70 $C --dtype bf16,bf16_e4m3 --geom 16/2/256,32/8/128,6/1/256 --tokens 16,200,3000 --prefix 0,32752 > $R/check1.log 2>&1; echo "check1 rc=$? $(el) s"
timeout 50 $C --dtype bf16 --geom 16/2/256,8/4/256 --tokens 200,3000 --prefix 0,5000 --window 1000 --bs 64 > $R/check2.log 2>&1; echo "check2 rc=$? $(el) s"
CA="python3 tests/device/bench_attn.py --lib $L --db $A/chk.ktdb --check-only"
timeout 60 $CA --replay-lengths --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 4,8 --batch 1,3,9 --ctx 40000 --lens mixed --sinks 0,1 > $R/check3.log 2>&1; echo "check3 rc=$? $(el) s"
timeout 50 $CA --bs 64 --dtype bf16 --d 128 --g 4 --hkv 2 --q 2,8 --batch 1,5 --ctx 3000 --lens mixed --window 0,1000 --softcap 0,30 > $R/check4.log 2>&1; echo "check4 rc=$? $(el) s"
tail -qn 1 $R/check*.log
grep -h "WRONG\|refused\|failed" $R/check*.log | head
tar czf $OUT/c1.tgz -C $OUT c1 && rm -rf $R
echo "done $(el) s"

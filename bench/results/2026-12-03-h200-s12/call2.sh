#!/bin/sh
# Twelfth session, device call 2 (bench/NOTES.md, "The divisions, and the block table's first line"):
# A/B of the same kernels and picks, old code (as landed) against new (kt_gdiv: r / g as a
# multiply-high; kt_warm_table: the first table line prefetched beside seq_lens; the reduce's row
# split in 32 bits): ab_attn.py (one process, the same buffers, cuDNN beside, 12 rounds rotated,
# cache flushed), then prefill old / new in two rotated passes (bench_prefill.py, flash and cuDNN
# in each run), then the new code's correctness grids through libktrt.
set -u
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
R=$OUT/c2; mkdir -p $R
export PYTHONUNBUFFERED=1
for x in old new; do [ -f out/ab/$x.ktdb ] || gunzip -k out/ab/$x.ktdb.gz; done
L=out/lib/libktrt.so
AB="timeout 120 python3 tests/device/ab_attn.py --config old=$L:out/ab/old.ktdb --config new=$L:out/ab/new.ktdb --rounds 12"
$AB --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 8 --ctx 32768 > $R/ab-16-2-256.log 2>&1; echo "ab 16/2/256 rc=$? $(el) s"
$AB --d 256 --g 6 --hkv 1 --batch 1 --ctx 4096,32768,131072 > $R/ab-b1.log 2>&1; echo "ab b1 rc=$? $(el) s"
$AB --d 256 --g 6 --hkv 1 --batch 8 --ctx 32768 > $R/ab-6-1-256.log 2>&1; echo "ab 6/1/256 rc=$? $(el) s"
$AB --d 256 --g 2 --hkv 4 --batch 8 --ctx 32768 > $R/ab-8-4-256.log 2>&1; echo "ab 8/4/256 rc=$? $(el) s"
$AB --d 128 --g 4 --hkv 8 --batch 8,32 --ctx 32768 > $R/ab-32-8-128.log 2>&1; echo "ab 32/8/128 rc=$? $(el) s"
$AB --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 --lens mixed --no-peers > $R/ab-mixed.log 2>&1; echo "ab mixed rc=$? $(el) s"
$AB --d 256 --g 8 --hkv 2 --batch 8 --ctx 4096,131072 --window 4096 --no-peers > $R/ab-window.log 2>&1; echo "ab window rc=$? $(el) s"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/ab-*.log
BP="timeout 100 python3 tests/device/bench_prefill.py --lib $L --rounds 5"
for pass in 1 2; do
  order="old new"; [ $pass = 2 ] && order="new old"
  for x in $order; do
    OUT=$R $BP --db out/ab/$x.ktdb --tsv pf4k-$x-$pass.tsv --geom 32/8/128,6/1/256,8/4/256,16/2/256 --tokens 4096 > $R/pf4k-$x-$pass.log 2>&1; echo "prefill 4K $x $pass rc=$? $(el) s"
    OUT=$R $BP --db out/ab/$x.ktdb --tsv pf32k-$x-$pass.tsv --geom 6/1/256,16/2/256 --tokens 32768 > $R/pf32k-$x-$pass.log 2>&1; echo "prefill 32K $x $pass rc=$? $(el) s"
  done
done
grep -h "^bf16 " $R/pf*-*-*.log | cut -c1-130
C="python3 tests/device/bench_attn.py --lib $L --db out/ab/new.ktdb --check-only"
timeout 60 $C --dtype bf16,bf16_e4m3 --d 128 --g 4 --hkv 2 --q 1,3 --batch 1,5,40 --ctx 100,1500 --window 0,40,64 --softcap 0,30 --sinks 0,1 > $R/check1.log 2>&1; echo "check1 rc=$? $(el) s"
timeout 60 $C --bs 64 --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 1,4,9,33 --ctx 3000,40000 --window 0,1000 --sinks 0,1 > $R/check2.log 2>&1; echo "check2 rc=$? $(el) s"
timeout 60 $C --replay-lengths --dtype bf16,bf16_e4m3 --d 256 --g 6 --hkv 1 --q 1,4 --batch 1,3,24,96 --ctx 40000 --lens mixed --sinks 0,1 > $R/check3.log 2>&1; echo "check3 rc=$? $(el) s"
timeout 60 python3 tests/device/bench_prefill.py --lib $L --db out/ab/new.ktdb --check-only --dtype bf16,bf16_e4m3 --geom 16/2/256,32/8/128,6/1/256 --tokens 16,200,3000 --prefix 0,32752 --window 0 > $R/check4.log 2>&1; echo "check4 rc=$? $(el) s"
tail -qn 1 $R/check*.log
grep -h "WRONG" $R/check*.log | head
tar czf $OUT/c2.tgz -C $OUT c2 && rm -rf $R
echo "done $(el) s"

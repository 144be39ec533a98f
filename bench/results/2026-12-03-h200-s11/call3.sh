#!/bin/sh
# Eleventh session, device call 3: A/B of the split-KV partials, the same kernels (call 2's tuned
# picks, selections unchanged), two interleaved passes in rotated order, lens equal, cold:
#   old: fp32 O accumulators (as landed before this change; its libktrt in out/ab/oldlib)
#   new: O rows normalized by their segment's l in the output's type (attn/partials.h; out/lib)
# then the new form's correctness through libktrt: windows, soft-cap, sinks, q 1-8, bs 64, graphs
# replayed with new lengths, chunked prefill over a 32K prefix (split).
set -u
R=$OUT/ab; mkdir -p $R
t0=$(date +%s)
for x in old new; do [ -f out/ab/$x.ktdb ] || gunzip -k out/ab/$x.ktdb.gz; done
export PYTHONUNBUFFERED=1
B="python3 tests/device/bench_attn.py --lens equal --rounds 11"
lib() { [ "$1" = new ] && echo out/lib/libktrt.so || echo out/ab/oldlib/libktrt.so; }
for pass in 1 2; do
  order="old new"; [ $pass = 2 ] && order="new old"
  for x in $order; do
    L=$(lib $x)
    OUT=$R $B --lib $L --db out/ab/$x.ktdb --tsv b256-$x-$pass.tsv --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 8 --ctx 32768 > $R/b256-$x-$pass.log 2>&1
    OUT=$R $B --lib $L --db out/ab/$x.ktdb --tsv b6-$x-$pass.tsv --dtype bf16 --d 256 --g 6 --hkv 1 --q 1 --batch 1 --ctx 4096,32768 > $R/b6-$x-$pass.log 2>&1
    OUT=$R $B --lib $L --db out/ab/$x.ktdb --tsv b128-$x-$pass.tsv --dtype bf16 --d 128 --g 4 --hkv 8 --q 1 --batch 8 --ctx 32768 > $R/b128-$x-$pass.log 2>&1
    echo "bench $x pass $pass $(( $(date +%s) - t0 )) s"
  done
done
L=out/lib/libktrt.so
C="python3 tests/device/bench_attn.py --lib $L --db out/ab/new.ktdb --check-only"
timeout 60 $C --dtype bf16,bf16_e4m3 --d 128 --g 4 --hkv 2 --q 1,3 --batch 1,5,40 --ctx 100,1500 --window 0,40,64 --softcap 0,30 --sinks 0,1 > $R/check1.log 2>&1; echo "check1 rc=$? $(( $(date +%s) - t0 )) s"
timeout 60 $C --bs 64 --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 1,4,9,33 --ctx 3000,40000 --window 0,1000 > $R/check2.log 2>&1; echo "check2 rc=$? $(( $(date +%s) - t0 )) s"
timeout 60 $C --replay-lengths --dtype bf16,bf16_e4m3 --d 256 --g 6 --hkv 1 --q 1,4 --batch 1,3,24,96 --ctx 40000 --lens mixed > $R/check3.log 2>&1; echo "check3 rc=$? $(( $(date +%s) - t0 )) s"
timeout 50 python3 tests/device/bench_prefill.py --lib $L --db out/ab/new.ktdb --check-only --dtype bf16,bf16_e4m3 --geom 16/2/256,32/8/128,6/1/256 --tokens 16,200 --prefix 32752 > $R/check4.log 2>&1; echo "check4 rc=$? $(( $(date +%s) - t0 )) s"
tail -n 1 $R/check*.log
grep -h "|" $R/b*-*-*.log | grep -E "^(bf16|fp16)" | cut -c1-120
tar czf $OUT/ab.tgz -C $OUT ab && rm -rf $R
echo "done $(( $(date +%s) - t0 )) s"

#!/bin/sh
# Eleventh session, device call 5: A/B of the fragment reads one step ahead of their products
# (prefill.hip: S's K fragments and P V's V fragments; decode.hip: P V's V fragments), the same
# kernels at call 2's tuned picks, two interleaved passes in rotated order: the prefill grid against
# flash and cuDNN; decode at 16/2/256 batch 8 32K q 1 / 8 (q 8 is prefill.hip's kernel), 6/1/256
# batch 1, and 32/8/128 batch 8 (decode_ws.hip, unchanged: the control); then the new forms'
# correctness through libktrt.
set -u
R=$OUT/ab; mkdir -p $R
t0=$(date +%s)
for x in old new; do [ -f out/ab/$x.ktdb ] || gunzip -k out/ab/$x.ktdb.gz; done
export PYTHONUNBUFFERED=1
for pass in 1 2; do
  order="old new"; [ $pass = 2 ] && order="new old"
  for x in $order; do
    OUT=$R timeout 60 python3 tests/device/bench_prefill.py --db out/ab/$x.ktdb --rounds 5 --tsv p-$x-$pass.tsv > $R/p-$x-$pass.log 2>&1
    OUT=$R timeout 40 python3 tests/device/bench_attn.py --db out/ab/$x.ktdb --lens equal --no-peers --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,8 --batch 8 --ctx 32768 --tsv d-$x-$pass.tsv > $R/d-$x-$pass.log 2>&1
    OUT=$R timeout 30 python3 tests/device/bench_attn.py --db out/ab/$x.ktdb --lens equal --no-peers --dtype bf16 --d 256 --g 6 --hkv 1 --q 1 --batch 1 --ctx 4096,32768 --tsv b-$x-$pass.tsv > $R/b-$x-$pass.log 2>&1
    OUT=$R timeout 30 python3 tests/device/bench_attn.py --db out/ab/$x.ktdb --lens equal --no-peers --dtype bf16 --d 128 --g 4 --hkv 8 --q 1 --batch 8 --ctx 32768 --tsv c-$x-$pass.tsv > $R/c-$x-$pass.log 2>&1
    echo "bench $x pass $pass $(( $(date +%s) - t0 )) s"
  done
done
C="python3 tests/device/bench_attn.py --db out/ab/new.ktdb --check-only"
timeout 60 $C --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 4,8 --batch 3,8 --ctx 5000,30000 --lens mixed > $R/check1.log 2>&1; echo "check1 rc=$? $(( $(date +%s) - t0 )) s"
timeout 40 $C --bs 64 --dtype bf16,bf16_e4m3 --d 128,256 --g 4,8 --hkv 1 --q 8 --batch 5 --ctx 3000 --window 0,1000 --softcap 0,30 --sinks 0,1 > $R/check2.log 2>&1; echo "check2 rc=$? $(( $(date +%s) - t0 )) s"
timeout 40 $C --replay-lengths --dtype bf16,bf16_e4m3 --d 256 --g 6 --hkv 1 --q 1,4 --batch 1,3,24,96 --ctx 40000 --lens mixed > $R/check4.log 2>&1; echo "check4 rc=$? $(( $(date +%s) - t0 )) s"
timeout 50 python3 tests/device/bench_prefill.py --db out/ab/new.ktdb --check-only --dtype bf16,bf16_e4m3 --geom 16/2/256,32/8/128,6/1/256,8/4/256 --tokens 16,200,1000 --prefix 0,32752 > $R/check3.log 2>&1; echo "check3 rc=$? $(( $(date +%s) - t0 )) s"
tail -n 1 $R/check*.log
for f in $R/p-*.log $R/d-*.log $R/b-*.log $R/c-*.log; do echo "== $f"; grep "|" $f | grep -E "^(bf16)" | cut -c1-150; done
tar czf $OUT/ab.tgz -C $OUT ab && rm -rf $R
echo "done $(( $(date +%s) - t0 )) s"

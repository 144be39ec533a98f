#!/bin/sh
# Ninth session, device call 3: A/B/C on the H200 of the same 11 decode variants (out/ab/variants.txt),
# law picks, one run, interleaved by rounds:
#   base: the eighth session's decode.hip + this session's first reduce (all loads up front) -- as swept in call 1
#   old:  + the prologue reorder (Q loaded after the first K / V loads are issued)
#   new:  + the reduce sliced by the rows (attn/reduce.h; op_attn.c's slices; libktrt rebuilt)
# base and old run with the old libktrt (out/ab/oldlib), new with out/lib/libktrt.so.
set -u
R=$OUT/ab; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
t0=$(date +%s)
B="python3 tests/device/bench_attn.py --lens equal --rounds 11"
lib() { [ "$1" = new ] && echo out/lib/libktrt.so || echo out/ab/oldlib/libktrt.so; }
for pass in 1 2; do
for d in base old new; do
  L=$(lib $d)
  PYTHONUNBUFFERED=1 OUT=$R $B --lib $L --db out/ab/$d.ktdb --tsv b128-$d-$pass.tsv --dtype bf16,bf16_e4m3 --d 128 --g 4 --hkv 8 --q 1 --batch 8 --ctx 32768 > $R/bench128-$d-$pass.log 2>&1
  PYTHONUNBUFFERED=1 OUT=$R $B --lib $L --db out/ab/$d.ktdb --tsv b256-$d-$pass.tsv --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 8 --ctx 32768 > $R/bench256-$d-$pass.log 2>&1
  PYTHONUNBUFFERED=1 OUT=$R $B --lib $L --db out/ab/$d.ktdb --tsv b6-$d-$pass.tsv --dtype bf16 --d 256 --g 6 --hkv 1 --q 1 --batch 1 --ctx 4096,32768 > $R/bench6-$d-$pass.log 2>&1
  echo "bench $d pass $pass $(( $(date +%s) - t0 )) s" >> $R/times.txt
  [ $pass = 2 ] && [ $(( $(date +%s) - t0 )) -gt 330 ] && break
done
done
L=out/lib/libktrt.so
PYTHONUNBUFFERED=1 python3 tests/device/bench_attn.py --lib $L --db out/ab/new.ktdb --check-only --dtype bf16,bf16_e4m3 \
   --d 128 --g 4 --hkv 2 --q 1,3 --batch 1,5,40 --ctx 100,1500 --window 0,40,64 --softcap 0,30 --sinks 0,1 > $R/check1.log 2>&1
PYTHONUNBUFFERED=1 python3 tests/device/bench_attn.py --lib $L --db out/ab/new.ktdb --check-only --bs 64 --dtype bf16,bf16_e4m3 \
   --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 1,4,9,33 --ctx 3000,40000 --window 0,1000 > $R/check2.log 2>&1
PYTHONUNBUFFERED=1 python3 tests/device/bench_attn.py --lib $L --db out/ab/new.ktdb --check-only --replay-lengths --dtype bf16,bf16_e4m3 \
   --d 256 --g 6 --hkv 1 --q 1,4 --batch 1,3,24,96 --ctx 40000 --lens mixed > $R/check3.log 2>&1
echo "check $(( $(date +%s) - t0 )) s" >> $R/times.txt
tail -2 $R/check*.log
tar cJf $OUT/ab.tar.xz -C $OUT ab && rm -rf $R
cat $OUT/../times.txt 2>/dev/null; echo "done $(( $(date +%s) - t0 )) s"

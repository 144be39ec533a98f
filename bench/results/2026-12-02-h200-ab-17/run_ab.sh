#!/bin/sh
# A/B on the H200: the same 12 decode variants built from the old and the new kv.h addressing
set -u
ROOT=$(pwd)
export LD_LIBRARY_PATH="$ROOT/out/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$ROOT/out/device/bin:$PATH"
R=$OUT/ab; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $R/smi.txt 2>&1
t0=$(date +%s)
for d in old new; do
  ./tune --modelpath models/llama-3.1-8b --tp 1 --target sm_90a --db out/ab/$d.ktdb --no-build --only attn_decode \
     --shapes out/ab/shapes.json --budget-min ${AB_MIN:-2} > $R/sweep-$d.log 2>&1
  echo "sweep $d rc=$? $(( $(date +%s) - t0 )) s" >> $R/times.txt
done
B="python3 tests/device/bench_attn.py --lens equal --rounds 11"
for d in new old; do
  PYTHONUNBUFFERED=1 OUT=$R $B --db out/ab/$d.ktdb --tsv b128-$d.tsv --dtype bf16,bf16_e4m3 --d 128 --g 4 --hkv 8 --q 1 --batch 8,32 --ctx 32768 > $R/bench128-$d.log 2>&1
  PYTHONUNBUFFERED=1 OUT=$R $B --db out/ab/$d.ktdb --tsv b256-$d.tsv --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1,4 --batch 1,8 --ctx 32768 > $R/bench256-$d.log 2>&1
  PYTHONUNBUFFERED=1 OUT=$R $B --db out/ab/$d.ktdb --tsv b6-$d.tsv --dtype bf16 --d 256 --g 6 --hkv 1 --q 1 --batch 1 --ctx 32768,131072 > $R/bench6-$d.log 2>&1
  echo "bench $d $(( $(date +%s) - t0 )) s" >> $R/times.txt
done
PYTHONUNBUFFERED=1 python3 tests/device/bench_attn.py --db out/ab/new.ktdb --check-only --dtype bf16,bf16_e4m3 \
   --d 128 --g 4 --hkv 2 --q 1,3 --batch 1,5 --ctx 100,1500 --window 0,40,64 --softcap 0,30 --sinks 0,1 > $R/check1.log 2>&1
PYTHONUNBUFFERED=1 python3 tests/device/bench_attn.py --db out/ab/new.ktdb --check-only --bs 64 --dtype bf16,bf16_e4m3 \
   --d 128,256 --g 8 --hkv 2 --q 1,8 --batch 4,9 --ctx 3000,40000 --window 0,1000 > $R/check2.log 2>&1
PYTHONUNBUFFERED=1 python3 tests/device/bench_attn.py --db out/ab/new.ktdb --check-only --replay-lengths --dtype bf16,bf16_e4m3 \
   --d 256 --g 6 --hkv 1 --q 1,4 --batch 1,3,24 --ctx 40000 --lens mixed > $R/check3.log 2>&1
echo "check $(( $(date +%s) - t0 )) s" >> $R/times.txt
for d in old new; do
  python3 - out/ab/$d.ktdb $R/$d <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for name, code in c.execute("select name, code from kernel where name like '%bn32_nw4_segmax256_re1_kd0_st2' or name like '%d256_mt1_bn32_nw8_segmax128_re1_kd1_st1'"):
    open(sys.argv[2] + '-' + name + '.cubin', 'wb').write(code)
PY
done
for f in $R/*.cubin; do cuobjdump -sass $f > ${f%.cubin}.sass 2>&1 || nvdisasm $f > ${f%.cubin}.sass 2>&1; rm -f $f; done
cp out/ab/old.ktdb out/ab/new.ktdb $R/ 2>/dev/null
tar cJf $OUT/ab.tar.xz -C $OUT ab && rm -rf $R

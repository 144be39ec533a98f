#!/bin/sh
# Fifteenth session, device call 8: the fp8 rows on the tuned picks with KR and V raw as landed
# (call 7's new2 database: call 4's selections, the fp8 register form rebuilt), bf16 and fp8 in
# the same bench_attn run, lens equal, cold, cuDNN and flash beside.
set -u
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
R=$OUT/c8; mkdir -p $R
export PYTHONUNBUFFERED=1
xz -dkf out/ab/new2.ktdb.xz
B="timeout 60 python3 tests/device/bench_attn.py --db out/ab/new2.ktdb --lens equal --rounds 11"
OUT=$R $B --tsv g-16-2-256.tsv --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1 --batch 8,32 --ctx 32768 > $R/g-16-2-256.log 2>&1; echo "16/2/256 rc=$? $(el) s"
OUT=$R $B --tsv g-32-8-128.tsv --dtype bf16,bf16_e4m3 --d 128 --g 4 --hkv 8 --q 1 --batch 8 --ctx 32768 > $R/g-32-8-128.log 2>&1; echo "32/8/128 rc=$? $(el) s"
grep -h "|" $R/g-*.log | grep -E "^(bf16|fp16)" | cut -c1-150
tar czf $OUT/c8.tgz -C $OUT c8 && rm -rf $R
echo "done $(el) s"

#!/bin/sh
# Thirteenth session, device call 8 (the q 8 bar's next step, data only): ncu's warp states and
# scheduler statistics of q 8's law pick (prefill.hip's rows form, 16/2/256 batch 8 32K) and of
# q 1's tuned KD kernel, one launch each, call 5's database.
set -u
R=$OUT/c8; mkdir -p $R
[ -f out/ab/c5.ktdb ] || xz -dk out/ab/c5.ktdb.xz
NC="ncu --kernel-name regex:kt_attn --section WarpStateStats --section SchedulerStats --section Occupancy --section SpeedOfLight --print-details all"
for q in 8 1; do
  timeout 45 $NC --launch-count 1 python3 tests/device/bench_attn.py --db out/ab/c5.ktdb --lens equal --rounds 1 --launches 1 --max-launches 1 --no-peers --q $q --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 > $R/ncu-q$q.txt 2>&1; echo "ncu q$q rc=$?"
done
grep -hE "kt_attn|Stall|Warp Cycles|Issued|Eligible|Achieved Occupancy|Duration|Memory Throughput|DRAM" $R/ncu-q*.txt | cut -c1-150 | head -60
tar czf $OUT/c8.tgz -C $OUT c8 && rm -rf $R

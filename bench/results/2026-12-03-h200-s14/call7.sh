#!/bin/sh
# Fourteenth session, device call 7 (data for the next session): cuDNN's SDPA decode kernel at
# 32/8/128 batch 8 32K under ncu (what reads at 97-98% of the ceiling where ours reads at 92-93%),
# call 4's sections, its kernel name matched by what it is not.
set -u
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
R=$OUT/c7; mkdir -p $R
gunzip -kf out/ab/base.ktdb.gz
NC="ncu --section WarpStateStats --section SchedulerStats --section Occupancy --section SpeedOfLight --section LaunchStats --section MemoryWorkloadAnalysis --print-details all"
timeout 200 $NC --kernel-name regex:'^(?!kt_|sm90_xmma_gemm_f64|.*elementwise|.*reduce|.*fill|.*copy|.*flush).*' --launch-count 6 python3 tests/device/bench_attn.py --db out/ab/base.ktdb --lens equal --rounds 1 --launches 1 --max-launches 1 --dtype bf16 --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768 > $R/ncu-cudnn-128.txt 2>&1; echo "ncu rc=$? $(el) s"
grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Warp Cycles Per Issued|Issued Warp|Eligible Warps|Achieved Occupancy|Registers Per|Grid Size|Block Size|Shared Memory Config|Stall (Long|Short|Wait|MIO|Barrier|Not Sel|Math)" $R/ncu-cudnn-128.txt | cut -c1-150 | head -80
tar czf $OUT/c7.tgz -C $OUT c7 && rm -rf $R
echo "done $(el) s"

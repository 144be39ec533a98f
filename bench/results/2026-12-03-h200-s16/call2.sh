#!/bin/sh
# Sixteenth session, device call 2: why DF is 7% slower (call 1). The SASS of the eager kernels and
# their DF twins (cuobjdump: CUDA's or Triton's bundled one), and ncu's warp states, scheduler and
# source counters of one launch each (6/1/256, 4096 tokens: pe's d256 BM128 BN64 NW8 DF 0 then
# pd64's DF 1, bench_prefill.py --check-only launching each once).
set -u
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
R=$OUT/c2; mkdir -p $R
export PYTHONUNBUFFERED=1
TB=$(python3 -c "import triton, os; print(os.path.join(os.path.dirname(triton.__file__), 'backends/nvidia/bin'))" 2>/dev/null)
for d in /usr/local/cuda/bin $TB; do [ -x $d/cuobjdump ] && CO=$d/cuobjdump && break; done
echo "cuobjdump: ${CO:-none}"
for f in out/ab2/*.cubin; do ${CO:-false} -sass $f > $R/$(basename $f .cubin).sass 2>&1; done
ls -la $R | head
NC="ncu --section WarpStateStats --section SchedulerStats --section SpeedOfLight --section ComputeWorkloadAnalysis --section SourceCounters --print-details all"
timeout 240 $NC --kernel-name regex:'^kt_attn_prefill' --launch-count 2 python3 tests/device/bench_prefill.py --lib out/lib/libktrt.so --check-only \
  --db out/ab1/pe.ktdb --ab d64=out/ab1/pd64.ktdb --geom 6/1/256 --tokens 4096 > $R/ncu.txt 2>&1; echo "ncu rc=$? $(el) s"
grep -E "^  kt_|Duration|Warp Cycles Per Issued|Issue Slots Busy|Issued Warp|Eligible Warps|No Eligible|Executed Ipc|SM Busy|Stall|Tensor|pipe" $R/ncu.txt | cut -c1-160 | head -80
tar czf $OUT/c2.tgz -C $OUT c2 && rm -rf $R
echo "done $(el) s"

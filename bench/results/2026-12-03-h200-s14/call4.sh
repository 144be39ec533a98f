#!/bin/sh
# Fourteenth session, device call 4 (data for the next session, no change): ncu of the fp8 pick at
# 16/2/256 batch 8 32K (pipes, warp states, per-opcode counts: what bounds the register form's
# issue) and of 32/8/128 batch 8 32K, ours (KD BN32 NW4 OB 4) beside cuDNN's SDPA kernel (memory
# throughput and warp states: why cuDNN reads at 97% of the ceiling and we at 92%).
set -u
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
R=$OUT/c4; mkdir -p $R
gunzip -kf out/ab/t14.ktdb.gz
DB=out/ab/t14.ktdb
PIPES=sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fp16.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sass__inst_executed_per_opcode
NC="ncu --section WarpStateStats --section SchedulerStats --section Occupancy --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --metrics $PIPES --print-metric-instances details --print-details all"
timeout 120 $NC --kernel-name regex:kt_attn --launch-count 1 python3 tests/device/bench_attn.py --db $DB --lens equal --rounds 1 --launches 1 --max-launches 1 --no-peers --dtype bf16_e4m3 --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 > $R/ncu-fp8.txt 2>&1; echo "ncu fp8 rc=$? $(el) s"
timeout 120 $NC --kernel-name regex:kt_attn --launch-count 1 python3 tests/device/bench_attn.py --db $DB --lens equal --rounds 1 --launches 1 --max-launches 1 --no-peers --dtype bf16 --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 > $R/ncu-bf16-256.txt 2>&1; echo "ncu bf16 d256 rc=$? $(el) s"
timeout 150 $NC --kernel-name regex:'kt_attn|cudnn|fmha|sdpa|xmma' --launch-count 4 python3 tests/device/bench_attn.py --db $DB --lens equal --rounds 1 --launches 1 --max-launches 1 --dtype bf16 --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768 > $R/ncu-128.txt 2>&1; echo "ncu 32/8/128 rc=$? $(el) s"
grep -hE "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Memory Throughput|Warp Cycles Per Issued|Issued Warp|Eligible Warps|Achieved Occupancy|pipe_|Stall (Long|Short|Wait|MIO|Barrier|LG|Not Sel|Math|Dispatch)" $R/ncu-*.txt | cut -c1-150 | head -120
tar czf $OUT/c4.tgz -C $OUT c4 && rm -rf $R
echo "done $(el) s"

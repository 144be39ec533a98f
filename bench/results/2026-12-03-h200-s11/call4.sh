#!/bin/sh
# Eleventh session, device call 4: where speculative decode's q 8 rows and d256 prefill spend their
# time, for the next design (the ring and the 16-bit partials both failed to move them): ncu on the
# tuned picks of call 2's database (16/2/256 batch 8 32K q 1 and q 8; prefill 16/2/256 4K against
# flash and cuDNN): issue, stalls, tensor pipe, LDS wavefronts and bank conflicts; and their SASS.
set -u
ROOT=$(pwd)
t0=$(date +%s)
export LD_LIBRARY_PATH="$ROOT/out/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$ROOT/out/device/bin:$PATH:/usr/local/cuda/bin"
DB=out/device/ktune.ktdb
[ -f $DB ] || gunzip -k $DB.gz
D=$OUT/diag; mkdir -p $D
MET=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio,smsp__average_warp_latency_issue_stalled_mio_throttle.ratio,smsp__average_warp_latency_issue_stalled_not_selected.ratio,smsp__average_warp_latency_issue_stalled_selected.ratio,smsp__average_warp_latency_issue_stalled_lg_throttle.ratio,smsp__average_warp_latency_issue_stalled_dispatch_stall.ratio
MET2=gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,smsp__inst_executed_op_ldsm.sum,smsp__inst_executed_op_shared_ld.sum
BA="python3 tests/device/bench_attn.py --db $DB --lens equal --rounds 1 --launches 1 --max-launches 1"
BP="python3 tests/device/bench_prefill.py --db $DB --rounds 1 --launches 1"
nc() { tag=$1; met=$2; n=$3; shift 3; timeout 120 ncu --kernel-name regex:'kt_attn|cudnn|flash|fmha|sdpa|Kernel' --launch-count $n --metrics $met "$@" > $D/ncu-$tag.txt 2>&1; echo "ncu $tag rc=$? $(( $(date +%s) - t0 )) s"; }
nc q8 $MET 4 $BA --no-peers --dtype bf16 --d 256 --g 8 --hkv 2 --q 1,8 --batch 8 --ctx 32768
nc q8-lds $MET2 4 $BA --no-peers --dtype bf16 --d 256 --g 8 --hkv 2 --q 1,8 --batch 8 --ctx 32768
nc prefill $MET 3 $BP --geom 16/2/256 --tokens 4096
nc prefill-lds $MET2 3 $BP --geom 16/2/256 --tokens 4096
python3 - $DB $D <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
names = ['kt_attn_prefill_bf16_d256_bm64_bn64_nw4_wd1_ql1_st1_segmax128', 'kt_attn_prefill_bf16_d256_bm128_bn32_nw8_wd1_ql0_st2_segmax128',
         'kt_attn_decode_bf16_d256_mt1_bn16_nw4_segmax128_re1_kd1_st1']
for n in names:
    r = c.execute("select code from kernel where name = ? and target = 'sm_90a'", (n,)).fetchone()
    if r and r[0]: open(sys.argv[2] + '/' + n + '.cubin', 'wb').write(r[0])
PY
for f in $D/*.cubin; do cuobjdump -sass $f > ${f%.cubin}.sass 2>&1; rm -f $f; done
for f in $D/*.sass; do python3 bench/results/2026-12-02-h200-ab-17/sassloops.py $f; done > $D/sass-loops.txt 2>&1
for f in $D/ncu-*.txt; do echo "== $f"; grep -E "kt_attn|flash|cudnn|fmha|Kernel|duration|issue_active|tensor|wavefronts|conflicts|stalled_(barrier|long|short|mio|math|wait)" $f | head -60 | cut -c1-150; done
tar czf $OUT/diag.tgz -C $OUT diag && rm -rf $D
echo "all done $(( $(date +%s) - t0 )) s"

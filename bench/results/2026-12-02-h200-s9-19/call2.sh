#!/bin/sh
# Ninth session, device call 2, on call 1's swept database (its code restored): ktrt_check, the
# check grid and the issue's timing grid, then ncu on the tuned picks (instructions a key, issue,
# DRAM, stalls, the reduce's share at batch 1) and the SASS of those picks.
set -u
ROOT=$(pwd)
t0=$(date +%s)
KT_DEVICE_STEPS=ktrt,attncheck,attnbench OUT=$OUT/bench sh tests/device/run_all.sh | tail -12
echo "bench $(( $(date +%s) - t0 )) s"
tar czf $OUT/bench.tgz -C $OUT bench && rm -rf $OUT/bench
export LD_LIBRARY_PATH="$ROOT/out/device/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$ROOT/out/device/bin:$PATH:/usr/local/cuda/bin"
D=$OUT/diag; mkdir -p $D
DB=out/device/ktune.ktdb
MET=gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__occupancy_limit_registers,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio,smsp__average_warp_latency_issue_stalled_mio_throttle.ratio,smsp__average_warp_latency_issue_stalled_not_selected.ratio,smsp__average_warp_latency_issue_stalled_selected.ratio,smsp__average_warp_latency_issue_stalled_lg_throttle.ratio,smsp__average_warp_latency_issue_stalled_no_instruction.ratio
B="python3 tests/device/bench_attn.py --db $DB --lens equal --rounds 1 --launches 1 --max-launches 1"
nc() { tag=$1; shift; timeout 90 ncu --kernel-name regex:'kt_attn|cudnn|flash|fmha|sdpa|Kernel' --launch-count ${NC_COUNT:-8} --metrics $MET $B "$@" > $D/ncu-$tag.txt 2>&1; echo "ncu $tag rc=$? $(( $(date +%s) - t0 )) s"; }
nc d128-b8-32k --dtype bf16 --d 128 --g 4 --hkv 8 --q 1 --batch 8 --ctx 32768
nc d256-b8-32k --dtype bf16,bf16_e4m3 --d 256 --g 8 --hkv 2 --q 1 --batch 8 --ctx 32768
nc d256-b1-32k --dtype bf16 --d 256 --g 6 --hkv 1 --q 1 --batch 1 --ctx 32768
NC_COUNT=4 nc d256-q4-b8-32k --no-peers --dtype bf16 --d 256 --g 8 --hkv 2 --q 4 --batch 8 --ctx 32768
python3 - $DB $D <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rows = c.execute("""select distinct s.kernel, k.code from selection s join kernel k on k.name = s.kernel and k.target = s.target
  where s.problem_key like 'attn_decode %' and (s.problem_key like '%q<=1 batch<=8 ctx<=32768' or s.problem_key like '%g=6 hkv=1%q<=1 batch<=1 ctx<=32768' or s.problem_key like '%q<=4 batch<=8 ctx<=32768')""").fetchall()
for name, code in rows:
    if code: open(sys.argv[2] + '/' + name + '.cubin', 'wb').write(code)
print(len(rows), 'cubins')
PY
for f in $D/*.cubin; do cuobjdump -sass $f > ${f%.cubin}.sass 2>&1; rm -f $f; done
for f in $D/*.sass; do python3 bench/results/2026-12-02-h200-ab-17/sassloops.py $f; done > $D/sass-loops.txt 2>&1
tar czf $OUT/diag.tgz -C $OUT diag && rm -rf $D
echo "all done $(( $(date +%s) - t0 )) s"

#!/bin/sh
# Thirty-eighth session, device call Q (~5 minutes, any card). The law's form bt64 bv16 nw8 pf4
# only, each launch's device time, same rounds: out/s38/x38e.ktdb.xz (_wy's transposes without bank
# conflicts, _wy's and _out's products a strip a warp, the state pass's decay off its chain and its
# L2 prefetch two chunks ahead) against s37's build (out/s40b/x.ktdb.xz) on the issue's rows; then
# x38e against x38d (the same without the L2 prefetch) at 16K; then Nsight on x38e's _wy, _out and
# state pass (shared-memory wavefronts and conflicts among the tables), the state pass's and _wy's
# SASS with stall samples. Carry out/lib out/device out/s38 out/s40b. $OUT/q1.tgz.
set -u
. tests/device/env.sh
call_begin ${N:-q1}
nvidia-smi --query-gpu=name --format=csv,noheader
xz -dc out/s40b/x.ktdb.xz > $W/old.ktdb
xz -dc out/s38/${NEW:-x38e}.ktdb.xz > $W/new.ktdb
xz -dc out/s38/x38d.ktdb.xz > $W/d.ktdb
prefill_check new
timeout 160 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/new.ktdb --ab $W/old.ktdb --profile \
    --rounds 7 --rows ${ROWS:-1x16384/8,1x65536/8,1x16384/16,8x2048/8} > $R/ab.log 2>&1
echo "ab rc=$? $(el)"; grep -E "^[0-9]+x|--ab|wrong|refused" $R/ab.log | cut -c1-120
grep -E "kernel" $R/ab.log | sed 's/kt_gdn_prefill_[a-z0-9]*_vk[01]_dk[0-9]*_dv[0-9]*_//' | cut -c1-90
timeout 70 python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/new.ktdb --ab $W/d.ktdb --profile \
    --rounds 7 --rows 1x16384/8,1x16384/16 > $R/ab-d.log 2>&1
echo "ab (d: no L2 prefetch) rc=$? $(el)"; grep -E "^[0-9]+x|--ab|wrong|refused" $R/ab-d.log | cut -c1-120
grep -E "pf4 " $R/ab-d.log | sed 's/kt_gdn_prefill_[a-z0-9]*_vk[01]_dk[0-9]*_dv[0-9]*_//' | cut -c1-90
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
export KT_GDNP_PARTS=1
B="python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/new.ktdb --rows 1x16384/8 --rounds 1 --launches 1"
left() { [ $(( $(date +%s) - t0 )) -lt $1 ]; }   # time left for a step (the call ends by ~570 s)
for k in _wy _out pf4; do
    left 480 || break
    timeout 70 $NCU --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
        --section InstructionStats --section Occupancy --section MemoryWorkloadAnalysis \
        --section MemoryWorkloadAnalysis_Tables --section LaunchStats --page details -k regex:"$k\$" -c 1 $B \
        > $R/ncu$k.txt 2>&1; echo "ncu $k rc=$? $(el)"
    grep -E "Duration|Executed Ipc A|Warp Cycles Per Issued|Achieved Occ|L1/TEX Hit|Memory Throughput|DRAM Throughput|Bank|Stall" $R/ncu$k.txt | head -14
done
for k in pf4 _wy; do
    left 500 || break
    timeout 70 $NCU --clock-control none --section SourceCounters --page source --print-source sass -k regex:"$k\$" -c 1 $B \
        > $R/ncu-sass$k.txt 2>&1; echo "ncu sass $k rc=$? $(el)"
done
gzip -9 $R/*.txt
call_end ${N:-q1}

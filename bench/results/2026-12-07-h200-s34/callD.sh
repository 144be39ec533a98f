#!/bin/sh
# Thirty-fourth session, device call D (~6 minutes; replaces calls A and BC, never started: the tool
# refused every start until then). 1. gdn_check's vk 0 chains on out/s34 (the Qwen3-Next tp 4 build
# with the OB forms' L2 prefetch). 2. Every decode row of the issue, s34 against s33 in the same
# rounds (the prefetch's A/B on the law's picks; on an H200 the bar's numbers). 3. The 4-token form:
# s33's MT 8 OB 2 kpt 8 against kpt 16, each alone, batch 32. 4. Nsight on the prefill's state pass
# at 16K x hv 8: the key-unsplit BV 64 NW 4 PF 1 (~3 us a chunk in the sweep) against BV 16 NW 8
# PF 4 (1.17 us): why a warp holding all keys is slow. Carry out/lib out/device out/s33 out/s34.
# $OUT/d1.tgz.
set -u
. tests/device/env.sh
call_begin d1
nvidia-smi --query-gpu=name --format=csv,noheader
K=tests/device/keep.py
xz -dc out/s33/all.ktdb.xz > "$W/s33.ktdb"
xz -dc out/s34/all.ktdb.xz > "$W/s34.ktdb"
decode_check s34
mkdir -p $R/rows $R/k8
OUT=$R/rows timeout 170 python3 tests/device/bench_gdn.py --lib $L --db $W/s34.ktdb --ab $W/s33.ktdb --rounds 7 \
    --hv 8,32 --batch 1,32,128 --tokens 1,4 --regime hot,cold > $R/bench-rows.log 2>&1
echo "bench rows rc=$? $(el)"; grep -E "^ +[0-9]|--ab|ceilings" $R/bench-rows.log | cut -c1-150
python3 $K "$W/s33.ktdb" "$W/k8.ktdb" gdn_decode MT=8 OB=2 KPT=8 BV=128 > /dev/null
python3 $K "$W/s33.ktdb" "$W/k16.ktdb" gdn_decode MT=8 OB=2 KPT=16 BV=128 > /dev/null
OUT=$R/k8 timeout 50 python3 tests/device/bench_gdn.py --lib $L --db $W/k8.ktdb --ab $W/k16.ktdb --rounds 7 \
    --hv 8,32 --batch 32 --tokens 4 --regime hot,cold > $R/bench-k8.log 2>&1
echo "bench k8 rc=$? $(el)"; grep -E "^ +[0-9]|--ab" $R/bench-k8.log | cut -c1-150
for s in "w BV=64 NW=4 PF=1" "n BV=16 NW=8 PF=4"; do
    set -- $s; python3 $K $W/s34.ktdb $W/$1.ktdb gdn_prefill BT=64 $2 $3 $4 > /dev/null || echo "keep $s failed"
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for x in w n; do
    B="python3 tests/device/bench_gdn_prefill.py --lib $L --db $W/$x.ktdb --rows 1x16384/8 --rounds 1 --launches 1"
    timeout 80 $NCU --clock-control none --section SourceCounters --section WarpStateStats --section Occupancy \
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section SchedulerStats --page details \
        -k regex:"pf[14]\$" -c 1 $B > $R/ncu-$x.txt 2>&1; echo "ncu $x rc=$? $(el)"
    grep -E "Duration|Issued Ipc|Warp Cycles Per Issued|Mem Busy|Registers Per|Achieved Occ|Stall|Shared" $R/ncu-$x.txt | head -16
done
gzip -9 $R/*.txt 2>/dev/null
call_end d1

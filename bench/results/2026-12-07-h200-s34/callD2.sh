#!/bin/sh
# Thirty-fourth session, device call D2 (~4 minutes; replaces call D, never started: refused). On
# out/s35 = the decode forms of the Qwen3-Next tp 4 build in both state layouts, with the PF axis
# (the OB forms' L2 prefetch of the state of the block `ahead` on). 1. gdn_check's chains (vk 0 and
# vk 1). 2. Every decode row in the [.., K, V] layout, s35 against s33 in the same rounds (the
# prefetch's A/B on the law's picks; on an H200 the bar's numbers). 3. The deployed K-last layout
# (vLLM since #33291) at hv 32: s35 against its PF 0 forms alone. 4. The 4-token form: s33's MT 8
# OB 2 kpt 8 against kpt 16, batch 32 x hv 8. (Nsight on the prefill's key-unsplit state pass was
# cut: the session's device time ran down on refused starts.) Carry out/lib out/device out/s33
# out/s35.
# $OUT/d2.tgz.
set -u
. tests/device/env.sh
call_begin d2
nvidia-smi --query-gpu=name --format=csv,noheader
K=tests/device/keep.py
xz -dc out/s33/all.ktdb.xz > "$W/s33.ktdb"
xz -dc out/s35/dec.ktdb.xz > "$W/s35.ktdb"
python3 $K "$W/s35.ktdb" "$W/s35nopf.ktdb" gdn_decode PF=0 > /dev/null
decode_check s35
mkdir -p $R/rows $R/klast $R/k8
OUT=$R/rows timeout 140 python3 tests/device/bench_gdn.py --lib $L --db $W/s35.ktdb --ab $W/s33.ktdb --vk 0 --rounds 5 \
    --hv 8,32 --batch 1,32,128 --tokens 1,4 --regime hot,cold > $R/bench-rows.log 2>&1
echo "bench rows rc=$? $(el)"; grep -E "^ +[0-9]|--ab|ceilings" $R/bench-rows.log | cut -c1-150
OUT=$R/klast timeout 60 python3 tests/device/bench_gdn.py --lib $L --db $W/s35.ktdb --ab $W/s35nopf.ktdb --vk 1 \
    --rounds 5 --hv 32 --batch 1,128 --tokens 1 --regime hot,cold > $R/bench-klast.log 2>&1
echo "bench k-last rc=$? $(el)"; grep -E "^ +[0-9]|--ab|layout" $R/bench-klast.log | cut -c1-150
python3 $K "$W/s33.ktdb" "$W/k8.ktdb" gdn_decode MT=8 OB=2 KPT=8 BV=128 > /dev/null
python3 $K "$W/s33.ktdb" "$W/k16.ktdb" gdn_decode MT=8 OB=2 KPT=16 BV=128 > /dev/null
OUT=$R/k8 timeout 35 python3 tests/device/bench_gdn.py --lib $L --db $W/k8.ktdb --ab $W/k16.ktdb --vk 0 --rounds 7 \
    --hv 8 --batch 32 --tokens 4 --regime hot,cold > $R/bench-k8.log 2>&1
echo "bench k8 rc=$? $(el)"; grep -E "^ +[0-9]|--ab" $R/bench-k8.log | cut -c1-150
gzip -9 $R/*.txt 2>/dev/null
call_end d2

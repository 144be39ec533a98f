#!/bin/sh
# Thirty-fifth session, device call E1 (~4 minutes). out/s36 = the decode forms of the Qwen3-Next
# tp 4 build at both state layouts (PF axis, NW 16's whole-head forms), HEAD's template. 1. gdn_check's
# chains on the law's picks (both layouts), on the PF 1 forms alone (both layouts) and on the NW 16
# forms alone (K-last: sm_90a builds NW 16 only there). 2. The prefetch's A/B: PF 1 forms against
# PF 0 in the same rounds, hv 32 x batch 32 / 128, one token, both layouts. 3. NW 16 against the
# law's picks (BV 32 split heads at batch 1), K-last, hv 8 / 32, batch 1 / 8, 1 and 4 tokens.
# 4. The KT_GDN_TRACE phases of batch 1 x hv 8 (NW 16, BV 32). Carry out/lib out/device out/s36.
# $OUT/e1.tgz.
set -u
. tests/device/env.sh
call_begin e1
nvidia-smi --query-gpu=name --format=csv,noheader
K=tests/device/keep.py
xz -dc out/s36/dec.ktdb.xz > "$W/s36.ktdb"
python3 $K "$W/s36.ktdb" "$W/pf1.ktdb" gdn_decode PF=1
python3 $K "$W/s36.ktdb" "$W/pf0.ktdb" gdn_decode PF=0
python3 $K "$W/s36.ktdb" "$W/nw16.ktdb" gdn_decode NW=16
decode_check s36
decode_check pf1
timeout 40 python3 tests/device/gdn_check.py --lib "$L" --db "$W/nw16.ktdb" --vk 1 > "$R/check-nw16.log" 2>&1
echo "decode check (nw16, vk 1) rc=$? $(el)"; grep -E "gdn_check:|FAIL" "$R/check-nw16.log" | head -4 | cut -c1-200
for vk in 0 1; do
    mkdir -p $R/pf$vk
    OUT=$R/pf$vk timeout 50 python3 tests/device/bench_gdn.py --lib $L --db $W/pf1.ktdb --ab $W/pf0.ktdb --vk $vk \
        --rounds 5 --hv 32 --batch 32,128 --tokens 1 --regime cold,hot > $R/bench-pf$vk.log 2>&1
    echo "bench pf vk$vk rc=$? $(el)"; grep -E "^ +[0-9]|--ab|ceilings" $R/bench-pf$vk.log | cut -c1-150
done
mkdir -p $R/nw16
OUT=$R/nw16 timeout 80 python3 tests/device/bench_gdn.py --lib $L --db $W/nw16.ktdb --ab $W/s36.ktdb --vk 1 --rounds 5 \
    --hv 8,32 --batch 1,8 --tokens 1,4 --regime hot,cold > $R/bench-nw16.log 2>&1
echo "bench nw16 rc=$? $(el)"; grep -E "^ +[0-9]|--ab|ceilings" $R/bench-nw16.log | cut -c1-150
# where batch 1's step goes (KT_GDN_TRACE builds, out/s36/trace.ktdb.xz): NW 16 against the BV 32
# forms the law takes, hv 8, K-last; and BV 32 at [.., K, V] (the s30 trace's layout)
xz -dc out/s36/trace.ktdb.xz > "$W/tr.ktdb"
python3 $K "$W/tr.ktdb" "$W/tr16.ktdb" gdn_decode NW=16 > /dev/null
python3 $K "$W/tr.ktdb" "$W/tr32.ktdb" gdn_decode BV=32 > /dev/null
for x in "tr16 1" "tr32 1" "tr32 0"; do
    set -- $x
    timeout 30 python3 tests/device/trace_gdn.py $L $W/$1.ktdb 8 1 $2 > $R/trace-$1-vk$2.log 2>&1
    echo "trace $1 vk$2 rc=$? $(el)"; cat $R/trace-$1-vk$2.log | cut -c1-150
done
gzip -9 $R/*.txt 2>/dev/null
call_end e1

#!/bin/sh
# Thirty-fourth session, device call D3 (~2 minutes: D2 cut to what 434 s of device time allows
# after refused starts). On out/s35 (the decode forms in both layouts with the PF axis): gdn_check's
# chains; the prefetch's A/B where it acts (hv 32 x batch 32 and 128, 1 token, [.., K, V],
# s35 against s33 in the same rounds); the K-last batch-128 row against s35's PF 0 forms. Carry
# out/lib out/device out/s33 out/s35. $OUT/d3.tgz.
set -u
. tests/device/env.sh
call_begin d3
nvidia-smi --query-gpu=name --format=csv,noheader
K=tests/device/keep.py
xz -dc out/s33/all.ktdb.xz > "$W/s33.ktdb"
xz -dc out/s35/dec.ktdb.xz > "$W/s35.ktdb"
python3 $K "$W/s35.ktdb" "$W/s35nopf.ktdb" gdn_decode PF=0 > /dev/null
decode_check s35
mkdir -p $R/rows $R/klast
OUT=$R/rows timeout 60 python3 tests/device/bench_gdn.py --lib $L --db $W/s35.ktdb --ab $W/s33.ktdb --vk 0 --rounds 5 \
    --hv 32 --batch 32,128 --tokens 1 --regime cold,hot > $R/bench-rows.log 2>&1
echo "bench rows rc=$? $(el)"; grep -E "^ +[0-9]|--ab|ceilings" $R/bench-rows.log | cut -c1-150
OUT=$R/klast timeout 40 python3 tests/device/bench_gdn.py --lib $L --db $W/s35.ktdb --ab $W/s35nopf.ktdb --vk 1 \
    --rounds 5 --hv 32 --batch 128 --tokens 1 --regime cold,hot > $R/bench-klast.log 2>&1
echo "bench k-last rc=$? $(el)"; grep -E "^ +[0-9]|--ab|layout" $R/bench-klast.log | cut -c1-150
call_end d3

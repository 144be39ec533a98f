#!/bin/sh
# Thirty-fourth session, device call BC (~4 minutes). B: the 4 / 1 token bar's form at batch 32:
# s33's database as built (1 and 4 tokens on the law's picks), then its two MT 8 OB 2 forms (bv128
# nw8, kpt 8 against kpt 16), each alone among the decode forms (keep.py), same rounds, hot and
# cold, hv 8 and 32. C: the OB forms' L2 prefetch of the state of the block `ahead` on (out/s34:
# the sm_90a OB 2 PS 0 forms rebuilt with it) against s33's, both kept to bv128 nw8 kpt16 OB 2,
# at batch 128 and 32 x hv 32 (batch 32 x hv 8: one wave, no block to prefetch for: the control),
# 1 and 4 tokens, cold and hot; gdn_check on the rebuilt forms (vk 0 and vk 1). Carry out/lib
# out/device out/s33 out/s34. $OUT/bc1.tgz.
set -u
. tests/device/env.sh
call_begin bc1
nvidia-smi --query-gpu=name --format=csv,noheader
db_unpack out/s33/all.ktdb.xz
mv "$DB" "$W/s33.ktdb"
xz -dc out/s34/pf.ktdb.xz > "$W/pfall.ktdb"
python3 tests/device/keep.py "$W/s33.ktdb" "$W/k8.ktdb" gdn_decode MT=8 OB=2 KPT=8 BV=128
python3 tests/device/keep.py "$W/s33.ktdb" "$W/k16.ktdb" gdn_decode MT=8 OB=2 KPT=16 BV=128
python3 tests/device/keep.py "$W/s33.ktdb" "$W/old.ktdb" gdn_decode OB=2 PS=0 KPT=16 BV=128
python3 tests/device/keep.py "$W/pfall.ktdb" "$W/pf.ktdb" gdn_decode OB=2 PS=0 KPT=16 BV=128
decode_check pfall
mkdir -p $R/law $R/k8 $R/pf
OUT=$R/law timeout 50 python3 tests/device/bench_gdn.py --lib $L --db $W/s33.ktdb --rounds 5 \
    --hv 8,32 --batch 32 --tokens 1,4 --regime hot,cold > $R/bench-law.log 2>&1
echo "bench law rc=$? $(el)"; grep -E "^ +[0-9]|ceilings" $R/bench-law.log | cut -c1-150
OUT=$R/k8 timeout 50 python3 tests/device/bench_gdn.py --lib $L --db $W/k8.ktdb --ab $W/k16.ktdb --rounds 7 \
    --hv 8,32 --batch 32 --tokens 4 --regime hot,cold > $R/bench-k8.log 2>&1
echo "bench k8 rc=$? $(el)"; grep -E "^ +[0-9]|--ab|ceilings" $R/bench-k8.log | cut -c1-150
OUT=$R/pf timeout 100 python3 tests/device/bench_gdn.py --lib $L --db $W/pf.ktdb --ab $W/old.ktdb --rounds 7 \
    --hv 8,32 --batch 32,128 --tokens 1,4 --regime cold,hot > $R/bench-pf.log 2>&1
echo "bench pf rc=$? $(el)"; grep -E "^ +[0-9]|--ab|ceilings" $R/bench-pf.log | cut -c1-150
call_end bc1

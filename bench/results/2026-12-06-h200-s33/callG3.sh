#!/bin/sh
# Thirty-third session, device call G3 (~2.5 minutes; calls G / G2 were never started: the device
# tool refused every start this session and its time ran down): gdn_check's chains on the law's
# picks of out/s33 (the MT 8 OB 2 forms without spills among them) and the 4 / 1 token rows at
# batch 32 x hv 8, hot and cold, against out/d8 in the same rounds. Carry out/lib out/device out/d8
# out/s33. $OUT/g3.tgz.
set -u
. tests/device/env.sh
call_begin g3
nvidia-smi --query-gpu=name --format=csv,noheader
unpack d8
db_unpack out/s33/all.ktdb.xz
mv "$DB" "$W/s33.ktdb"
decode_check s33
OUT=$R timeout 70 python3 tests/device/bench_gdn.py --lib $L --db $W/s33.ktdb --ab $W/d8.ktdb --rounds 5 \
    --hv 8 --batch 32 --tokens 1,4 --regime hot,cold > $R/bench.log 2>&1
echo "bench rc=$? $(el)"; grep -E "^ +[0-9]|--ab|ceilings" $R/bench.log | cut -c1-150
call_end g3

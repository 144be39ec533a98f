#!/bin/sh
# Seventeenth session, device call 5: the fp8 d128 keys swept from nothing with every fp8 d128
# form (decode.hip's register form and rings, decode_ws.hip), batch 1-8 x 1K-128K at 32/8/128
# (f8_shapes.json's buckets); then the fp8 and bf16 rows at batch 8 32K and 128K on the tuned picks
# (the bf16 KD pick alone in the database: the law's), cuDNN and flash in the same runs, and ours
# without peers. The database comes back without code.
set -u
. tests/device/env.sh
S=bench/results/2026-12-04-h200-s17
DB=out/ab4/f8.ktdb
xz -dkf $DB.xz
R=$OUT/c5; mkdir -p $R
L=out/lib/libktrt.so
./tune --modelpath models/llama-3.1-8b --tp 1 --target sm_90a --db $DB --no-build --resume --only attn_decode \
    --shapes $S/f8_shapes.json --budget-min 4.5 > $R/sweep.log 2>&1; echo "sweep rc=$? $(el)"
grep -E "^\[" $R/sweep.log | cut -c1-200 | tail -40
tail -n 3 $R/sweep.log
B="python3 tests/device/bench_attn.py --lib $L --db $DB --q 1 --lens equal --rounds 15 --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768,131072"
timeout 120 $B --dtype bf16_e4m3,bf16 --tsv peers.tsv > $R/peers.log 2>&1; echo "peers rc=$? $(el)"
timeout 80 $B --dtype bf16_e4m3,bf16 --no-peers --tsv alone.tsv > $R/alone.log 2>&1; echo "alone rc=$? $(el)"
grep -hE "^bf16|^   (ours|cudnn|flash)|exact|bucket|law " $R/peers.log $R/alone.log | cut -c1-160
sh tests/device/return_db.sh $DB $OUT > $R/return.log 2>&1; echo "return rc=$? $(el)"
cp $OUT/*.tsv $R/ 2>/dev/null
tar czf $OUT/c5.tgz -C $OUT c5 && rm -rf $R
echo "done $(el)"

#!/bin/sh
# Sixteenth session, device call 5: call 3's database (on the machine) swept further on
# sweep2_shapes.json (32/8/128 bf16 and bf16_e4m3 to batch 8 and 128K; q 4 and q 8 at 16/2/256 to
# batch 8 and 32K), then those rows on the tuned picks; the database comes back without code.
set -u
. tests/device/env.sh
S=bench/results/2026-12-03-h200-s16
DB=out/ab3/c3.ktdb
[ -f $DB ] || { echo "no $DB: call 3's machine is gone"; exit 1; }
R=$OUT/c5; mkdir -p $R
./tune --modelpath models/llama-3.1-8b --tp 1 --target sm_90a --db $DB --no-build --resume --only attn_decode \
    --shapes $S/sweep2_shapes.json --budget-min 5.0 > $R/sweep.log 2>&1; echo "sweep rc=$? $(el)"
grep -E "^\[" $R/sweep.log | grep -E "batch<=8 ctx<=(32768|131072)" | cut -c1-220
tail -n 2 $R/sweep.log
B="timeout 110 python3 tests/device/bench_attn.py --db $DB --lens equal --rounds 11"
OUT=$R $B --tsv g-32-8-128.tsv --dtype bf16,bf16_e4m3 --d 128 --g 4 --hkv 8 --q 1 --batch 8 --ctx 32768,131072 > $R/g-32-8-128.log 2>&1; echo "32/8/128 rc=$? $(el)"
OUT=$R $B --tsv g-spec.tsv --dtype bf16 --d 256 --g 8 --hkv 2 --q 1,4,8 --batch 8 --ctx 32768 > $R/g-spec.log 2>&1; echo "spec rc=$? $(el)"
grep -h "|" $R/g-*.log | grep -E "^(bf16|fp16)" | cut -c1-150
tail -qn 1 $R/g-*.log
sh tests/device/return_db.sh $DB $OUT > $R/return.log 2>&1; echo "return rc=$? $(el)"
tar czf $OUT/c5.tgz -C $OUT c5 && rm -rf $R
echo "done $(el)"

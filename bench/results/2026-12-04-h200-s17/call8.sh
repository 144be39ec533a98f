#!/bin/sh
# Seventeenth session, device call 8: the two bars met at their edge in one run each, timed again.
# q 8 / q 1 at 16/2/256 batch 8 32K (q8.ktdb: prefill.hip BM64 BN64 NW4 and the decode KD pick),
# 21 rounds, twice; fp8 / bf16 at 32/8/128 batch 8 32K and 128K on call 5's tuned database (f8t)
# and on ring e's (e), 21 rounds, cuDNN and flash in the rotation.
set -u
. tests/device/env.sh
R=$OUT/c8; mkdir -p $R
L=out/lib/libktrt.so
xz -dkf out/ab7/f8t.ktdb.xz
for i in 1 2; do
  timeout 60 python3 tests/device/ab_attn.py --config q8=$L:out/ab7/q8.ktdb --rounds 21 --dtype bf16 --d 256 --g 8 --hkv 2 --q 1,8 --batch 8 --ctx 32768 --no-peers > $R/q8-$i.log 2>&1; echo "q8 $i rc=$? $(el)"
done
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us" $R/q8-*.log
B="python3 tests/device/bench_attn.py --lib $L --q 1 --lens equal --rounds 21 --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768,131072 --dtype bf16_e4m3,bf16"
timeout 150 $B --db out/ab7/f8t.ktdb --tsv f8t.tsv > $R/f8t.log 2>&1; echo "f8t rc=$? $(el)"
timeout 150 $B --db out/ab7/e.ktdb --tsv e.tsv > $R/e.log 2>&1; echo "e rc=$? $(el)"
grep -hE "^bf16|^   (ours|cudnn|flash)" $R/f8t.log $R/e.log
cp $OUT/*.tsv $R/ 2>/dev/null
tar czf $OUT/c8.tgz -C $OUT c8 && rm -rf $R
echo "done $(el)"

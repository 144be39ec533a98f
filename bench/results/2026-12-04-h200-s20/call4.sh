#!/bin/sh
# Twentieth session, device call 4 (bench/NOTES.md, "q 8's O rescale" and the prefill ratios paired
# a round): q 8's O rescale behind the vote (lzall / lzq: prefill.hip BM64 BN64 NW4 and BM128 BN64
# NW8 built with -DKT_LAZY_RESCALE=1): ab_attn.py q 8 and q 1 against all.ktdb's kernels,
# ratio_attn.py q 8 / q 1 on each; prefill against flash and cuDNN with the ratios paired a round
# (bench_prefill.py, the law among every bf16 d128 / d256 prefill variant), and prefill d256 with
# the lazy kernels as an A/B (--ab).
set -u
. tests/device/env.sh
R=$OUT/c4; mkdir -p $R
A=out/c20
for f in $A/*.ktdb.xz; do xz -dc $f > ${f%.xz}; done
L=$A/lib/libktrt.so
AB="timeout 120 python3 tests/device/ab_attn.py --config base=$L:$A/all.ktdb --config lazy=$L:$A/lzall.ktdb --rounds 21 --no-peers"
$AB --dtype bf16 --d 256 --g 8 --hkv 2 --q 8,1 --batch 8 --ctx 32768 > $R/ab-q8.log 2>&1; echo "ab q8 rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure" $R/ab-q8.log
for db in all lzall; do
timeout 90 python3 tests/device/ratio_attn.py --lib $L --db $A/$db.ktdb --rounds 41 --row q1=bf16,256,8,2,1,8,32768 --row q8=bf16,256,8,2,8,8,32768 --ratio q8/q1 > $R/r-$db.log 2>&1; echo "ratio $db rc=$? $(el)"
grep -h "/ q1" $R/r-$db.log
done
timeout 200 python3 tests/device/bench_prefill.py --lib $L --rounds 15 --db $A/all.ktdb --tsv pf.tsv > $R/pf.log 2>&1; echo "prefill rc=$? $(el)"
grep -hE "^bf16 |^   (ours|cudnn|flash)|^\(" $R/pf.log | cut -c1-150
timeout 150 python3 tests/device/bench_prefill.py --lib $L --rounds 11 --db $A/all.ktdb --ab lazy=$A/lzq.ktdb --geom 6/1/256,16/2/256,8/4/256 --tsv pfl.tsv > $R/pfl.log 2>&1; echo "prefill lazy rc=$? $(el)"
grep -hE "^bf16 |^   (ours|lazy|flash)" $R/pfl.log | cut -c1-150
tar czf $OUT/c4.tgz -C $OUT c4 && rm -rf $R
echo "done $(el)"

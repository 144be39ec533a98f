#!/bin/sh
# Nineteenth session, device call 1 (bench/NOTES.md, "The structure without the arithmetic"):
# ab_attn.py, the bf16 KD picks (base) against the same kernels built with -DKT_READ_ONLY (ro.patch:
# every K / V load, table read, barrier, partial and the reduce kept; S, the softmax and P V gone;
# the law given base's occupancy, so the same segments), on the unmet rows and a met one.
set -u
. tests/device/env.sh
R=$OUT/c1; mkdir -p $R
L=out/carry/lib/libktrt.so
AB="python3 tests/device/ab_attn.py --config base=$L:out/carry/base.ktdb --config ro=$L:out/carry/ro.ktdb --rounds 15 --dtype bf16"
timeout 100 $AB --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768,131072 --no-peers > $R/a.log 2>&1; echo "16/2 rc=$? $(el)"
timeout 120 $AB --d 256 --g 6 --hkv 1 --batch 1,8 --ctx 32768,131072 --no-peers > $R/b.log 2>&1; echo "6/1 rc=$? $(el)"
timeout 100 $AB --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768 > $R/c.log 2>&1; echo "32/8 rc=$? $(el)"
timeout 100 $AB --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 --no-peers --timeline --rounds 5 > $R/d.log 2>&1; echo "tl rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|timeline|refused|failure" $R/[abcd].log
tar czf $OUT/c1.tgz -C $OUT c1 && rm -rf $R
echo "done $(el)"

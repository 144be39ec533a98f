#!/bin/sh
# Nineteenth session, device call 4 (bench/NOTES.md, "What the pages cost"): ab_attn.py, the bf16 KD
# pick (base) and its read-only build (ro) on random block tables (serving) and ordered ones (each
# sequence's pages consecutive), block size 16 and 64; cuDNN on contiguous K / V in the 32/8/128 rows.
set -u
. tests/device/env.sh
R=$OUT/c4; mkdir -p $R
L=out/carry/lib/libktrt.so
AB="python3 tests/device/ab_attn.py --config base=$L:out/carry/base.ktdb --config ro=$L:out/carry/ro.ktdb --rounds 11 --dtype bf16"
for t in random ordered; do for bs in 16 64; do
timeout 60 $AB --table $t --bs $bs --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 --no-peers > $R/a-$t-$bs.log 2>&1; echo "16/2 $t $bs rc=$? $(el)"
timeout 60 $AB --table $t --bs $bs --d 256 --g 6 --hkv 1 --batch 8 --ctx 32768 --no-peers > $R/b-$t-$bs.log 2>&1; echo "6/1 $t $bs rc=$? $(el)"
timeout 60 $AB --table $t --bs $bs --d 128 --g 4 --hkv 8 --batch 8 --ctx 32768 > $R/c-$t-$bs.log 2>&1; echo "32/8 $t $bs rc=$? $(el)"
done; done
for f in $R/*.log; do echo "== $(basename $f)"; grep -hE "   [a-z0-9]+ +[0-9.]+ us|refused" $f; done
tar czf $OUT/c4.tgz -C $OUT c4 && rm -rf $R
echo "done $(el)"

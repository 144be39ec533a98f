#!/bin/sh
# Nineteenth session, device call 3 (bench/NOTES.md, "Bytes in flight"): ab_attn.py, the bf16 KD
# pick BN16 (base), its read-only build (ro), and BN32 NW4 real (b2: 222 registers, 2 blocks a
# unit) and read-only (r2: 128 registers, 4 blocks a unit, the law given 16 warps); then the
# contiguous reader's bound at 537 and 1074 MB.
set -u
. tests/device/env.sh
R=$OUT/c3; mkdir -p $R
L=out/carry/lib/libktrt.so
AB="python3 tests/device/ab_attn.py --config base=$L:out/carry/base.ktdb --config ro=$L:out/carry/ro.ktdb --config b2=$L:out/carry/b2.ktdb --config r2=$L:out/carry/r2.ktdb --rounds 11 --dtype bf16 --no-peers"
timeout 100 $AB --d 256 --g 8 --hkv 2 --batch 8 --ctx 32768 > $R/a.log 2>&1; echo "16/2 rc=$? $(el)"
timeout 120 $AB --d 256 --g 6 --hkv 1 --batch 8 --ctx 32768,131072 > $R/b.log 2>&1; echo "6/1 rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|refused" $R/[ab].log
for mb in 536.9 1073.7; do timeout 60 python3 bench/results/2026-12-04-h200-s19/reader_bound.py $mb > $R/rb$mb.log 2>&1; echo "rb $mb rc=$? $(el)"; done
cat $R/rb*.log
tar czf $OUT/c3.tgz -C $OUT c3 && rm -rf $R
echo "done $(el)"

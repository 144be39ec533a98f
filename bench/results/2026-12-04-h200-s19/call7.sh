#!/bin/sh
# Nineteenth session, device call 7 (bench/NOTES.md, "q 8 / q 1 after the start's prefetch"): q 1 and
# q 8 at 16/2/256 batch 8 32K, 21 rounds, twice; the databases hold prefill.hip's BM64 BN64 NW4
# (q 8's pick) and the decode KD pick as at the session's start (old) or as landed (new).
set -u
. tests/device/env.sh
R=$OUT/c7; mkdir -p $R
L=out/carry/lib/libktrt.so
for i in 1 2; do
  timeout 80 python3 tests/device/ab_attn.py --config old=$L:out/carry/q8_old.ktdb --config new=$L:out/carry/q8_new.ktdb --rounds 21 --dtype bf16 --d 256 --g 8 --hkv 2 --q 1,8 --batch 8 --ctx 32768 --no-peers > $R/q8-$i.log 2>&1; echo "q8 $i rc=$? $(el)"
done
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|   (old|new) +kt_" $R/q8-*.log
tar czf $OUT/c7.tgz -C $OUT c7 && rm -rf $R
echo "done $(el)"

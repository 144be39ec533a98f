#!/bin/sh
# Eighteenth session, device call 9 (bench/NOTES.md, "PF after the keys in flight"): ab_attn.py,
# the bf16 KD picks as at the session's start (base) against the PF twins in one database (pf:
# the law takes PF 1 where the blocks fill at most half the slots), batch 1, 2 and 8; the check
# grids on pf.
set -u
. tests/device/env.sh
R=$OUT/c9; mkdir -p $R
L=out/carry/lib/libktrt.so
AB="python3 tests/device/ab_attn.py --config base=$L:out/carry/base.ktdb --config pf=$L:out/carry/pf2.ktdb --rounds 11 --dtype bf16 --no-peers --batch 1,2,8 --ctx 4096,32768,131072"
timeout 120 $AB --d 256 --g 6 --hkv 1 > $R/a.log 2>&1; echo "6/1 rc=$? $(el)"
timeout 120 $AB --d 256 --g 8 --hkv 1 --batch 1 > $R/b.log 2>&1; echo "8/1 rc=$? $(el)"
timeout 120 $AB --d 256 --g 8 --hkv 2 > $R/c.log 2>&1; echo "16/2 rc=$? $(el)"
timeout 120 $AB --d 128 --g 4 --hkv 8 --batch 1,8 > $R/d.log 2>&1; echo "32/8 rc=$? $(el)"
grep -hE "^(bf16|fp16)|   [a-z0-9]+ +[0-9.]+ us|WRONG|refused|failure|_pf1" $R/[abcd].log
C="python3 tests/device/bench_attn.py --lib $L --db out/carry/pf2.ktdb --check-only"
timeout 100 $C --tsv k1.tsv --dtype bf16 --d 128,256 --g 6,8 --hkv 1 --q 1,3,8 --batch 1,2 --ctx 100,1500,5000,40000 --window 0,200 --sinks 0,1 --softcap 0,30 > $R/k1.log 2>&1; echo "k1 rc=$? $(el)"
timeout 100 $C --tsv k2.tsv --bs 64 --replay-lengths --dtype bf16 --d 256 --g 6 --hkv 1 --q 1,4 --batch 1,3,24 --ctx 40000,131072 --lens mixed --sinks 0,1 > $R/k2.log 2>&1; echo "k2 rc=$? $(el)"
tail -qn 1 $R/k*.log
grep -h "WRONG" $R/k*.log | head
grep -c "_pf1" $R/k*.log
cp $OUT/*.tsv $R/ 2>/dev/null
tar czf $OUT/c9.tgz -C $OUT c9 && rm -rf $R
echo "done $(el)"
